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
from typing import Any

from ..core.errors import DataError
from .live import FATAL_STATUS
from .log import GRPO_KEYS, LogTail, find_log, is_grpo, read_records, step_records
from .rules import Thresholds, Verdict, Watch

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


def _say(verdicts: list[Verdict]) -> None:
    for verdict in verdicts:
        print(verdict.line(), file=sys.stderr, flush=True)


def _check_grpo(log: Path, steps: list[dict[str, Any]]) -> None:
    if not steps:
        raise DataError(f"{log}: no training step logged (empty or only summary lines)")
    if not is_grpo(steps):
        raise DataError(
            f"{log}: none of its {len(steps)} step records has a GRPO key ({', '.join(GRPO_KEYS)}, "
            f"rewards/<Name>/mean, completions/…): a log from another trainer (SFT, DPO?); watch judges GRPO runs"
        )


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
    watch = Watch(Thresholds.plumbing() if args.plumbing else Thresholds())
    if args.follow:
        _follow(watch, args.run_dir, args.interval)
        return
    log = find_log(args.run_dir)
    steps = step_records(read_records(log))
    _check_grpo(log, steps)
    for record in steps:
        _say(watch.add(record))
    _finish(watch)


def _follow(watch: Watch, path: Path, interval: float) -> None:
    tail: LogTail | None = None
    checked = False
    last = time.monotonic()
    while True:
        if tail is None:
            try:
                tail, last = LogTail(find_log(path)), time.monotonic()
            except DataError:
                if not path.is_dir():  # a missing path; an existing folder may not have its log yet
                    raise
        steps = tail.read() if tail is not None else []
        now = time.monotonic()
        if steps:
            if not checked:
                _check_grpo(tail.path, steps)
                checked = True
            for record in steps:
                _say(watch.add(record))
                if watch.fatal:
                    _finish(watch)
            last = now
        elif tail is not None and not tail.finished:
            _say(watch.idle(now - last))
            if watch.fatal:
                _finish(watch)
        if tail is not None and tail.finished:
            if not checked:
                _check_grpo(tail.path, steps)
            _finish(watch, ended="; training finished")
            return
        time.sleep(interval)
