"""Exact Countdown solver, vectorised over many puzzles at once.

Every expression that uses each of ``n`` numbers exactly once with binary + - * / is one of a fixed
list of *templates* over slots ``0..n-1`` (3240 of them for four numbers, counting ``a+b`` and ``b+a``
once). :func:`solve_batch` evaluates all templates for a whole batch of puzzles with NumPy in
floating point to find candidates, then confirms each candidate in exact rational arithmetic with
the same evaluator the rewards use, so a reported solution is always exactly right.

>>> solve([6, 2, 6], 24)
'(6 + 6) * 2'
>>> solve([1, 1, 1], 100) is None
True
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache

import numpy as np

from ..core.errors import DataError
from .expression import Template, value_of

__all__ = [
    "MAX_COUNT",
    "MAX_NUMBER",
    "MAX_TARGET",
    "all_solutions",
    "format_expression",
    "is_supported",
    "solve",
    "solve_batch",
    "templates",
]

MAX_COUNT = 4
# The float search is tested exact up to these bounds (tests/countdown/test_solver.py); beyond them a
# float near-miss could hide a solution, so callers must not ask.
MAX_NUMBER = 10_000
MAX_TARGET = 10**12
# Float error for numbers up to a few thousand and four numbers is far below this; candidates
# inside the tolerance are confirmed exactly, so the only cost of a loose bound is a few extra checks.
_TOLERANCE = 1e-6


def _splits(mask: int):
    """Unordered splits of a slot set into two non-empty parts, the lowest slot in the first part."""
    low = mask & -mask
    part = (mask - 1) & mask
    while part:
        if part & low:
            yield part, mask ^ part
        part = (part - 1) & mask


# (operator, operands swapped?): + and * are commutative, so each split needs six combinations.
_COMBINATIONS = (("+", False), ("*", False), ("-", False), ("-", True), ("/", False), ("/", True))


@cache
def _templates_of(mask: int) -> tuple[Template, ...]:
    if mask & (mask - 1) == 0:
        return ((mask.bit_length() - 1,),)
    result: list[Template] = []
    for part, rest in _splits(mask):
        for op, swapped in _COMBINATIONS:
            left, right = (rest, part) if swapped else (part, rest)
            result.extend(a + b + (op,) for a in _templates_of(left) for b in _templates_of(right))
    return tuple(result)


def is_supported(numbers: Sequence[int], target: int) -> bool:
    """Whether the solver answers exactly for this puzzle: 1-4 numbers and bounded magnitudes.

    >>> is_supported([6, 2, 6], 24), is_supported([1, 2, 3, 4, 5], 15), is_supported([20_000], 1)
    (True, False, False)
    """
    return 1 <= len(numbers) <= MAX_COUNT and abs(target) <= MAX_TARGET and all(abs(n) <= MAX_NUMBER for n in numbers)


def templates(count: int) -> tuple[Template, ...]:
    """All expression shapes using slots ``0..count-1`` exactly once, in postfix.

    >>> len(templates(2)), len(templates(3)), len(templates(4))
    (6, 108, 3240)
    """
    if not 1 <= count <= MAX_COUNT:
        raise ValueError(f"the solver handles 1 to {MAX_COUNT} numbers, got {count}")
    return _templates_of((1 << count) - 1)


def _apply(op: str, left: np.ndarray, right: np.ndarray) -> np.ndarray:
    if op == "+":
        return left + right
    if op == "*":
        return left * right
    if op == "-":
        return left - right
    return left / right


def _blocks(mask: int, numbers: np.ndarray, memo: dict[int, np.ndarray]):
    """Float values of the templates of ``mask``, per row, as blocks in :func:`_templates_of` order."""
    rows = numbers.shape[0]
    for part, rest in _splits(mask):
        a = _values_of(part, numbers, memo)[:, :, None]
        b = _values_of(rest, numbers, memo)[:, None, :]
        for op, swapped in _COMBINATIONS:
            left, right = (b.transpose(0, 2, 1), a.transpose(0, 2, 1)) if swapped else (a, b)
            yield _apply(op, left, right).reshape(rows, -1)


def _values_of(mask: int, numbers: np.ndarray, memo: dict[int, np.ndarray]) -> np.ndarray:
    if mask not in memo:
        if mask & (mask - 1) == 0:
            memo[mask] = numbers[:, mask.bit_length() - 1 : mask.bit_length()]
        else:
            memo[mask] = np.concatenate(list(_blocks(mask, numbers, memo)), axis=1)
    return memo[mask]


def _hits(numbers: np.ndarray, targets: np.ndarray) -> np.ndarray:
    """``(rows, templates)`` booleans: the template's float value is within tolerance of the target.

    The top level is compared block by block, so the full float table is never held in memory.
    """
    full = (1 << numbers.shape[1]) - 1
    tolerance = _TOLERANCE * np.maximum(1.0, np.abs(targets))
    low, high = (targets - tolerance)[:, None], (targets + tolerance)[:, None]
    if full & (full - 1) == 0:
        return (numbers >= low) & (numbers <= high)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        return np.concatenate([(block >= low) & (block <= high) for block in _blocks(full, numbers, {})], axis=1)


def format_expression(template: Template, numbers: Sequence[int]) -> str:
    """Infix text of ``template`` over ``numbers`` with only the parentheses the value needs.

    >>> format_expression((0, 1, "-", 2, "*"), [6, 2, 6])
    '(6 - 2) * 6'
    """
    precedence = {"+": 1, "-": 1, "*": 2, "/": 2}
    stack: list[tuple[str, int]] = []  # (text, precedence of its top operator; 3 for a number)
    for token in template:
        if not isinstance(token, str):
            stack.append((str(numbers[token]), 3))
            continue
        (right, right_level), (left, left_level) = stack.pop(), stack.pop()
        level = precedence[token]
        if left_level < level:
            left = f"({left})"
        if right_level < level or (right_level == level and token in "-/"):
            right = f"({right})"
        stack.append((f"{left} {token} {right}", level))
    return stack[0][0]


def _confirm(template: Template, numbers: Sequence[int], target: int) -> bool:
    return value_of(template, numbers) == target


def _int64(numbers: np.ndarray, targets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``numbers`` and ``targets`` as int64 arrays, or :class:`DataError` naming a row beyond int64.

    >>> _int64([[1], [2]], [3, 10**21])
    Traceback (most recent call last):
    ...
    swift_plugins.core.errors.DataError: row 1 ([2] -> 1000000000000000000000) is beyond the solver's bounds
    """
    try:
        return np.asarray(numbers, dtype=np.int64), np.asarray(targets, dtype=np.int64)
    except OverflowError:  # far beyond is_supported(): find the row in Python integers
        numbers, targets = np.asarray(numbers, dtype=object), np.asarray(targets, dtype=object)
        limit = np.iinfo(np.int64).max
        row = int(((np.abs(numbers) > limit).any(axis=1) | (np.abs(targets) > limit)).argmax())
        puzzle = f"{[int(n) for n in numbers[row]]} -> {int(targets[row])}"
        raise DataError(f"row {row} ({puzzle}) is beyond the solver's bounds") from None


