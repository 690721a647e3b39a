"""Scores under a hard time bound: a pool of worker processes, reused across calls, one killed when it overruns.

A signal cannot stop ``9**9**9`` (CPython computes the power in C and runs Python signal handlers only between
bytecodes), so each request goes to a worker process (:mod:`.worker`) and the pool waits for its reply: a request
that has used ``timeout`` seconds of its worker's CPU (or ten times that in wall time, whatever it waits on) scores 0,
and its worker is killed and replaced by a spare started ahead. The bound counts CPU, not wall time, so a worker
that a busy machine leaves waiting for a core is not cut short.

A worker that dies (the OOM killer, a crash), idle, busy or spare, is replaced and its request scored by the next
one; a request that kills two workers scores 0 (``"worker died"``). Workers start as requests need them, and die
with the process that started them however it dies (Linux). When no worker can start (three in a row exit before
they are ready), :meth:`ScorePool.score` raises :class:`~swift_plugins.core.errors.LaunchError`: a run stops on one
line rather than training on zeros. Nothing else raises: every outcome says what happened.

>>> with ScorePool(workers=1, timeout=1.0) as pool:
...     [outcome.score for outcome in pool.score([request("basic_arithmetic", "5", GOLD_ROW)])]
[1.0]
"""

from __future__ import annotations

import json
import math
import os
import selectors
import subprocess
import sys
import threading
import time
from collections import Counter, deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..core.errors import LaunchError, SettingError

__all__ = ["DEFAULT_TIMEOUT", "MAX_TIMEOUT", "MAX_WORKERS", "Outcome", "ScorePool", "pool_settings", "request"]

DEFAULT_TIMEOUT = 1.0  # CPU seconds; the slowest gold answer of every dataset scores in 0.08 s (docs/tasks.md)
MAX_TIMEOUT = 600.0  # seconds: past this a stuck scorer holds a training step for longer than a step takes
MAX_WORKERS = 64  # each worker holds about 120 MB (reasoning-gym imports sympy and matplotlib)
WALL_FACTOR = 10  # a request waiting on something else than a CPU (a sleep) is stopped at this many bounds of wall time
PIPE_BUFFER = 1 << 16  # bytes a pipe takes without blocking the writer (Linux's default)
START_TIMEOUT = 60.0  # seconds for a worker to import reasoning-gym, or to build a dataset it has not built yet
START_TRIES = 3  # workers in a row that exit before they are ready: this environment cannot score
DEATHS_PER_REQUEST = 2  # workers a request may see die before it is deemed to kill them
ROOT = Path(__file__).resolve().parents[2]  # the folder holding swift_plugins, for the workers' imports
GOLD_ROW = {"gym_config": "{}", "question": "Calculate 2 + 3.", "answer": "5", "metadata": "{}"}
TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100  # /proc's unit of CPU time


@dataclass(frozen=True)
class Outcome:
    """One request's score (0.0 unless scored), its seconds, and why it was not scored (None when it was).

    ``seconds``: the time ``score_answer`` took, measured in the worker; for a timeout, the wall time it ran.
    """

    score: float
    seconds: float
    failure: str | None = None  # "timeout", "error: Type: message", "guarded: why", "worker died"


def request(name: str, answer: str | None, row: dict[str, Any]) -> dict[str, Any]:
    """The worker request scoring ``answer`` against a gym row of dataset ``name``."""
    return {
        "name": name,
        "config": row["gym_config"],
        "answer": answer,
        "question": row["question"],
        "gold": row.get("answer"),
        "metadata": row["metadata"],
    }


def pool_settings(env: dict[str, str]) -> tuple[int, float]:
    """``(workers, timeout)`` from ``GYM_SCORE_WORKERS`` (default: up to 4 CPUs) and ``GYM_SCORE_TIMEOUT``.

    >>> pool_settings({"GYM_SCORE_TIMEOUT": "0.5", "GYM_SCORE_WORKERS": "2"})
    (2, 0.5)
    >>> pool_settings({"GYM_SCORE_TIMEOUT": "inf"})
    Traceback (most recent call last):
    ...
    swift_plugins.core.errors.SettingError: GYM_SCORE_TIMEOUT='inf' must be a number of seconds above 0, at most 600
    """
    workers_text, timeout_text = env.get("GYM_SCORE_WORKERS", "").strip(), env.get("GYM_SCORE_TIMEOUT", "").strip()
    workers = int(workers_text) if workers_text.isdigit() else min(4, os.cpu_count() or 1)
    if workers_text and not (workers_text.isdigit() and 1 <= workers <= MAX_WORKERS):
        raise SettingError(
            f"GYM_SCORE_WORKERS={workers_text!r} must be a whole number of processes from 1 to {MAX_WORKERS} "
            "(each holds about 120 MB)"
        )
    try:
        timeout = float(timeout_text) if timeout_text else DEFAULT_TIMEOUT
    except ValueError:
        timeout = math.nan
    if not 0 < timeout <= MAX_TIMEOUT:  # NaN and infinity included
        raise SettingError(f"GYM_SCORE_TIMEOUT={timeout_text!r} must be a number of seconds above 0, at most 600")
    return workers, timeout


