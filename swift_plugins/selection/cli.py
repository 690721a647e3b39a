"""``python -m swift_plugins select MODEL --task T --candidates ROWS --out SELECTED``: difficulty-targeted rows.

Prints the histogram of solve counts (the kept counts starred) and one line with how many rows were kept and what
the selection cost; flags after ``--`` go to ``swift infer`` (e.g. ``-- --model_type llama --template chatml``).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ..core.cli import add_inference_command, int_at_least, writing
from ..tools.evaluate import Sampling
from .band import Band
from .select import select_rows

__all__ = ["add_command"]


def _select(args: argparse.Namespace) -> None:
    band = Band.parse(args.samples, args.band)
    sampling = Sampling(args.samples, args.temperature, args.top_k, args.seed, args.top_p)
    with writing(args.out):
        selection = select_rows(
            args.model, args.candidates, args.out, task=args.task, band=band, sampling=sampling,
            held_out=args.held_out, limit=args.limit, max_new_tokens=args.max_new_tokens, system=args.system,
            extra=args.swift_args,
        )  # fmt: skip
    print(selection.summary())
    print(f"wrote {args.out} and {args.out.name}.selection.json ({args.out.name}.selection/: every answer)")


def add_command(parent: argparse._SubParsersAction, task_type: object) -> argparse.ArgumentParser:
    """Add ``select`` to a command line's subcommands; ``task_type`` reads ``--task``."""
    command = add_inference_command(
        parent, "select", "keep the training rows a model solves sometimes (N samples a row, a band of solve counts)",
        task_type,
    )  # fmt: skip
    command.add_argument("--candidates", type=Path, required=True, help="the task's training rows to choose from")
    command.add_argument("--out", type=Path, required=True, help="the kept rows (.jsonl, .json or .parquet)")
    command.add_argument("--limit", type=int_at_least(1), help="ask about the first LIMIT candidate rows only")
    command.add_argument("--samples", type=int_at_least(2), default=8, help="answers a row (default 8)")
    command.add_argument("--band", help="LEAST-MOST right answers a kept row has (default 1 to SAMPLES-1)")
    command.add_argument("--temperature", type=float, default=1.0, help="sampling temperature (default 1.0)")
    command.add_argument("--top-k", type=int_at_least(1), help="sample from the K likeliest tokens (default: all)")
    command.add_argument("--top-p", type=float, default=1.0, help="sample from the likeliest tokens holding this share")
    command.add_argument("--seed", type=int_at_least(0), default=0, help="sampling seed (default 0)")
    command.add_argument("--held-out", type=Path, nargs="+", default=(), help="held-out rows no candidate may share "
                         "(default: CANDIDATES' .dev and .test files, those that exist)")
    command.add_argument("--max-new-tokens", type=int_at_least(1), default=256)
    command.add_argument("--system", help="system prompt, as given to training (--system)")
    command.set_defaults(run=_select)
    return command