def solve_batch(numbers: np.ndarray, targets: np.ndarray) -> list[str | None]:
    """One exact solution (or None) per row of an ``(rows, count)`` integer array and its targets.

    Raises :class:`DataError` for a value beyond int64 (far beyond :func:`is_supported`), not an OverflowError.

    >>> solve_batch(np.array([[1, 2, 3], [1, 1, 1]]), np.array([7, 9]))
    ['1 + 2 * 3', None]
    """
    numbers, targets = _int64(numbers, targets)
    shapes = templates(numbers.shape[1])
    hits = _hits(numbers.astype(np.float64), targets.astype(np.float64))
    first = hits.argmax(axis=1)
    solutions: list[str | None] = [None] * len(numbers)
    for row in np.flatnonzero(hits[np.arange(len(numbers)), first]):
        row_numbers, target = numbers[row].tolist(), int(targets[row])
        column = first[row]
        if not _confirm(shapes[column], row_numbers, target):  # a float near-miss: look further
            exact = (c for c in np.flatnonzero(hits[row]) if _confirm(shapes[c], row_numbers, target))
            column = next(exact, None)
        if column is not None:
            solutions[row] = format_expression(shapes[column], row_numbers)
    return solutions


def all_solutions(numbers: Sequence[int], target: int) -> list[str]:
    """Every distinct equation over ``numbers`` (each used once) equal to ``target``, exactly checked.

    >>> all_solutions([6, 2, 6], 24)
    ['(6 + 6) * 2', '(6 - 2) * 6', '6 * (6 - 2)']
    """
    shapes = templates(len(numbers))
    hits = _hits(np.array([list(numbers)], dtype=np.float64), np.array([target], dtype=np.float64))[0]
    found = (
        format_expression(shapes[c], numbers) for c in np.flatnonzero(hits) if _confirm(shapes[c], numbers, target)
    )
    return list(dict.fromkeys(found))


def solve(numbers: Sequence[int], target: int) -> str | None:
    """One equation over ``numbers``, each used exactly once, equal to ``target``; None if none exists."""
    return solve_batch(np.array([list(numbers)]), np.array([target]))[0]