def _reply(line: bytes) -> dict[str, Any]:
    """A worker's reply line; one that is not JSON (what could write to the replies' pipe?) is an error.

    >>> _reply(b'{"score": 1.0}'), _reply(b"oops")
    ({'score': 1.0}, {'error': "garbled reply: b'oops'"})
    """
    try:
        return json.loads(line)
    except ValueError:
        return {"error": f"garbled reply: {line[:100]!r}"}


def _cpu_seconds(pid: int) -> float | None:
    """The CPU seconds process ``pid`` has used (Linux's /proc); None where that cannot be read."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as file:
            fields = file.read().rpartition(b")")[2].split()
        return (int(fields[11]) + int(fields[12])) / TICKS  # utime and stime, the 14th and 15th fields
    except (OSError, IndexError, ValueError):
        return None


class _Worker:
    """One worker process; ``job`` is the index of the request it scores (None: idle, -1: starting)."""

    def __init__(self) -> None:
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, (str(ROOT), os.environ.get("PYTHONPATH"))))}
        self.process = subprocess.Popen(
            [sys.executable, "-m", "swift_plugins.gym.worker", str(os.getpid())],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
            start_new_session=True,  # the trainer's Ctrl-C reaches the trainer, which closes the pool
        )
        self.buffer = b""
        self.built: set[tuple[str, str]] = set()  # the (name, config) datasets it holds
        self.key: tuple[str, str] | None = None  # the dataset of the request it scores
        self.timeout = START_TIMEOUT
        self.job: int | None = -1
        self.started = time.monotonic()
        self.deadline = self.started + START_TIMEOUT
        self.cpu = 0.0  # its CPU seconds when it last replied (it uses none while it waits for a request)
        self.cpu_at_start = 0.0  # ... when the request it scores was sent or its dataset built

    @property
    def scoring(self) -> bool:
        return self.job is not None and self.job >= 0

    def send(self, job: int, request: dict[str, Any], timeout: float) -> bool:
        """Hand the worker a request (bounded once its dataset is built: :meth:`restart_clock`); False if it is gone."""
        self.job, self.key, self.timeout = job, (request["name"], request["config"]), timeout
        self.started, self.cpu_at_start = time.monotonic(), self.cpu
        self.deadline = self.started + (timeout if self.key in self.built else START_TIMEOUT)
        payload = (json.dumps(request) + "\n").encode()
        if len(payload) > PIPE_BUFFER:  # a write that would block the pool's loop until the worker has read it all
            threading.Thread(target=self._write, args=(payload,), daemon=True).start()
            return True
        return self._write(payload)

    def _write(self, payload: bytes) -> bool:
        try:
            self.process.stdin.write(payload)
            self.process.stdin.flush()
        except (BrokenPipeError, OSError, ValueError):  # gone, or killed (its pipe closed) while this wrote
            return False
        return True

    def restart_clock(self) -> None:
        """The dataset is built: the request's time bound starts now."""
        self.built.add(self.key)
        self.started, self.cpu_at_start = time.monotonic(), self.cpu
        self.deadline = self.started + self.timeout

    def overran(self, now: float) -> bool:
        """Past its deadline: its request has used its CPU bound (or ten bounds of wall time); else a later deadline."""
        used = _cpu_seconds(self.process.pid)
        if used is None or now - self.started >= self.timeout * WALL_FACTOR:
            return True
        left = self.timeout - (used - self.cpu_at_start)
        if left <= 0:
            return True
        self.deadline = min(now + max(left, 0.01), self.started + self.timeout * WALL_FACTOR)
        return False

    def read(self) -> list[dict[str, Any]] | None:
        """The complete replies now readable; None at end of file (the worker died)."""
        chunk = os.read(self.process.stdout.fileno(), 1 << 16)
        if not chunk:
            return None
        self.buffer += chunk
        *lines, self.buffer = self.buffer.split(b"\n")
        replies = [_reply(line) for line in lines]
        self.cpu = next((reply["cpu"] for reply in reversed(replies) if "cpu" in reply), self.cpu)
        return replies

    def kill(self) -> None:
        self.process.kill()
        self.process.wait()
        for stream in (self.process.stdin, self.process.stdout):
            stream.close()


