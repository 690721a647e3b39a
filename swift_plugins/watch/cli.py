"""``python -m swift_plugins watch PATH [--follow [--interval SECONDS]] [--plumbing]``: judge a GRPO run's log.

PATH is what ``plot`` takes: a ``logging.jsonl``, a run folder, or an ``--output_dir`` with ``v*-*/`` run
folders (the newest run wins, and is named). Every verdict is printed to stderr as one line when it arises
(``warning: …`` or ``fatal: …``), then one summary line naming the log to stdout. Exit status:

- 0: no fatal verdict (warnings allowed); with ``--follow``, the log's summary line (``train_runtime``) came;
- 3 (:data:`~.live.FATAL_STATUS`): a rule went fatal (with ``--follow``: at the first one, the stall rule included);
- 2: bad input, one line: no such path, no log in it, no step logged, not a ``logging.jsonl``, a log from another
  trainer (no step record with a key only GRPO logs), or an ``--interval`` out of range or without ``--follow``;
- 130: Ctrl-C.

A plain watch reads the log a block at a time; a log without its summary line, last written longer ago than the
stall limit, gets a ``stalled`` warning (the run is not running, or hangs). ``--follow`` judges the log as it
grows, every ``--interval`` seconds, with the stall rule fatal (time since the log's last write); on an existing
folder without a log yet, it waits for one, and it moves to a newer run when one appears (``RESUME=auto``'s
``v1-…``), saying so.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import re
import sys
import time
from pathlib import Path

from ..core.errors import DataError, SettingError
from .live import FATAL_STATUS, LiveWatch
from .log import LOG_NAME, find_log
from .rules import Thresholds

__all__ = ["add_watch_command", "follow_interval", "watch_run"]

DEFAULT_INTERVAL = 10.0
INTERVAL_RANGE = (0.01, 3600.0)  # seconds between reads with --follow: the stall limit is 30 minutes
_DECIMAL = re.compile(r"\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*")  # what float() reads, but inf and nan


def follow_interval(text: str | None, follow: bool) -> float:
    """The seconds between reads of ``--interval`` ``text`` (None: the default); :class:`SettingError` when it is
    not a number within :data:`INTERVAL_RANGE` or given without ``--follow``.

    >>> follow_interval("0.5", True), follow_interval(None, True)
    (0.5, 10.0)
    >>> follow_interval("1e308", True)
    Traceback (most recent call last):
    ...
    swift_plugins.core.errors.SettingError: --interval: a number of seconds from 0.01 to 3600, got '1e308'
    """
    if text is None:
        return DEFAULT_INTERVAL
    if not follow:
        raise SettingError("--interval: only with --follow (a plain watch reads the log once)")
    low, high = INTERVAL_RANGE
    value = float(text) if _DECIMAL.fullmatch(text) else math.nan
    if not low <= value <= high:  # NaN included
        raise SettingError(f"--interval: a number of seconds from {low:g} to {high:g}, got {text!r}")
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
        metavar="SECONDS",
        help=f"with --follow: seconds between reads (default {DEFAULT_INTERVAL:g}, at most {INTERVAL_RANGE[1]:g})",
    )
    command.add_argument(
        "--plumbing",
        action="store_true",
        help="a smoke run on a random tiny model: reward-collapse, truncation and zero-spread only warn",
    )
    command.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a threshold of the rules, e.g. --set stall_seconds=3600 (repeatable; the thresholds: docs/watch.md)",
    )
    command.set_defaults(run=watch_run)
    return command


def _say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def _finish(live: LiveWatch, ended: str = "") -> None:
    watch = live.watch
    if watch.steps == 0:
        raise DataError(f"{live.tail.path}: no training step logged (empty or only summary lines)")
    fatal = [verdict for verdict in watch.verdicts if verdict.fatal]
    warnings = len(watch.verdicts) - len(fatal)
    counts = f" ({warnings} warning{'s' * (warnings != 1)})" if warnings else ""
    judged = f"{watch.steps} steps judged in {live.tail.path}"
    if not fatal:
        print(f"{judged}, no fatal verdict{counts}{ended}", flush=True)
        return
    rules = ", ".join(dict.fromkeys(f"{verdict.rule} at step {verdict.step}" for verdict in fatal))
    print(f"{judged}, fatal: {rules}{counts}", flush=True)
    sys.exit(FATAL_STATUS)


def _following(live: LiveWatch, interval: float, before: Path | None) -> str:
    if live.tail is None:
        what = f"{live.where} (no run yet: waiting for its {LOG_NAME})"
    else:
        what = f"{live.tail.path}{'' if live.tail.path.exists() else ' (not written yet)'}"
        what += f", a newer run than {before.parent.name}" if before is not None else ""
    return f"following {what} every {interval:g} s until the run ends or fails; Ctrl-C stops"


def _follow(where: Path, thresholds: Thresholds, interval: float) -> None:
    if not where.exists():
        find_log(where)  # the one-line refusal of a path without a log (--follow waits in an existing folder)
    shown: list[Path | None] = []  # the logs the "following" lines named, the current one last

    def announce() -> None:  # a "following" line for each log judged, before its first verdict
        log = live.tail.path if live.tail is not None else None
        if not shown or log != shown[-1]:
            _say(_following(live, interval, shown[-1] if shown else None))
            shown.append(log)

    def say(line: str) -> None:
        announce()
        _say(line)

    live = LiveWatch(where, say, thresholds, interval=0)
    while True:
        live.poll()
        announce()
        if live.finished or live.watch.fatal is not None:
            break
        time.sleep(interval)
    _finish(live, ended="; training finished" if live.finished else "")


def watch_run(args: argparse.Namespace) -> None:
    """Judge the log of ``args.run_dir`` (following it with ``args.follow``); exits 3 on a fatal verdict."""
    interval = follow_interval(args.interval, args.follow)
    thresholds = (Thresholds.plumbing() if args.plumbing else Thresholds()).parse(args.set)
    if args.follow:
        _follow(args.run_dir, thresholds, interval)
        return
    # Read once, the log has no wall clock but its last write: a long silence only warns (stopped on purpose?).
    quiet_warns = dataclasses.replace(thresholds, warn_only=thresholds.warn_only | {"stalled"})
    live = LiveWatch(find_log(args.run_dir), _say, quiet_warns, interval=0)
    live.poll(final=True)
    _finish(live)
