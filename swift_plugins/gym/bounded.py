"""Scores under a hard time bound: a pool of worker processes, reused across calls, one killed when it overruns.

A signal cannot stop ``9**9**9`` (CPython computes the power in C and runs Python signal handlers only between
bytecodes), so each request goes to a worker process (:mod:`.worker`) and the pool waits for its reply at most
``timeout`` seconds; a worker that overruns is killed and replaced by a spare started ahead, and its request
scores 0. A worker that dies, or a scorer that raises, scores 0 too. Nothing here raises on any request: every
outcome says what happened.

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
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core.errors import SettingError

__all__ = ["DEFAULT_TIMEOUT", "Outcome", "ScorePool", "pool_settings", "request"]

DEFAULT_TIMEOUT = 1.0  # seconds; the slowest gold answer of every dataset scores in 0.08 s (docs/tasks.md)
PIPE_BUFFER = 1 << 16  # bytes a pipe takes without blocking the writer (Linux's default)
START_TIMEOUT = 60.0  # seconds for a worker to import reasoning-gym, or to build a dataset it has not built yet
ROOT = Path(__file__).resolve().parents[2]  # the folder holding swift_plugins, for the workers' imports
GOLD_ROW = {"gym_config": "{}", "question": "Calculate 2 + 3.", "answer": "5", "metadata": "{}"}


@dataclass(frozen=True)
class Outcome:
    """One request's score (0.0 unless scored), its seconds, and why it was not scored (None when it was).

    ``seconds``: the time ``score_answer`` took, measured in the worker; for a timeout, the bound it overran.
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
    >>> pool_settings({"GYM_SCORE_TIMEOUT": "never"})
    Traceback (most recent call last):
    ...
    swift_plugins.core.errors.SettingError: GYM_SCORE_TIMEOUT='never' must be a number of seconds above 0
    """
    workers_text, timeout_text = env.get("GYM_SCORE_WORKERS", ""), env.get("GYM_SCORE_TIMEOUT", "")
    workers = int(workers_text) if workers_text.strip().isdigit() else min(4, os.cpu_count() or 1)
    if workers_text and (not workers_text.strip().isdigit() or workers < 1):  # checked, not asserted: -O keeps it
        raise SettingError(f"GYM_SCORE_WORKERS={workers_text!r} must be a whole number of processes, 1 or more")
    try:
        timeout = float(timeout_text) if timeout_text else DEFAULT_TIMEOUT
    except ValueError:
        timeout = math.nan
    if not timeout > 0:  # NaN included
        raise SettingError(f"GYM_SCORE_TIMEOUT={timeout_text!r} must be a number of seconds above 0")
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


class _Worker:
    """One worker process; ``job`` is the index of the request it scores (None: idle, -1: starting)."""

    def __init__(self) -> None:
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, (str(ROOT), os.environ.get("PYTHONPATH"))))}
        self.process = subprocess.Popen(
            [sys.executable, "-m", "swift_plugins.gym.worker"],
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

    def send(self, job: int, request: dict[str, Any], timeout: float) -> bool:
        """Hand the worker a request (bounded once its dataset is built: :meth:`restart_clock`); False if it is gone."""
        self.job, self.key, self.timeout = job, (request["name"], request["config"]), timeout
        self.started = time.monotonic()
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
        self.started = time.monotonic()
        self.deadline = self.started + self.timeout

    def read(self) -> list[dict[str, Any]] | None:
        """The complete replies now readable; None at end of file (the worker died)."""
        chunk = os.read(self.process.stdout.fileno(), 1 << 16)
        if not chunk:
            return None
        self.buffer += chunk
        *lines, self.buffer = self.buffer.split(b"\n")
        return [_reply(line) for line in lines]

    def kill(self) -> None:
        self.process.kill()
        self.process.wait()
        for stream in (self.process.stdin, self.process.stdout):
            stream.close()


class ScorePool:
    """``workers`` scoring processes, each request bounded by ``timeout`` seconds; close it (or use ``with``)."""

    def __init__(self, workers: int = 1, timeout: float = DEFAULT_TIMEOUT) -> None:
        self.timeout = timeout
        self.workers = [_Worker() for _ in range(workers)]
        self.spare = _Worker()  # started ahead: it takes a killed worker's place without a wait for its start
        self.lock = threading.Lock()  # one batch at a time through the workers

    def __enter__(self) -> ScorePool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        for worker in [*self.workers, self.spare]:
            worker.kill()
        self.workers = []

    def score(self, requests: list[dict[str, Any]]) -> list[Outcome]:
        """One outcome per request, in order; each request waits ``timeout`` seconds at most once sent."""
        with self.lock:
            return self._score(requests)

    def _replace(self, worker: _Worker) -> None:
        worker.kill()
        self.workers[self.workers.index(worker)], self.spare = self.spare, _Worker()

    def _score(self, requests: list[dict[str, Any]]) -> list[Outcome]:
        self._outcomes: list[Outcome | None] = [None] * len(requests)
        waiting = deque(range(len(requests)))
        while waiting or any(worker.job is not None and worker.job >= 0 for worker in self.workers):
            for worker in self.workers:
                if worker.job is None and waiting:
                    job = waiting.popleft()
                    if not worker.send(job, requests[job], self.timeout):
                        self._finish(worker, Outcome(0.0, 0.0, "worker died"))
                        self._replace(worker)
            if not self.workers:
                break
            self._wait()
        return [outcome or Outcome(0.0, 0.0, "no worker could start") for outcome in self._outcomes]

    def _finish(self, worker: _Worker, outcome: Outcome) -> None:
        self._outcomes[worker.job] = outcome

    def _wait(self) -> None:
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
            starting = worker.job == -1
            if replies is None:
                if starting:  # a worker that cannot start is not restarted: the environment is broken
                    worker.kill()
                    self.workers.remove(worker)
                else:
                    self._finish(worker, Outcome(0.0, time.monotonic() - worker.started, "worker died"))
                    self._replace(worker)
                continue
            for reply in replies:
                if "built" in reply:
                    worker.restart_clock()
                    continue
                if not starting:
                    failure = None if "score" in reply else reply.get("refused", f"error: {reply.get('error')}")
                    seconds = reply.get("seconds", time.monotonic() - worker.started)  # the scorer's own time
                    self._finish(worker, Outcome(reply.get("score", 0.0), seconds, failure))
                worker.job = None
        now = time.monotonic()
        for worker in [worker for worker in busy if worker.job is not None and worker.deadline <= now]:
            if worker.job == -1:
                worker.kill()
                self.workers.remove(worker)
            else:
                self._finish(worker, Outcome(0.0, now - worker.started, "timeout"))
                self._replace(worker)
