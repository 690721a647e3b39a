"""``python -m swift_plugins gsm8k``: score ``swift infer`` results on GSM8K.

``python -m swift_plugins.gsm8k`` is the same command. Run with ``--help`` after any command for its options.
"""

from __future__ import annotations

import argparse

from ..core.cli import add_score_command, run_task_command
from . import scoring

__all__ = ["add_command", "main"]


def add_command(parent: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add ``gsm8k score`` to a command line's subcommands."""
    parser = parent.add_parser("gsm8k", help="GSM8K: score swift infer results")
    commands = parser.add_subparsers(dest="task_command", required=True)
    add_score_command(
        commands,
        lambda args: scoring.load_samples(args.results),
        scoring.score_samples,
        scoring.format_report,
        scoring.sample_record,
    )
    return parser


def main(argv: list[str] | None = None) -> None:
    """``python -m swift_plugins.gsm8k ARGS``: ``python -m swift_plugins gsm8k ARGS``."""
    run_task_command(add_command, argv)
