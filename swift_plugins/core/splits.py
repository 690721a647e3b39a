"""Held-out splits chosen at random from the distinct rows a generator drew, so they follow the training mix.

Generators draw their rows first and only then choose the held-out ones. Taking the last rows drawn instead
would skew the split: a generator that skips rows it has already drawn reaches the rows that are hard to draw
last (Countdown puzzles with a repeated number, which fewer orderings of the numbers reach). Every row is held out
with the same chance, so each split has the mix of the rows drawn. Two held-out splits: ``test``, for the figures a
run reports, and ``dev``, for the choices made before (settings, steps), so no reported figure was chosen on the
items it is reported on. ``split_seed`` draws and splits; ``order_seed`` only orders the training rows, so runs of
several seeds train in other orders on one split and are measured on the same held-out rows.

>>> split = split_rows(["a", "b", "c", "d", "e"], test_size=2, dev_size=1, split_seed=0)
>>> split.train, split.dev, split.test
(['b', 'e'], ['a'], ['c', 'd'])
>>> split_rows(["a", "b", "c", "d", "e"], test_size=2, dev_size=1, split_seed=0, order_seed=2).train
['e', 'b']
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

__all__ = ["SPLIT_ROWS", "Split", "shuffled", "split_rows"]

Row = TypeVar("Row")
SPLIT_ROWS = {"train": "rows", "dev": "development rows", "test": "held-out rows"}  # what a split's rows are called


@dataclass(frozen=True)
class Split(Generic[Row]):
    """The training rows and the two held-out splits."""

    train: list[Row]
    dev: list[Row]
    test: list[Row]


def split_rows(
    rows: Sequence[Row], test_size: int, split_seed: int, dev_size: int = 0, order_seed: int | None = None
) -> Split[Row]:
    """``rows`` (distinct) split into ``test_size`` test rows, ``dev_size`` dev rows and the training rows.

    The rows are walked in a random order drawn from ``split_seed`` (the same split for the same rows and seed):
    the first ``test_size`` are the test rows, the next ``dev_size`` the dev rows. The held-out splits keep the
    rows' order; the training rows too, or are shuffled by ``order_seed`` when one is given.
    """
    order = list(range(len(rows)))
    random.Random(f"held-out {split_seed}").shuffle(order)  # a text seed: another stream than random.Random(seed)
    test, dev = sorted(order[:test_size]), sorted(order[test_size : test_size + dev_size])
    train = shuffled([rows[i] for i in sorted(order[test_size + dev_size :])], order_seed)
    return Split(train, [rows[i] for i in dev], [rows[i] for i in test])


def shuffled(rows: list[Row], order_seed: int | None) -> list[Row]:
    """``rows`` in an order drawn from ``order_seed``; None: as they are."""
    if order_seed is not None:
        random.Random(f"training order {order_seed}").shuffle(rows)
    return rows

