"""Reading an ms-swift run's ``logging.jsonl``, finished or still growing (standard library only).

ms-swift 4.x writes one JSON object per logged step into ``<output_dir>/v<N>-<time>/logging.jsonl``
(``--add_version false``: into ``<output_dir>`` itself), with keys such as ``loss``, ``grad_norm``,
``reward``, ``rewards/<Name>/mean``, ``completions/clipped_ratio``, ``frac_reward_zero_std``, ``kl`` and
``global_step/max_steps`` (``"3/100"``), then a summary line (``train_runtime``) and a final dump
(``log_history``) when training ends. Its step lines carry no ``step`` key: :func:`step_records` adds one.
A non-finite number is written as the bare token ``NaN`` (or ``Infinity``), which Python's ``json`` reads:
it is kept in the records, since a NaN loss is what the watch must see.

Example::

    steps = read_steps(find_log(Path("output/countdown_3gpu-20260101-000000")))
    tail = LogTail(Path("output/run/v0-20260101-000000/logging.jsonl"))
    new_steps = tail.read()  # again later: only the steps written since
"""

from __future__ import annotations

import json
import math
import os
import re
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from ..core.errors import DataError

__all__ = [
    "FALLBACK_WARNING",
    "GRPO_KEYS",
    "LOG_NAME",
    "GrowingFile",
    "LogTail",
    "describe_fallbacks",
    "describe_zero_spread",
    "find_log",
    "is_grpo",
    "is_number",
    "is_summary",
    "latest_log",
    "read_records",
    "read_steps",
    "step_records",
    "zero_spread_share",
]

LOG_NAME = "logging.jsonl"
# Keys only a GRPO trainer logs (besides rewards/<Name>/mean): a log without any is another trainer's.
GRPO_KEYS = ("reward", "frac_reward_zero_std")
_GRPO_PREFIXES = ("completions/",)
_RUN_FOLDER = re.compile(r"v\d+-")  # swift's run folders under an --output_dir: v0-20260101-000000


def find_log(path: Path) -> Path:
    """The ``logging.jsonl`` of ``path``: the file itself, a run folder (or an ``--output_dir`` written with
    ``--add_version false``), or an ``--output_dir`` whose versioned run folders (``v0-…``, ``v1-…``) hold
    one; the most recently written wins.

    Raises :class:`DataError` naming ``path`` when there is none.

    >>> find_log(Path("/nonexistent/run"))
    Traceback (most recent call last):
    ...
    swift_plugins.core.errors.DataError: /nonexistent/run: no such file or folder (expected a swift output folder or its logging.jsonl)
    """  # noqa: E501
    path = Path(path)
    if path.is_file():
        return path
    if not path.is_dir():
        raise DataError(f"{path}: no such file or folder (expected a swift output folder or its {LOG_NAME})")
    if (path / LOG_NAME).is_file():
        return path / LOG_NAME
    logs = [log for log in path.glob(f"*/{LOG_NAME}") if log.is_file()]
    if not logs:
        raise DataError(f"{path}: no {LOG_NAME} in it or in its run folders (v0-…/): has training started?")
    return max(logs, key=lambda log: log.stat().st_mtime)


def latest_log(path: Path, since: float = 0.0) -> Path | None:
    """The ``logging.jsonl`` of the newest run under ``path``, which swift may not have written yet: the file
    itself, a run folder's, or the newest of an ``--output_dir``'s run folders, a ``v<N>-…`` folder without a log
    included (a run just started, or resumed: ``RESUME=auto`` makes ``v1-…`` beside ``v0-…``). A run's age is the
    last write to its log or its folder; only those written at ``since`` (a ``time.time()``) or later count. None
    while there is none.

    >>> import tempfile
    >>> out = Path(tempfile.mkdtemp())
    >>> latest_log(out) is None
    True
    >>> (out / "v0-20260101-000000").mkdir()
    >>> latest_log(out).relative_to(out).as_posix()
    'v0-20260101-000000/logging.jsonl'
    """
    path = Path(path)
    if path.is_file() or (path / LOG_NAME).is_file():
        log = path if path.is_file() else path / LOG_NAME
        return log if _written(log) >= since else None
    logs = {log for log in path.glob(f"*/{LOG_NAME}") if log.is_file()}
    logs |= {folder / LOG_NAME for folder in path.glob("v*-*") if _RUN_FOLDER.match(folder.name) and folder.is_dir()}
    ages = {log: max(_written(log), _written(log.parent)) for log in logs}
    newest = max(ages, key=lambda log: (ages[log], log.parent.name), default=None)
    return newest if newest is not None and ages[newest] >= since else None


