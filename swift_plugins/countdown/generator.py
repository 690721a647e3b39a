"""Procedural Countdown puzzles: solvable, distinct and reproducible from a seed.

Numbers and a target are drawn uniformly from their ranges; a draw is kept only if the solver
finds an exact solution using every number once and the puzzle (the multiset of numbers with the
target) has not been drawn before. Draws are made in fixed-size batches from one seeded generator,
so the same config and seed always give the same rows.

>>> rows = list(generate(CountdownConfig(), count=2, seed=0))
>>> sorted(rows[0])
['nums', 'solution', 'target']
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial

import numpy as np

from ..core.errors import SettingError
from ..core.parallel import ordered_map
from .data import puzzle_key
from .solver import MAX_COUNT, MAX_NUMBER, MAX_TARGET, solve_batch

__all__ = ["CountdownConfig", "generate"]

_BATCH = 4096
_MAX_FRUITLESS_BATCHES = 20  # batches in a row that add no new puzzle: the ranges are exhausted


@dataclass(frozen=True)
class CountdownConfig:
    """Ranges of a Countdown puzzle, inclusive. The defaults follow the hub data (3-4 numbers, 1-99)."""

    min_count: int = 3
    max_count: int = 4
    min_number: int = 1
    max_number: int = 99
    min_target: int = 1
    max_target: int = 99

    def __post_init__(self) -> None:
        if not 2 <= self.min_count <= self.max_count <= MAX_COUNT:
            raise SettingError(
                f"counts must satisfy 2 <= min_count <= max_count <= {MAX_COUNT}, "
                f"got {self.min_count}..{self.max_count}"
            )
        if not 1 <= self.min_number <= self.max_number <= MAX_NUMBER:
            raise SettingError(
                f"numbers must satisfy 1 <= min_number <= max_number <= {MAX_NUMBER}, "
                f"got {self.min_number}..{self.max_number}"
            )
        if not 1 <= self.min_target <= self.max_target <= MAX_TARGET:
            raise SettingError(
                f"targets must satisfy 1 <= min_target <= max_target <= {MAX_TARGET}, "
                f"got {self.min_target}..{self.max_target}"
            )


def _draw(config: CountdownConfig, seed: int, batch: int) -> list[tuple[list[int], int, str]]:
    """The solvable draws of batch number ``batch``, in draw order; each batch has its own stream."""
    rng = np.random.default_rng([seed, batch])
    counts = rng.integers(config.min_count, config.max_count + 1, _BATCH)
    numbers = rng.integers(config.min_number, config.max_number + 1, (_BATCH, config.max_count))
    targets = rng.integers(config.min_target, config.max_target + 1, _BATCH)
    found: dict[int, tuple[list[int], int, str]] = {}
    for count in range(config.min_count, config.max_count + 1):
        (rows,) = np.nonzero(counts == count)
        for row, solution in zip(rows, solve_batch(numbers[rows, :count], targets[rows]), strict=True):
            if solution is not None:
                found[row] = (numbers[row, :count].tolist(), int(targets[row]), solution)
    return [found[row] for row in sorted(found)]


def generate(
    config: CountdownConfig, count: int, seed: int, jobs: int = 1, progress: Callable[[int], object] | None = None
) -> Iterator[dict]:
    """Yield ``count`` distinct solvable rows ``{"nums", "target", "solution"}``.

    The rows depend only on ``config``, ``count`` and ``seed``, not on ``jobs`` (worker processes).
    ``progress`` is called with the number of rows added by each batch (e.g. ``tqdm.update``).
    Raises :class:`SettingError` when the ranges hold fewer distinct solvable puzzles than asked for.
    """
    if count < 0:
        raise SettingError(f"count must be >= 0, got {count}")
    if count == 0:
        return
    seen: set[tuple[tuple[int, ...], int]] = set()
    fruitless = 0
    for draws in ordered_map(partial(_draw, config, seed), itertools.count(), jobs):
        added = 0
        for nums, target, solution in draws:
            key = puzzle_key(nums, target)
            if key in seen:
                continue
            seen.add(key)
            added += 1
            yield {"nums": nums, "target": target, "solution": solution}
            if len(seen) == count:
                break
        if progress is not None:
            progress(added)
        if len(seen) == count:
            return
        fruitless = 0 if added else fruitless + 1
        if fruitless == _MAX_FRUITLESS_BATCHES:
            raise SettingError(
                f"only {len(seen)} distinct solvable puzzles found in {config}; ask for fewer rows or widen the ranges"
            )
