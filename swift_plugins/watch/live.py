"""The watch beside a running trainer: the launcher's side of :mod:`.rules`.

:class:`LiveWatch` finds the ``logging.jsonl`` the trainer started writing (under its ``--output_dir``, newer than
the launch: a resumed run's earlier logs are not judged), feeds each new step record to a :class:`~.rules.Watch`,
prints every new verdict as one line and appends it to ``watch.log``. On a fatal verdict it raises
:class:`WatchStopped` (``WATCH=stop``) after marking the run folder (:data:`STOPPED`): the launcher then stops the
run as Ctrl-C does, and ``RESUME=auto`` passes over the checkpoints saved once the failure had begun.

>>> import io, tempfile, time
>>> from ..core.console import Console
>>> folder = Path(tempfile.mkdtemp())
>>> watch = LiveWatch(folder, Console("t.sh", io.StringIO()), started=time.time(), interval=0)
>>> (folder / "v0-1").mkdir()
>>> _ = (folder / "v0-1" / "logging.jsonl").write_text('{"loss": NaN, "global_step/max_steps": "1/9"}\\n' * 3)
>>> watch.poll()
Traceback (most recent call last):
...
swift_plugins.watch.live.WatchStopped: fatal: non-finite ...
>>> stopped_since(folder / "v0-1")
0
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from ..core.console import Console
from ..core.errors import LaunchError
from .log import LOG_NAME, LogTail
from .rules import Thresholds, Verdict, Watch

__all__ = ["FATAL_STATUS", "STOPPED", "WATCH_LOG", "LiveWatch", "WatchStopped", "stopped_since"]

# The exit status of a run the watch stopped and of `python -m swift_plugins watch` on a fatal verdict (2: bad input).
FATAL_STATUS = 3
WATCH_LOG = "watch.log"  # in the launcher's OUTPUT_DIR: every verdict, one line each
STOPPED = "watch-stopped.json"  # in the swift run folder the watch stopped: its fatal verdict


class WatchStopped(LaunchError):
    """A fatal verdict stopped the run; ``verdict`` says which rule and since when, ``run`` is the swift run folder."""

    def __init__(self, verdict: Verdict, run: Path) -> None:
        super().__init__(verdict.line())
        self.verdict, self.run = verdict, run


def stopped_since(run: Path) -> int | None:
    """The step at which the failure that stopped the run in ``run`` began (its checkpoints from there on are
    not to be resumed from), or None when no watch stopped that run."""
    try:
        return int(json.loads((run / STOPPED).read_text(encoding="utf-8"))["since"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


class LiveWatch:
    """Judges the log of the trainer writing under ``output_dir`` every ``interval`` seconds (see the module)."""

    def __init__(
        self,
        output_dir: Path,
        console: Console,
        started: float,
        thresholds: Thresholds | None = None,
        stop: bool = True,
        interval: float = 2.0,
    ) -> None:
        self.output_dir, self.console, self.started = Path(output_dir), console, started
        self.watch = Watch(thresholds or Thresholds())
        self.stop, self.interval = stop, interval
        self.tail: LogTail | None = None
        self._next = 0.0
        self._last_record = time.monotonic()

    def _find_log(self) -> Path | None:
        """The newest ``logging.jsonl`` under ``output_dir`` written since the launch (none before: a resumed run's
        earlier logs stay out)."""
        logs = [self.output_dir / LOG_NAME, *self.output_dir.glob(f"v*-*/{LOG_NAME}")]
        fresh = [log for log in logs if log.is_file() and log.stat().st_mtime >= self.started]
        return max(fresh, key=lambda log: log.stat().st_mtime) if fresh else None

    def poll(self) -> list[Verdict]:
        """Judge what the trainer logged since the last poll (at most every ``interval`` seconds); say each new
        verdict; raise :class:`WatchStopped` on a fatal one when stopping. Returns the new verdicts."""
        now = time.monotonic()
        if now < self._next:
            return []
        self._next = now + self.interval
        if self.tail is None:
            log = self._find_log()
            if log is None:
                return []
            self.tail, self._last_record = LogTail(log), now
        verdicts = []
        records = self.tail.read()
        for record in records:
            verdicts += self.watch.add(record)
        if records:
            self._last_record = now
        else:
            verdicts += self.watch.idle(now - self._last_record)
        for verdict in verdicts:
            self._say(verdict)
        fatal = next((verdict for verdict in verdicts if verdict.fatal), None)
        if fatal is not None and self.stop:
            run = self.tail.path.parent
            (run / STOPPED).write_text(json.dumps({"rule": fatal.rule, "step": fatal.step, "since": fatal.since,
                                                   "line": fatal.line()}) + "\n", encoding="utf-8")  # fmt: skip
            raise WatchStopped(fatal, run)
        return verdicts

    def _say(self, verdict: Verdict) -> None:
        line = verdict.line()
        if verdict.fatal and not self.stop:
            line += " (WATCH=warn: the run goes on)"
        self.console.warn(f"watch: {line}")
        with (self.output_dir / WATCH_LOG).open("a", encoding="utf-8") as record:
            record.write(f"{time.strftime('%Y-%m-%d %H:%M:%S')} {line}\n")