def _written(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:  # not there (yet), or gone since the listing
        return -math.inf


def _record(line: str) -> dict[str, Any] | None:
    try:
        record = json.loads(line)
    except json.JSONDecodeError:  # the half-written last line of a running run
        return None
    return record if isinstance(record, dict) else None


def _is_json(data: bytes) -> bool:
    try:
        json.loads(data)
    except ValueError:  # UnicodeDecodeError included
        return False
    return True


def read_records(log: Path) -> list[dict[str, Any]]:
    """Every complete JSON object line of ``log`` (step, summary and evaluation lines alike).

    A line that is not a JSON object (the half-written last line of a running run) is left out.
    Raises :class:`DataError` naming ``log`` when it cannot be read.
    """
    try:
        text = Path(log).read_text(encoding="utf-8", errors="replace")
    except OSError as error:
        raise DataError(f"{log}: cannot read it ({error.strerror or error})") from None
    return [record for record in map(_record, text.splitlines()) if record is not None]


def is_number(value: Any) -> bool:
    """Whether ``value`` is a logged number, NaN and infinities included (``True`` and ``False`` are not).

    >>> [is_number(value) for value in (0.5, 3, float("nan"), True, "1/3", None)]
    [True, True, True, False, False, False]
    """
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def is_summary(record: dict[str, Any]) -> bool:
    """Whether ``record`` is the summary line ms-swift writes when training ends.

    >>> is_summary({"train_runtime": 469.9, "global_step/max_steps": "150/150"})
    True
    """
    return "train_runtime" in record


def _step(record: dict[str, Any], default: int) -> int:
    progress = record.get("global_step/max_steps")  # "3/100"; swift's step lines carry no "step" key
    if isinstance(progress, str) and progress.partition("/")[0].isdigit():
        return int(progress.partition("/")[0])
    step = record.get("step")
    return step if isinstance(step, int) and not isinstance(step, bool) else default


def _is_step(record: dict[str, Any]) -> bool:
    if is_summary(record) or "log_history" in record or any(key.startswith("eval_") for key in record):
        return False
    return any(is_number(value) for key, value in record.items() if key not in ("epoch", "learning_rate"))


def step_records(records: Iterable[dict[str, Any]], before: int = 0) -> list[dict[str, Any]]:
    """The per-step training records among ``records``, each with an int ``step`` added.

    The step is the one of ``global_step/max_steps``, else a ``step`` key, else its position after
    ``before`` earlier step records. Summary lines (``train_runtime``, ``log_history``), evaluation lines
    (``eval_*``) and lines without a number are left out; NaN values stay.

    >>> step_records([{"loss": float("nan"), "global_step/max_steps": "7/10"}, {"train_runtime": 3.0}])
    [{'loss': nan, 'global_step/max_steps': '7/10', 'step': 7}]
    """
    steps: list[dict[str, Any]] = []
    for record in records:
        if _is_step(record):
            steps.append({**record, "step": _step(record, before + len(steps) + 1)})
    return steps


def read_steps(log: Path) -> list[dict[str, Any]]:
    """The per-step training records of a ``logging.jsonl``, each with an int ``step`` added
    (see :func:`step_records`)."""
    return step_records(read_records(log))


def zero_spread_share(steps: Iterable[dict[str, Any]]) -> tuple[float, int] | None:
    """The share of the trained groups whose answers were all rewarded alike (no advantage, no gradient), over the
    steps that log it (ms-swift's ``frac_reward_zero_std``, after dynamic sampling where it is on), and their
    number; None when no step logs it.

    >>> zero_spread_share([{"frac_reward_zero_std": 0.75}, {"frac_reward_zero_std": 0.25}, {"loss": 1.0}])
    (0.5, 2)
    """
    shares = [step["frac_reward_zero_std"] for step in steps if is_number(step.get("frac_reward_zero_std"))]
    return (round(sum(shares) / len(shares), 4), len(shares)) if shares else None


def describe_zero_spread(steps: Iterable[dict[str, Any]]) -> str | None:
    """The line a GRPO run or stage ends with: :func:`zero_spread_share` in words; None when no step logs it.

    >>> describe_zero_spread([{"frac_reward_zero_std": 0.75}, {"frac_reward_zero_std": 0.25}])
    'groups without reward spread (no gradient): 50% of the trained groups, over 2 steps'
    """
    alike = zero_spread_share(steps)
    if alike is None:
        return None
    return f"groups without reward spread (no gradient): {alike[0]:.0%} of the trained groups, over {alike[1]} steps"


# ms-swift 4.6's warning when dynamic sampling ran out of resamplings and the step trains its batch as drawn, groups
# without spread included (swift/rlhf_trainers/grpo_trainer.py, _dynamic_sampling): the only trace it leaves.
FALLBACK_WARNING = "There are still std=0 groups present after"


def describe_fallbacks(trainer_log: Path, steps: int, tries: int) -> str:
    """The line a run with dynamic sampling (``tries`` resamplings a step) ends with: at how many of its ``steps``
    ms-swift trained the batch as drawn, counted from its warnings in ``trainer_log``.

    >>> import tempfile
    >>> log = Path(tempfile.mkdtemp()) / "train.log"
    >>> _ = log.write_text("[WARNING:swift] There are still std=0 groups present after 3 retries.\\n")
    >>> describe_fallbacks(log, 4, 3).split(" (")[0]
    'dynamic sampling: 1 of 4 steps trained their batch as drawn, groups without spread included'
    """
    with trainer_log.open(errors="replace") as lines:
        fallbacks = sum(FALLBACK_WARNING in line for line in lines)
    return (f"dynamic sampling: {fallbacks} of {steps} steps trained their batch as drawn, groups without spread "
            f"included ({tries} resampling{'s' if tries != 1 else ''} did not replace them)")  # fmt: skip


def is_grpo(steps: Iterable[dict[str, Any]]) -> bool:
    """Whether any of ``steps`` has a key only a GRPO trainer logs (``reward``, ``rewards/<Name>/mean``,
    ``completions/…``, ``frac_reward_zero_std``): an SFT or DPO run's log has none.

    >>> is_grpo([{"loss": 1.2, "step": 1}]), is_grpo([{"loss": 0.0, "rewards/CountdownAccuracy/mean": 0.1}])
    (False, True)
    """
    return any(
        key in GRPO_KEYS or key.startswith(_GRPO_PREFIXES) or (key.startswith("rewards/") and key.endswith("/mean"))
        for record in steps
        for key in record
    )


class GrowingFile:
    """A file still being written, read from where the last read ended, a block of whole lines at a time.

    A half-written last line waits for the next read (unless the reader says it is ``complete``, or the read is
    ``final``); a file replaced by another (a new inode) or cut short is read from its start, ``on_restart`` called
    first; with ``skip_existing`` what the file held when this reader was made is never read. A missing file reads as
    nothing; another failure to read it is a :class:`DataError`.

    >>> import tempfile
    >>> path = Path(tempfile.mkdtemp()) / "server.log"
    >>> _ = path.write_text("old\\n")
    >>> growing = GrowingFile(path, skip_existing=True)
    >>> with path.open("a") as file:
    ...     _ = file.write("new\\nhalf")
    >>> [line for block in growing.blocks() for line in block]
    [b'new']
    """

    CHUNK = 1 << 20  # bytes read at a time

    def __init__(
        self, path: Path, skip_existing: bool = False, on_restart: Callable[[], object] | None = None
    ) -> None:
        self.path, self.on_restart = Path(path), on_restart
        self.offset, self.inode = 0, None  # offset: where the next unread line starts
        if skip_existing:
            try:
                found = self.path.stat()
                self.inode, self.offset = found.st_ino, found.st_size
            except OSError:
                pass

    def blocks(
        self, final: bool = False, complete: Callable[[bytes], bool] | None = None
    ) -> Iterator[list[bytes]]:
        """The lines written since the last read (without their newlines), a block at a time; a last line without
        its newline too where ``final`` or ``complete(line)``."""
        parts: list[bytes] = []  # the line being read, across blocks
        try:
            with self.path.open("rb") as file:
                found = os.fstat(file.fileno())
                if self.inode not in (None, found.st_ino) or found.st_size < self.offset:  # a new file, or cut short
                    self.offset = 0
                    if self.on_restart is not None:
                        self.on_restart()
                self.inode = found.st_ino
                file.seek(self.offset)
                while block := file.read(self.CHUNK):
                    head, newline, rest = block.rpartition(b"\n")
                    if not newline:
                        parts.append(block)
                        continue
                    data = b"".join([*parts, head])
                    parts = [rest]
                    self.offset += len(data) + 1
                    yield data.split(b"\n")
        except FileNotFoundError:
            return
        except OSError as error:
            raise DataError(f"{self.path}: cannot read it ({error.strerror or error})") from None
        last = b"".join(parts)
        if last.strip() and (final or (complete is not None and complete(last))):
            self.offset += len(last)  # complete but for its newline
            yield [last]

    def give_back(self, lines: list[bytes]) -> None:
        """Leave ``lines``, the last ones read (each had its newline), for the next read."""
        self.offset -= sum(len(line) + 1 for line in lines)


class LogTail:
    """The step records of a ``logging.jsonl`` that is still being written, a call at a time.

    Each :meth:`read` returns the complete step records written since the last call; :meth:`chunks` gives them a
    block of the file at a time (a long log is never held whole). It remembers its byte offset, leaves a
    half-written last line for the next call (unless ``final``: the log is complete), returns nothing while the
    file does not exist yet, and starts over when the file is replaced by a shorter one. ``finished`` turns true
    once the summary line (``train_runtime``) has been read. A file whose complete lines are none of them a JSON
    object (garbage, UTF-16, a JSON array) raises :class:`DataError`: not a ``logging.jsonl``.

    >>> import tempfile
    >>> log = Path(tempfile.mkdtemp()) / "logging.jsonl"
    >>> tail = LogTail(log)
    >>> tail.read()  # no file yet
    []
    >>> _ = log.write_text('{"loss": 0.5, "global_step/max_steps": "1/2"}\\n{"loss": 0.4, "glo')
    >>> [record["step"] for record in tail.read()]
    [1]
    >>> with log.open("a") as file:
    ...     _ = file.write('bal_step/max_steps": "2/2"}\\n{"train_runtime": 9.0}\\n')
    >>> [record["step"] for record in tail.read()], tail.finished
    ([2], True)
    """

    CHUNK = 1 << 20  # bytes read at a time

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.file = GrowingFile(self.path, on_restart=self._restart)
        self.steps = 0  # step records returned so far (numbers the steps of lines without a step)
        self.finished = False
        self.objects = self.others = 0  # complete lines read that are a JSON object, and that are not

    def read(self, final: bool = False) -> list[dict[str, Any]]:
        """The complete step records written since the last call (none while the file is missing); with
        ``final``, a last line without its newline is read as complete."""
        return [record for chunk in self.chunks(final) for record in chunk]

    def seconds_since_written(self) -> float | None:
        """Seconds since the file was last written (its modification time), None while it does not exist."""
        try:
            return time.time() - self.path.stat().st_mtime
        except FileNotFoundError:
            return None
        except OSError as error:
            raise DataError(f"{self.path}: cannot read it ({error.strerror or error})") from None

    def chunks(self, final: bool = False) -> Iterator[list[dict[str, Any]]]:
        """:meth:`read`, a block of the file at a time: the step records of each block's complete lines."""
        for lines in self.file.blocks(final, complete=_is_json):
            yield self._steps(lines)

    def _restart(self) -> None:
        """The file was replaced by a new one: its steps are counted afresh."""
        self.steps, self.finished, self.objects, self.others = 0, False, 0, 0

    def _steps(self, lines: list[bytes]) -> list[dict[str, Any]]:
        records = []
        for line in lines:
            record = _record(line.decode("utf-8", "replace")) if line.strip() else None
            if record is not None:
                records.append(record)
            elif line.strip():
                self.others += 1
        self.objects += len(records)
        if not self.objects and self.others:
            raise DataError(
                f"{self.path}: not a logging.jsonl (no line of it is a JSON object; ms-swift writes one JSON object "
                "a line, in UTF-8)"
            )
        self.finished = self.finished or any(map(is_summary, records))
        steps = step_records(records, before=self.steps)
        self.steps += len(steps)
        return steps
