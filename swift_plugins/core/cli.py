"""What every task's command line shares: running a command, its errors, Ctrl-C, the ``score`` command.

A command's expected failures (every :class:`~.errors.PluginError`: bad data, bad values, paths it
cannot use) print one line and exit 2; Ctrl-C prints one line and exits 130, as a shell reports an
interrupted program, and SIGTERM (``kill``) does the same with 143: either unwinds the command, so its
worker processes end and no temporary file is left. Any other exception is a bug and keeps its traceback.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from .errors import OutputError, PluginError
from .files import FORMATS, check_outputs, distinct_inputs, write_rows, write_text
from .processes import Interrupted

__all__ = [
    "add_inference_command", "add_score_command", "int_at_least", "run_command", "run_parsed", "run_task_command",
    "writing",
]

INTERRUPTED = 130  # 128 + SIGINT


def int_at_least(minimum: int) -> Callable[[str], int]:
    """An argparse type: an integer >= ``minimum`` (argparse names it "integer" in its errors).

    >>> int_at_least(1)("3")
    3
    """

    def integer(text: str) -> int:
        value = int(text)
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be >= {minimum}, got {value}")
        return value

    return integer


@contextmanager
def writing(path: str | Path) -> Iterator[None]:
    """Turn an OSError of the block, which writes ``path``, into an :class:`OutputError` naming ``path``.

    >>> with writing("/dev/null/report.json"):
    ...     Path("/dev/null/report.json").write_text("{}")
    Traceback (most recent call last):
    ...
    swift_plugins.core.errors.OutputError: /dev/null/report.json: cannot write it (Not a directory)
    """
    try:
        yield
    except OSError as error:
        raise OutputError(path, error) from None


def add_inference_command(
    parent: argparse._SubParsersAction, name: str, help: str, task_type: Callable[[str], Any]
) -> argparse.ArgumentParser:
    """A subcommand that runs ``swift infer`` with a model on a task's rows: ``MODEL --task T`` (``task_type``
    reads a task, its docstring names them); flags after ``--`` go to swift infer."""
    command = parent.add_parser(
        name, help=help, epilog="Flags after -- go to swift infer, e.g. -- --model_type llama --template chatml"
    )
    command.add_argument("model", help="model folder, hub id, or swift checkpoint (full or LoRA)")
    command.add_argument("--task", type=task_type, required=True, help=task_type.__doc__)
    return command


def run_command(parser: argparse.ArgumentParser, argv: Sequence[str] | None = None) -> None:
    """Parse ``argv`` and run the chosen command with one-line errors (see :func:`run_parsed`)."""
    run_parsed(parser, parser.parse_args(argv))


def run_task_command(
    add_command: Callable[[argparse._SubParsersAction], argparse.ArgumentParser], argv: Sequence[str] | None = None
) -> None:
    """``python -m swift_plugins.<task> ARGS`` as ``python -m swift_plugins <task> ARGS``: the task's command alone."""
    parser = argparse.ArgumentParser(prog="python -m swift_plugins")
    task = add_command(parser.add_subparsers(dest="command", required=True)).prog.rsplit(" ", 1)[-1]
    run_command(parser, [task, *(sys.argv[1:] if argv is None else argv)])


def run_parsed(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Run ``args.run(args)``: a :class:`PluginError` exits 2, Ctrl-C 130 and SIGTERM 143, one line each; a bug
    raises."""
    command = " ".join([parser.prog, args.command, *filter(None, [getattr(args, "task_command", None)])])
    previous = signal.signal(signal.SIGTERM, _terminated)
    try:
        args.run(args)
    except KeyboardInterrupt as stop:
        print(f"{command}: interrupted", file=sys.stderr)
        sys.exit(getattr(stop, "status", INTERRUPTED))
    except PluginError as error:
        parser.exit(2, f"{command}: error: {error}\n")
    finally:
        signal.signal(signal.SIGTERM, previous)


def _terminated(signum: int, frame: object) -> None:
    raise Interrupted(signum)


def add_score_command(
    commands: argparse._SubParsersAction,
    load: Callable[[argparse.Namespace], list[Any]],
    score: Callable[[list[Any]], dict[str, Any]],
    format_report: Callable[[dict[str, Any]], str],
    record: Callable[[Any], dict[str, Any]],
) -> argparse.ArgumentParser:
    """Add ``score RESULTS... [--json] [--per-example]``: ``load(args)`` gives the samples."""

    def run(args: argparse.Namespace) -> None:
        out = args.json or args.results[0].with_suffix(".score.json")
        distinct_inputs(args.results)  # a file given twice would count its answers twice
        check_outputs([(out, (".json",)), (args.per_example, FORMATS)], inputs=args.results)
        samples = load(args)
        report = score(samples)
        print(format_report(report))
        write_text(json.dumps(report, indent=2) + "\n", out)
        print(f"\nwrote the report to {out}")
        if args.per_example:
            write_rows(map(record, samples), args.per_example)
            print(f"wrote {len(samples)} scored examples to {args.per_example}")

    command = commands.add_parser("score", help="score swift infer result files with the training rewards")
    command.add_argument("results", type=Path, nargs="+", help="result .jsonl files; several = several samples")
    command.add_argument("--json", type=Path, help="report path (default: first RESULTS with .score.json)")
    command.add_argument("--per-example", type=Path, help="write each scored sample here (.jsonl, .json or .parquet)")
    command.set_defaults(run=run)
    return command
