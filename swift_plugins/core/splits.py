"""A held-out split chosen at random from the rows a generator drew, so it comes from the same pool as training.

Generators draw their rows first and only then choose the held-out ones. Taking the last rows drawn instead
would skew the split: a generator that skips rows it has already drawn reaches the rows that are hard to draw
last (Countdown puzzles with a repeated number, which fewer orderings of the numbers reach).

>>> split_held_out(["a", "b", "c", "d", "e"], 2, seed=0, key=str)
(['a', 'b', 'e'], ['c', 'd'])
"""

from __future__ import annotations

import random
from collections.abc import Callable, Hashable, Sequence
from typing import TypeVar

__all__ = ["split_held_out"]

Row = TypeVar("Row")


def split_held_out(
    rows: Sequence[Row], test_size: int, seed: int, key: Callable[[Row], Hashable]
) -> tuple[list[Row], list[Row]]:
    """``rows`` split into training rows and up to ``test_size`` held-out rows, no ``key`` in both.

    The rows are walked in a random order drawn from ``seed`` (the same split for the same rows and seed). A row
    is held out if its key is not yet held out, until ``test_size`` rows are. The other rows train, except the
    ones whose key is held out. Each split keeps the rows' order. With fewer than ``test_size`` distinct keys
    every key is held out, and the caller says what is missing.

    >>> split_held_out(["x", "y", "x", "z"], 1, seed=3, key=str)  # "x" held out: its second row trains neither
    (['y', 'z'], ['x'])
    """
    order = list(range(len(rows)))
    random.Random(f"held-out {seed}").shuffle(order)  # a text seed: another stream than random.Random(seed)
    held: set[int] = set()
    held_keys: set[Hashable] = set()
    for index in order:
        if len(held) == test_size:
            break
        if key(rows[index]) not in held_keys:
            held.add(index)
            held_keys.add(key(rows[index]))
    train = [row for index, row in enumerate(rows) if index not in held and key(row) not in held_keys]
    return train, [rows[index] for index in sorted(held)]
