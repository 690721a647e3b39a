"""Order-preserving map over worker processes, for the generator and the audit.

>>> list(ordered_map(abs, [-1, 2, -3], jobs=1))
[1, 2, 3]
"""

from __future__ import annotations

import itertools
import signal
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor
from typing import TypeVar

__all__ = ["ordered_map"]

In = TypeVar("In")
Out = TypeVar("Out")


def ordered_map(function: Callable[[In], Out], items: Iterable[In], jobs: int) -> Iterator[Out]:
    """``map(function, items)`` computed by ``jobs`` processes, at most ``2 * jobs`` items ahead.

    ``items`` may be endless; results come in the order of ``items`` whatever ``jobs`` is.
    """
    if jobs < 1:
        raise ValueError(f"jobs must be >= 1, got {jobs}")
    if jobs == 1:
        yield from map(function, items)
        return
    items = iter(items)
    with ProcessPoolExecutor(jobs, initializer=_worker_signals) as pool:
        try:
            pending = deque(pool.submit(function, item) for item in itertools.islice(items, 2 * jobs))
            while pending:
                result = pending.popleft().result()
                pending.extend(pool.submit(function, item) for item in itertools.islice(items, 1))
                yield result
        except BaseException:  # Ctrl-C, SIGTERM, an early close: the workers end with their current item
            pool.shutdown(wait=False, cancel_futures=True)
            raise


def _worker_signals() -> None:
    """A worker ignores Ctrl-C, which the parent alone reports, once, instead of one traceback per worker; SIGTERM
    ends it as it ends any process, not through a handler of the parent's that it was forked with."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
