"""Audit a Countdown table: which rows are solvable with every number used exactly once.

Rows beyond the solver's bounds (:func:`~.solver.is_supported`: more than 4 numbers, or numbers
or a target too large, however large) are counted as unsupported, never solved or guessed.

>>> report = audit([[6, 2, 6], [1, 1, 1], [2, 3], [1, 2]], [24, 100, 5, 10**21])
>>> report.solvable, report.unsolvable_rows, report.trivial, report.unsupported_rows
(2, [1], 1, [3])
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from math import isfinite, prod

import numpy as np

from ..core.parallel import ordered_map
from .data import puzzle_key
from .solver import is_supported, solve_batch

__all__ = ["AuditReport", "audit"]

_CHUNK = 4096


@dataclass
class AuditReport:
    """What :func:`audit` found; ``unsolvable_rows`` are row indices into the audited table."""

    rows: int = 0
    solvable: int = 0
    trivial: int = 0  # the target is the sum or the product of all the numbers
    duplicates: int = 0  # rows repeating an earlier puzzle (same multiset of numbers and target)
    unsolvable_rows: list[int] = field(default_factory=list)
    unsupported_rows: list[int] = field(default_factory=list)  # beyond the solver's bounds: is_supported()
    by_count: dict[int, tuple[int, int]] = field(default_factory=dict)  # count -> (rows, solvable)
    numbers: dict[str, float | None] = field(default_factory=dict)  # min / median / max / mean
    targets: dict[str, float | None] = field(default_factory=dict)

    def as_dict(self) -> dict:
        return {
            "rows": self.rows,
            "solvable": self.solvable,
            "unsolvable": len(self.unsolvable_rows),
            "unsupported": len(self.unsupported_rows),
            "trivial": self.trivial,
            "duplicates": self.duplicates,
            "by_count": {str(k): {"rows": r, "solvable": s} for k, (r, s) in sorted(self.by_count.items())},
            "numbers": self.numbers,
            "targets": self.targets,
        }


def _summary(values: list[int]) -> dict[str, float | None]:
    """Exact min and max; median and mean in floating point, None when beyond it (past about 1.8e308).

    >>> _summary([1, 10**21]), _summary([1, 10**400])["mean"]
    ({'min': 1, 'median': 5e+20, 'max': 1000000000000000000000, 'mean': 5e+20}, None)
    """
    if not values:
        return {}
    try:
        floats = np.asarray(values, dtype=np.float64)
    except OverflowError:
        median = mean = None
    else:
        with np.errstate(over="ignore"):
            median, mean = float(np.median(floats)), float(floats.mean())
    return {
        "min": min(values),
        "median": median if median is None or isfinite(median) else None,
        "max": max(values),
        "mean": round(mean, 3) if mean is not None and isfinite(mean) else None,
    }


def _solvable(task: tuple[list[list[int]], list[int]]) -> list[bool]:
    nums, targets = task
    return [solution is not None for solution in solve_batch(np.array(nums), np.array(targets))]


def audit(
    nums: Sequence[Sequence[int]],
    targets: Sequence[int],
    jobs: int = 1,
    progress: Callable[[int], object] | None = None,
) -> AuditReport:
    """Solve every row exactly and summarise; ``progress`` gets the count of rows done per chunk."""
    report = AuditReport(rows=len(nums))
    seen: set[tuple[tuple[int, ...], int]] = set()
    groups: dict[int, list[int]] = {}
    for index, (row, target) in enumerate(zip(nums, targets, strict=True)):
        key = puzzle_key(row, target)
        report.duplicates += key in seen
        seen.add(key)
        report.trivial += target in (sum(row), prod(row))
        if is_supported(row, target):
            groups.setdefault(len(row), []).append(index)
        else:
            report.unsupported_rows.append(index)
    if progress is not None and report.unsupported_rows:
        progress(len(report.unsupported_rows))
    tasks, owners = [], []
    for count, indices in sorted(groups.items()):
        for start in range(0, len(indices), _CHUNK):
            chunk = indices[start : start + _CHUNK]
            tasks.append(([list(nums[i]) for i in chunk], [targets[i] for i in chunk]))
            owners.append((count, chunk))
    solved_by_count: Counter[int] = Counter()
    for (count, chunk), solvable in zip(owners, ordered_map(_solvable, tasks, jobs), strict=True):
        solved_by_count[count] += sum(solvable)
        report.unsolvable_rows.extend(i for i, ok in zip(chunk, solvable, strict=True) if not ok)
        if progress is not None:
            progress(len(chunk))
    report.unsolvable_rows.sort()
    report.solvable = sum(solved_by_count.values())
    rows_by_count = Counter(len(row) for row in nums)
    report.by_count = {count: (rows, solved_by_count[count]) for count, rows in sorted(rows_by_count.items())}
    report.numbers = _summary([n for row in nums for n in row])
    report.targets = _summary(list(targets))
    return report
