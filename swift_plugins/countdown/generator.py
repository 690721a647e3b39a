"""Procedural Countdown puzzles: solvable, distinct and reproducible from a seed.

Numbers and a target are drawn uniformly from their ranges; a draw is kept only if the solver
finds an exact solution using every number once and the puzzle (the multiset of numbers with the
target) has not been drawn before. Draws are made in fixed-size batches from one seeded generator,
so the same config and seed always give the same rows.

A request is refused at once when it exceeds :attr:`CountdownConfig.capacity`, the exact number of
distinct puzzles the ranges allow (solvable or not); below that, when the solvable puzzles run out,
generation stops after a bounded number of draws that find no new puzzle.

>>> rows = list(generate(CountdownConfig(), count=2, seed=0))
>>> sorted(rows[0])
['nums', 'solution', 'target']
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass
from functools import partial
from math import comb

import numpy as np

from ..core.errors import SettingError
from ..core.parallel import ordered_map
from .data import puzzle_key
from .solver import MAX_COUNT, MAX_NUMBER, MAX_TARGET, solve_batch

__all__ = ["CountdownConfig", "generate"]

_BATCH = 4096
_MAX_FRUITLESS_BATCHES = 20  # batches in a row that add no new puzzle: the solvable puzzles are exhausted


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

    @property
    def capacity(self) -> int:
        """How many distinct puzzles (multiset of numbers, target) the ranges allow, solvable or not.

        A multiset of ``k`` numbers out of ``n`` values is one of ``comb(n + k - 1, k)``.

        >>> CountdownConfig(min_count=2, max_count=2, max_number=2, max_target=3).capacity  # {1,1} {1,2} {2,2} x 3
        9
        """
        values = self.max_number - self.min_number + 1
        multisets = sum(comb(values + k - 1, k) for k in range(self.min_count, self.max_count + 1))
        return multisets * (self.max_target - self.min_target + 1)


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


def generate(config: CountdownConfig, count: int, seed: int, jobs: int = 1) -> Iterator[dict]:
    """``count`` distinct solvable rows ``{"nums", "target", "solution"}``, as they are found.

    The rows depend only on ``config``, ``count`` and ``seed``, not on ``jobs`` (worker processes).
    Raises :class:`SettingError` at once when ``count`` exceeds ``config.capacity``, and while
    generating when the ranges prove to hold fewer solvable puzzles (no new one in
    ``_MAX_FRUITLESS_BATCHES`` batches of draws in a row).

    >>> try:
    ...     generate(CountdownConfig(max_count=3, max_number=9, max_target=9), count=1486, seed=0)
    ... except SettingError as error:
    ...     print(str(error).partition(";")[0])
    asked for 1,486 puzzles, more than the 1,485 distinct ones allowed by 3 numbers of 1-9 with targets 1-9
    """
    if count < 0:
        raise SettingError(f"count must be >= 0, got {count}")
    if count > config.capacity:
        raise SettingError(
            f"asked for {count:,} puzzles, more than the {config.capacity:,} distinct ones allowed by "
            f"{_ranges(config)}; ask for fewer or widen the ranges"
        )
    return _rows(config, count, seed, jobs)


def _span(low: int, high: int) -> str:
    return f"{low}" if low == high else f"{low}-{high}"


def _ranges(config: CountdownConfig) -> str:
    return (
        f"{_span(config.min_count, config.max_count)} numbers of {_span(config.min_number, config.max_number)} "
        f"with targets {_span(config.min_target, config.max_target)}"
    )


def _rows(config: CountdownConfig, count: int, seed: int, jobs: int) -> Iterator[dict]:
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
                return
        fruitless = 0 if added else fruitless + 1
        if fruitless == _MAX_FRUITLESS_BATCHES:
            raise SettingError(
                f"asked for {count:,} puzzles, but {_ranges(config)} seem to hold only {len(seen):,} distinct "
                f"solvable ones (no new one in the last {_MAX_FRUITLESS_BATCHES * _BATCH:,} draws); "
                "ask for fewer or widen the ranges"
            )
