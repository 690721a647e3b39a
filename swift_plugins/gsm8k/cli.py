"""``python -m swift_plugins.gsm8k``: score ``swift infer`` results on GSM8K.

Run with ``--help`` after any command for its options.
"""

from __future__ import annotations

import argparse

from ..core.cli import add_score_command, run_command
from . import scoring

__all__ = ["build_parser", "main"]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m swift_plugins.gsm8k", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    add_score_command(
        commands,
        lambda args: scoring.load_samples(args.results),
        scoring.score_samples,
        scoring.format_report,
        scoring.sample_record,
    )
    return parser


def main(argv: list[str] | None = None) -> None:
    run_command(build_parser(), argv)