@dataclass
class _Batch:
    """One :meth:`ScorePool.score` call: its requests, their outcomes, those not yet sent, the deaths each saw."""

    requests: list[dict[str, Any]]
    outcomes: list[Outcome | None]
    waiting: deque[int]
    deaths: Counter[int] = field(default_factory=Counter)


class ScorePool:
    """Up to ``workers`` scoring processes, each request bounded by ``timeout`` seconds; close it (or use ``with``)."""

    def __init__(self, workers: int = 1, timeout: float = DEFAULT_TIMEOUT) -> None:
        self.size, self.timeout = workers, timeout
        self.workers: list[_Worker] = []  # started as requests need them
        self.spare: _Worker | None = None  # started ahead: it takes a killed worker's place without a wait
        self.failed_starts = 0  # workers in a row that exited before they were ready
        self.lock = threading.Lock()  # one batch at a time through the workers

    def __enter__(self) -> ScorePool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        for worker in [*self.workers, *filter(None, [self.spare])]:
            worker.kill()
        self.workers, self.spare = [], None

    def score(self, requests: list[dict[str, Any]]) -> list[Outcome]:
        """One outcome per request, in order; :class:`LaunchError` if no worker can start."""
        with self.lock:
            batch = _Batch(requests, [None] * len(requests), deque(range(len(requests))))
            while batch.waiting or any(worker.job is not None for worker in self.workers):
                self._start(len(batch.waiting) + sum(worker.scoring for worker in self.workers))
                for worker in self.workers:
                    if worker.job is not None or not batch.waiting:
                        continue
                    if worker.process.poll() is not None:  # died while idle
                        self._replace(worker)
                        continue
                    job = batch.waiting.popleft()
                    if not worker.send(job, requests[job], self.timeout):
                        batch.waiting.appendleft(job)
                        self._replace(worker)
                self._wait(batch)
            return batch.outcomes  # type: ignore[return-value]  (every request has its outcome here)

    def _start(self, needed: int) -> None:
        while len(self.workers) < min(self.size, needed):
            self.workers.append(_Worker())
        if self.spare is None and self.workers:
            self.spare = _Worker()

    def _replace(self, worker: _Worker) -> None:
        """Kill ``worker``; the spare takes its place (a new one if the spare died waiting); a new spare starts."""
        worker.kill()
        worker.job = None
        spare, self.spare = self.spare, _Worker()
        if spare is None or spare.process.poll() is not None:
            if spare is not None:
                spare.kill()
            spare = _Worker()
        self.workers[self.workers.index(worker)] = spare

    def _start_failed(self, worker: _Worker) -> None:
        self.failed_starts += 1
        worker.kill()
        if self.failed_starts >= START_TRIES:
            status = worker.process.returncode
            self.close()
            raise LaunchError(
                f"gym scoring: {START_TRIES} worker processes in a row exited before they were ready (the last with "
                f"status {status}): its error is above; python -m swift_plugins.gym.worker shows it"
            )
        self._replace(worker)

    def _died(self, batch: _Batch, worker: _Worker) -> None:
        batch.deaths[worker.job] += 1
        if batch.deaths[worker.job] >= DEATHS_PER_REQUEST:
            batch.outcomes[worker.job] = Outcome(0.0, time.monotonic() - worker.started, "worker died")
        else:
            batch.waiting.appendleft(worker.job)
        self._replace(worker)

    def _wait(self, batch: _Batch) -> None:
        """Wait for replies until the nearest deadline; settle replies, deaths and overruns."""
        busy = [worker for worker in self.workers if worker.job is not None]
        if not busy:
            return
        with selectors.DefaultSelector() as selector:
            for worker in busy:
                selector.register(worker.process.stdout, selectors.EVENT_READ, worker)
            ready = selector.select(max(0.0, min(worker.deadline for worker in busy) - time.monotonic()))
        for key, _ in ready:
            worker = key.data
            replies = worker.read()
            if replies is None:
                self._start_failed(worker) if worker.job == -1 else self._died(batch, worker)
                continue
            for reply in replies:
                if "built" in reply:
                    worker.restart_clock()
                    continue
                if worker.job == -1:
                    self.failed_starts = 0
                else:
                    failure = None if "score" in reply else reply.get("refused", f"error: {reply.get('error')}")
                    seconds = reply.get("seconds", time.monotonic() - worker.started)  # the scorer's own time
                    batch.outcomes[worker.job] = Outcome(reply.get("score", 0.0), seconds, failure)
                worker.job = None
        now = time.monotonic()
        for worker in [worker for worker in busy if worker.job is not None and worker.deadline <= now]:
            if worker.job == -1:
                self._start_failed(worker)
            elif worker.overran(now):
                batch.outcomes[worker.job] = Outcome(0.0, now - worker.started, "timeout")
                self._replace(worker)
