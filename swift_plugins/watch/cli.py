"""``python -m swift_plugins watch PATH [--follow] [--interval SECONDS] [--plumbing]``: judge a GRPO run's log.

PATH is what ``plot`` takes: a ``logging.jsonl``, a run folder, or an ``--output_dir`` with ``v*-*/`` run
folders (the newest log wins). Every verdict is printed to stderr as one line when it arises
(``warning: …`` or ``fatal: …``), then one summary line to stdout. Exit status:

- 0: no fatal verdict (warnings allowed); with ``--follow``, the log's summary line (``train_runtime``) came;
- 3 (:data:`~.live.FATAL_STATUS`): a rule went fatal (with ``--follow``: at the first one, the stall rule included);
- 2: bad input, one line: no such path, no log in it, no step logged, or a log from another trainer
  (no step record with a key only GRPO logs);
- 130: Ctrl-C.

``--follow`` judges the log as it grows, every ``--interval`` seconds, with the stall rule on (wall-clock
time since the last new step record); on an existing folder without a log yet, it waits for one.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from ..core.errors import DataError
from .live import FATAL_STATUS, LiveWatch
from .log import find_log
from .rules import Thresholds, Watch

__all__ = ["add_watch_command", "watch_run"]


def _seconds(text: str) -> float:
    value = float(text)
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds, got {text}")
    return value


def add_watch_command(commands: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add the ``watch`` command to the subcommands ``commands`` of a parser (see the module)."""
    command = commands.add_parser(
        "watch",
        help="judge a GRPO run's logging.jsonl (finished or running): exit 3 when it is failing",
        description=__doc__.splitlines()[0].partition(": ")[2],
        epilog="exit status: 0 no fatal verdict, 3 a fatal verdict, 2 bad input (see docs/watch.md)",
    )
    command.add_argument("run_dir", type=Path, help="run folder, --output_dir with v*/ folders, or logging.jsonl")
    command.add_argument("--follow", action="store_true", help="keep judging as the log grows, until it ends")
    command.add_argument(
        "--interval",
        type=_seconds,
        default=10.0,
        metavar="SECONDS",
        help="with --follow: seconds between reads (default 10)",
    )
    command.add_argument(
        "--plumbing",
        action="store_true",
        help="a smoke run on a random tiny model: reward-collapse, truncation and zero-spread only warn",
    )
    command.set_defaults(run=watch_run)
    return command


def _say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def _finish(watch: Watch, ended: str = "") -> None:
    fatal = [verdict for verdict in watch.verdicts if verdict.fatal]
    warnings = len(watch.verdicts) - len(fatal)
    counts = f" ({warnings} warning{'s' * (warnings != 1)})" if warnings else ""
    if not fatal:
        print(f"{watch.steps} steps judged, no fatal verdict{counts}{ended}", flush=True)
        return
    rules = ", ".join(dict.fromkeys(f"{verdict.rule} at step {verdict.step}" for verdict in fatal))
    print(f"{watch.steps} steps judged, fatal: {rules}{counts}", flush=True)
    sys.exit(FATAL_STATUS)


def watch_run(args: argparse.Namespace) -> None:
    """Judge the log of ``args.run_dir`` (following it with ``args.follow``); exits 3 on a fatal verdict."""
    if not args.follow or not args.run_dir.exists():
        find_log(args.run_dir)  # the one-line refusal of a path without a log (--follow waits in a folder)
    thresholds = Thresholds.plumbing() if args.plumbing else Thresholds()
    live = LiveWatch(args.run_dir, _say, thresholds, interval=0)
    if args.follow:
        _say(f"following {args.run_dir} every {args.interval:g} s until the run ends or fails; Ctrl-C stops")
    live.poll()
    while args.follow and not live.finished and live.watch.fatal is None:
        time.sleep(args.interval)
        live.poll()
    if live.watch.steps == 0:
        raise DataError(f"{live.tail.path}: no training step logged (empty or only summary lines)")
    _finish(live.watch, ended="; training finished" if args.follow and live.finished else "")
