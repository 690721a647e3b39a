"""``python -m swift_plugins.gym.worker PARENT_PID``: one scoring process of :class:`~.bounded.ScorePool`.

It reads one JSON request a line on stdin (``name``, ``config``, ``answer``, ``question``, ``gold``, ``metadata``:
the row's columns) and writes one JSON line per request: ``{"score": float, "seconds": float}`` (1.0 or 0.0, by
:mod:`.scorers`, and the time scoring took), ``{"error": "Type: message"}`` when the scorer raised on the row (its
gold answer too) or gave no finite number, or
``{"refused": "guarded: …"}`` for an answer :mod:`.guard` keeps from a scorer that would run it as Python.
It first writes ``{"ready": true}`` once reasoning-gym is imported, and ``{"built": true}`` before the score of a
request whose dataset it had not built yet (some load files): the pool's time bound covers ``score_answer``, not the
building. Every reply carries ``"cpu"``, the CPU seconds the process has used (the pool's bound counts CPU).
Replies go to the stdout it was started with; anything a scorer prints goes to stderr instead, so it cannot garble
them. The pool kills it when a request outlives the time bound (a big-integer power in C cannot be interrupted from
inside the process), and it dies with the pool's process (:func:`die_with`).
"""

from __future__ import annotations

import ctypes
import json
import os
import signal
import sys
import time
import warnings
from collections.abc import Callable
from typing import Any

from .data import entry_of
from .entries import decode
from .guard import refusal
from .scorers import score

__all__ = ["PR_SET_PDEATHSIG", "die_with", "score_request", "serve"]

PR_SET_PDEATHSIG = 1  # prctl's option (linux/prctl.h)
_DATASETS: dict[tuple[str, str], Any] = {}  # (name, config): the dataset whose score_answer scores its rows


def score_request(request: dict[str, Any], on_built: Callable[[], None] = lambda: None) -> dict[str, Any]:
    """The reply to one request: its score (:func:`.scorers.score`), or the error met computing it; ``on_built()``
    after building a dataset. A scorer that raises on an answer but scores the gold one 1.0 could not read the
    answer: a wrong answer, scored 0 (``unknown`` for prime_factorization), not an error.

    >>> score_request({"name": "basic_arithmetic", "config": "{}", "answer": "5", "question": "Calculate 2 + 3.",
    ...                "gold": "5", "metadata": "{}"})["score"]
    1.0
    >>> score_request({"name": "countdown", "config": "{}", "answer": "__import__('os')", "question": "",
    ...                "gold": "", "metadata": "{}"})
    {'refused': 'guarded: not a plain answer for countdown'}
    """
    from reasoning_gym import create_dataset

    try:
        refused = refusal(request["name"], request["answer"])
        if refused is not None:  # checked before anything is built: the answer never reaches the scorer
            return {"refused": refused}
        key = request["name"], request["config"]
        if key not in _DATASETS:
            _DATASETS[key] = create_dataset(key[0], **decode(key[1]))
            on_built()
        dataset, entry = _DATASETS[key], entry_of(request["question"], request["gold"], request["metadata"])
        start = time.perf_counter()
        try:
            value = score(key[0], dataset, request["answer"], entry)
        except Exception:
            if request["gold"] is None or score(key[0], dataset, request["gold"], entry) != 1.0:
                raise  # the scorer cannot score this row at all: an error, not a wrong answer
            value = 0.0
        return {"score": value, "seconds": time.perf_counter() - start}
    except Exception as error:  # any scorer's failure scores 0 in the parent: it is reported, not raised
        return {"error": f"{type(error).__name__}: {str(error)[:200]}"}


def die_with(parent: int) -> None:
    """Be killed (SIGKILL) when the process that started this one dies, however it dies: Linux's parent-death signal.

    A thread cannot stop a scorer stuck in C (it holds the interpreter), and a worker reads its next request only once
    it has replied; so without it a worker whose pool was killed keeps a CPU busy for as long as its scorer runs. The
    parent is the thread that started the worker: the pool replaces a worker whose thread ended. Elsewhere than Linux
    a worker ends when its stdin closes, which it reads between requests.
    """
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    except (AttributeError, OSError):  # no prctl: not Linux
        return
    if os.getppid() != parent:  # the parent died before the signal was asked for
        os._exit(1)


def serve(parent: int) -> None:
    die_with(parent)
    replies = os.fdopen(os.dup(sys.stdout.fileno()), "w", encoding="utf-8")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())  # a scorer's print goes to stderr
    warnings.simplefilter("ignore", SyntaxWarning)  # cellpylib's escape sequences, warned of as it first compiles
    import reasoning_gym  # noqa: F401  (imported before ready: the first request is not slowed by it)

    def reply(message: dict[str, Any]) -> None:
        replies.write(json.dumps({**message, "cpu": time.process_time()}) + "\n")
        replies.flush()

    reply({"ready": True})
    for line in sys.stdin:
        reply(score_request(json.loads(line), lambda: reply({"built": True})))


if __name__ == "__main__":
    serve(int(sys.argv[1]) if len(sys.argv) > 1 else os.getppid())
