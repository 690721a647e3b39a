"""``python -m swift_plugins countdown``: generate, audit, solve, score, SFT data.

``python -m swift_plugins.countdown`` is the same command. Run with ``--help`` after any command for its options.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from pathlib import Path

from tqdm import tqdm

from ..core.cli import add_score_command, run_task_command
from ..core.cli import int_at_least as _int_at_least
from ..core.errors import DataError
from ..core.files import FORMATS, check_outputs, split_paths, write_rows, write_text
from ..core.held_out import check_split, record_split
from ..core.splits import SPLIT_ROWS, split_rows
from . import scoring
from .data import read_columns

__all__ = ["add_command", "main"]

_JOBS = os.cpu_count() or 1


def _range(text: str) -> tuple[int, int]:
    """``A-B`` or ``A`` as an inclusive range."""
    match = re.fullmatch(r"\s*([0-9]+)\s*(?:-\s*([0-9]+)\s*)?", text)
    if match is None:
        raise argparse.ArgumentTypeError(f"expected A-B or A, got {text!r}")
    bounds = int(match[1]), int(match[2] or match[1])
    if bounds[0] > bounds[1]:
        raise argparse.ArgumentTypeError(f"empty range {text!r}")
    return bounds


def _generate(args: argparse.Namespace) -> None:
    from .generator import CountdownConfig, generate

    paths = split_paths(args.out, args.size, args.test_size, args.dev_size)
    check_split(args.out, paths)
    config = CountdownConfig(*args.count, *args.numbers, *args.targets)
    split_seed, order_seed = (args.seed, None) if args.split_seed is None else (args.split_seed, args.seed)
    total = args.size + args.dev_size + args.test_size
    found = generate(config, total, split_seed, jobs=args.jobs)
    rows = list(tqdm(found, total=total, unit="rows", desc="generate", disable=args.quiet))
    split = split_rows(rows, args.test_size, split_seed, args.dev_size, order_seed)
    for name, path in paths.items():
        write_rows(getattr(split, name), path)
        print(f"wrote {len(getattr(split, name))} {SPLIT_ROWS[name]} to {path}")
    record_split(paths, {name: len(getattr(split, name)) for name in paths})  # last: it vouches for the files above


def _audit(args: argparse.Namespace) -> None:
    from .audit import audit

    check_outputs([(args.json, (".json",)), (args.unsolvable_out, FORMATS)], inputs=[args.path])
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
        write_rows(bad, args.unsolvable_out)
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


def _sft_data(args: argparse.Namespace) -> None:
    from .cold_start import sft_rows
    from .data import check_row, read_rows

    check_outputs([(args.out, FORMATS)], inputs=[args.puzzles])
    rows = []
    for where, row in read_rows(args.puzzles):
        puzzle = check_row(row, where)
        try:
            rows.extend(sft_rows([puzzle]))
        except DataError as error:
            raise DataError(f"{where}: {error}") from None
    if not rows:
        raise DataError(f"{args.puzzles}: no puzzles in it, so no SFT rows to write")
    write_rows(rows, args.out)
    print(f"wrote {len(rows)} SFT rows to {args.out}")


def add_command(parent: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add ``countdown generate|audit|solve|score|sft-data`` to a command line's subcommands."""
    parser = parent.add_parser("countdown", help="Countdown data: generate, audit, solve, score, sft-data")
    commands = parser.add_subparsers(dest="task_command", required=True)

    gen = commands.add_parser("generate", help="write solvable, distinct Countdown rows (.jsonl, .json or .parquet)")
    gen.add_argument("--size", "--num", type=_int_at_least(0), required=True, help="training rows (--num: the same)")
    gen.add_argument("--seed", type=int, default=0, help="the puzzles drawn and held out; with --split-seed, only "
                     "the order of the training rows")
    gen.add_argument("--split-seed", type=int, help="the puzzles drawn and held out (default: --seed): the same "
                     "held-out files for every --seed")
    gen.add_argument("--out", type=Path, required=True, help="output .jsonl, .json or .parquet path")
    gen.add_argument(
        "--test-size",
        type=_int_at_least(0),
        default=0,
        help="held-out rows, chosen at random among the puzzles drawn, written beside OUT with .test before its "
        "suffix (x.jsonl: x.test.jsonl); with --size 0, to OUT itself",
    )
    gen.add_argument("--dev-size", type=_int_at_least(0), default=0, help="development rows for choosing settings, "
                     "held out as the test rows are, written beside OUT with .dev before its suffix (x.dev.jsonl)")
    gen.add_argument("--count", type=_range, default=(3, 4), help="how many numbers per puzzle, A-B (default 3-4)")
    gen.add_argument("--numbers", type=_range, default=(1, 99), help="range of the numbers (default 1-99)")
    gen.add_argument("--targets", type=_range, default=(1, 99), help="range of the targets (default 1-99)")
    gen.add_argument("--jobs", type=_int_at_least(1), default=_JOBS, help="worker processes (rows do not depend on it)")
    gen.set_defaults(run=_generate)

    aud = commands.add_parser("audit", help="solve every row of a jsonl/parquet file of nums/target")
    aud.add_argument("path", type=Path)
    aud.add_argument("--unsolvable-out", type=Path, help="write the unsolvable rows here (.jsonl, .json or .parquet)")
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

    sft = commands.add_parser("sft-data", help="turn generated puzzles into swift SFT rows with worked answers")
    sft.add_argument("puzzles", type=Path, help="puzzle rows with nums/target (e.g. a generate output file)")
    sft.add_argument("--out", type=Path, required=True, help="output .jsonl, .json or .parquet of messages rows")
    sft.set_defaults(run=_sft_data)

    for command in (gen, aud):
        command.add_argument("--quiet", action="store_true", help="no progress bar")
    return parser


def main(argv: list[str] | None = None) -> None:
    """``python -m swift_plugins.countdown ARGS``: ``python -m swift_plugins countdown ARGS``."""
    run_task_command(add_command, argv)
