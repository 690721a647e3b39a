"""The watch over a run that is still going: its log found, read as it grows, judged, each verdict said.

:class:`LiveWatch` serves ``python -m swift_plugins watch --follow`` and the launcher alike. It finds the run's
``logging.jsonl`` once the trainer has written one (under what ``plot`` takes, which need not exist yet: swift makes
its output folder when it starts; with ``started``, only a run written since then: a resumed run's earlier logs are
not judged), moves to a newer run when one appears, feeds each new step record to a :class:`~.rules.Watch` (the
stall rule from the time since the log's last write) and passes every new verdict's line to ``say``.

A recipe reads the watch's settings from its environment (:func:`watch_mode`, :func:`watch_thresholds`) and judges its
trainer through :func:`watcher`. The launcher stops the run on a fatal verdict through :func:`stop_on_fatal`: it marks
the run folder (:data:`STOPPED`) and raises :class:`WatchStopped`; the launcher then stops the run as Ctrl-C does, and
``RESUME=auto`` passes over the checkpoints saved once the failure had begun (:func:`stopped_since`).

>>> import tempfile
>>> folder = Path(tempfile.mkdtemp())
>>> watch = LiveWatch(folder, say=print, interval=0)
>>> (folder / "v0-1").mkdir()
>>> lines = [f'{{"reward": 1.0, "loss": NaN, "global_step/max_steps": "{step}/9"}}\\n' for step in (1, 2, 3)]
>>> _ = (folder / "v0-1" / "logging.jsonl").write_text("".join(lines))
>>> stop_on_fatal(watch.poll(), watch)  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
swift_plugins.watch.live.WatchStopped: fatal: non-finite at step 3 (failing since step 0): ...
>>> stopped_since(folder / "v0-1")
0
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from pathlib import Path

from ..core.console import Console
from ..core.errors import DataError, LaunchError, SettingError
from ..core.settings import split_words
from ..core.task import TaskSpec
from .log import GRPO_KEYS, LogTail, is_grpo, latest_log
from .rules import Thresholds, Verdict, Watch
from .server import ServerLogReader

__all__ = [
    "FATAL_STATUS",
    "STOPPED",
    "WATCH_LOG",
    "WATCH_MODES",
    "LiveWatch",
    "WatchStopped",
    "stop_on_fatal",
    "stopped_since",
    "task_advice",
    "watch_mode",
    "watch_thresholds",
    "watcher",
]

# The exit status of a run the watch stopped and of `python -m swift_plugins watch` on a fatal verdict (2: bad input).
FATAL_STATUS = 3
STOPPED = "watch-stopped.json"  # in the swift run folder the watch stopped: its fatal verdict
WATCH_LOG = "watch.log"  # beside the run's other logs: every verdict of the watch, one line each
WATCH_MODES = ("stop", "warn", "off")  # WATCH: what a fatal verdict does (stop the run, only warn), or no watch


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
    """Judges the growing log of the newest run under ``where`` (a ``logging.jsonl``, a run folder or an
    ``--output_dir``) at most every ``interval`` seconds; ``say`` gets each new verdict's line. When a newer run
    appears under an ``--output_dir`` (a resumed run's ``v1-…`` beside ``v0-…``), it judges that one from its
    start, with a fresh :class:`~.rules.Watch`: ``tail.path`` is the log judged. The stall rule counts from the
    log's last write (its modification time), not from when the watch began. With ``server_log`` (the rollout
    server's log), a weight update the server failed to load is judged too (the ``stale-server`` rule)."""

    def __init__(
        self,
        where: Path,
        say: Callable[[str], object],
        thresholds: Thresholds | None = None,
        started: float = 0.0,
        interval: float = 2.0,
        server_log: Path | None = None,
        advice: Mapping[str, str] | None = None,
    ) -> None:
        self.where, self.say, self.started, self.interval = Path(where), say, started, interval
        self.server = ServerLogReader(server_log) if server_log else None
        self.thresholds, self.advice = thresholds or Thresholds(), advice
        self.watch = Watch(self.thresholds, advice)
        self.tail: LogTail | None = None
        self._next = 0.0

    @property
    def finished(self) -> bool:
        """Whether the log's summary line (``train_runtime``) has been read: training ended."""
        return self.tail is not None and self.tail.finished

    def poll(self, final: bool = False) -> list[Verdict]:
        """Judge what was logged since the last poll (none sooner than ``interval`` seconds after it); say each new
        verdict and return them. ``final``: the log is complete (a last line without its newline is read; judged now).
        :class:`DataError` when the log is not a GRPO trainer's ``logging.jsonl``."""
        now = time.monotonic()
        if now < self._next and not final:
            return []
        self._next = now + self.interval
        log = latest_log(self.where, self.started)
        if log is None:  # the trainer has not made its run folder yet (nor, maybe, its output folder)
            return []
        if self.tail is None or log != self.tail.path:
            self.tail, self.watch = LogTail(log), Watch(self.thresholds, self.advice)
        verdicts = []
        for records in self.tail.chunks(final):
            if records and self.watch.steps == 0 and not is_grpo(records):
                raise DataError(
                    f"{self.tail.path}: no GRPO key ({', '.join(GRPO_KEYS)}, rewards/<Name>/mean, completions/…) in "
                    "its step records: a log from another trainer (SFT, DPO?); watch judges GRPO runs"
                )
            verdicts += [verdict for record in records for verdict in self.watch.add(record)]
        if self.server is not None:
            verdicts += [verdict for failure in self.server.read() for verdict in self.watch.server_failed(failure)]
        quiet = self.tail.seconds_since_written()
        if not self.finished and quiet is not None:
            verdicts += self.watch.idle(quiet)
        for verdict in verdicts:
            self.say(verdict.line())
        return verdicts


def stop_on_fatal(verdicts: list[Verdict], watch: LiveWatch) -> None:
    """Raise :class:`WatchStopped` at the first fatal one of ``verdicts``, its run folder marked first."""
    fatal = next((verdict for verdict in verdicts if verdict.fatal), None)
    if fatal is None:
        return
    run = watch.tail.path.parent
    record = {"rule": fatal.rule, "step": fatal.step, "since": fatal.since, "line": fatal.line()}
    (run / STOPPED).write_text(json.dumps(record) + "\n", encoding="utf-8")
    raise WatchStopped(fatal, run)


def watch_mode(env: Mapping[str, str]) -> str:
    """``WATCH``: what the watch over a trainer's log does on a fatal verdict (stop, the default, or warn), or off.

    >>> watch_mode({}), watch_mode({"WATCH": "warn"})
    ('stop', 'warn')
    """
    mode = env.get("WATCH") or "stop"
    if mode not in WATCH_MODES:
        raise SettingError(
            f"WATCH={mode!r}: use stop (the default: a fatal verdict stops the run), warn (only warn) or off"
        )
    return mode


def watch_thresholds(env: Mapping[str, str], plumbing: bool = False) -> Thresholds:
    """``WATCH_SET``: ``name=value`` settings of the watch's thresholds, separated by spaces, over the defaults (a
    smoke run's, with ``plumbing``: a random model fails the rules about output by design).

    >>> watch_thresholds({"WATCH_SET": "stall_seconds=3600 zero_spread_patience=40"}).zero_spread_patience
    40
    """
    base = Thresholds.plumbing() if plumbing else Thresholds()
    try:
        return base.parse(split_words("WATCH_SET", env.get("WATCH_SET", "")))
    except SettingError as error:
        raise SettingError(f"WATCH_SET: {error}") from None


def task_advice(task: TaskSpec) -> dict[str, str]:
    """The task's words for the watch's rules: where its reference runs are known to collapse.

    >>> from ..tasks import task_named
    >>> task_advice(task_named("countdown"))
    {'reward-collapse': 'the reference countdown run collapsed from --learning_rate 1e-6 --beta 0.04'}
    """
    collapse = task.preset.collapse
    if collapse is None:
        return {}
    return {"reward-collapse": f"the reference {task.name} run collapsed from --learning_rate {collapse[0]} --beta "
                               f"{collapse[1]}"}  # fmt: skip


def watcher(
    where: Path,
    mode: str,
    thresholds: Thresholds,
    record: Path,
    console: Console,
    server_log: Path | None = None,
    advice: Mapping[str, str] | None = None,
) -> Callable[..., None] | None:
    """What to call while a trainer runs (None with ``WATCH=off``): judge its log under ``where`` (and the rollout
    server's ``server_log``: a weight update it failed to load), say each verdict (also appended to ``record``; the
    task's ``advice`` before a rule's own) and, with ``WATCH=stop``, raise
    :class:`~swift_plugins.watch.live.WatchStopped` at a fatal one."""
    if mode == "off":
        return None

    def say(line: str) -> None:
        if mode == "warn" and line.startswith("fatal"):
            line += " (WATCH=warn: the run goes on)"
        console.warn(f"watch: {line}")
        with record.open("a", encoding="utf-8") as file:
            file.write(f"{time.strftime('%Y-%m-%d %H:%M:%S')} {line}\n")

    live = LiveWatch(where, say, thresholds, started=time.time(), server_log=server_log, advice=advice)

    def check(final: bool = False) -> None:
        verdicts = live.poll(final)
        if mode == "stop":
            stop_on_fatal(verdicts, live)

    return check
