"""Countdown rows: the prompt and reading it back, the puzzle key, row validation, the task's contract.

A row is ``{"nums": [int, ...], "target": int}`` plus optional columns (``solution``).

>>> prompt = prompt_for([6, 2, 6], 24)
>>> prompt.splitlines()[0]
'Using the numbers [6, 2, 6], create an equation that equals 24.'
>>> puzzle_from_prompt(prompt)
([6, 2, 6], 24)
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..core.errors import DataError
from ..core.files import FORMATS, read_rows, write_jsonl
from ..core.task import Task

__all__ = [
    "COUNTDOWN",
    "FORMATS",
    "HUB_IDS",
    "DataError",
    "check_columns",
    "check_row",
    "prompt_for",
    "puzzle_from_prompt",
    "puzzle_key",
    "read_columns",
    "read_rows",
    "write_jsonl",
]

HUB_IDS = ("zouxuhong/Countdown-Tasks-3to4", "Jiayi-Pan/Countdown-Tasks-3to4")  # (ModelScope, Hugging Face)


def prompt_for(nums: list[int], target: int) -> str:
    """The user prompt of the ms-swift Countdown recipe; :func:`puzzle_from_prompt` reads it back."""
    return (
        f"Using the numbers {nums}, create an equation that equals {target}.\n"
        "You can use basic arithmetic operations (+, -, *, /) and each number can only be used once.\n"
        "Show your work in <think> </think> tags. And return the final equation and answer in "
        "<answer> </answer> tags, for example <answer> (1 + 2) / 3 * 4 = 4 </answer>."
    )


_PROMPT = re.compile(r"Using the numbers \[([0-9,\s-]*)\], create an equation that equals (-?[0-9]+)")


def puzzle_from_prompt(text: str) -> tuple[list[int], int] | None:
    """The ``(nums, target)`` a :func:`prompt_for` text states, or None if ``text`` holds no such prompt."""
    match = _PROMPT.search(text)
    if match is None:
        return None
    return [int(n) for n in match[1].split(",") if n.strip()], int(match[2])


def puzzle_key(nums: Iterable[int], target: int) -> tuple[tuple[int, ...], int]:
    """What makes two puzzles the same: the multiset of numbers and the target.

    >>> puzzle_key([6, 2, 6], 24) == puzzle_key([2, 6, 6], 24)
    True
    """
    return tuple(sorted(nums)), target


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def check_row(row: dict[str, Any], where: str) -> dict[str, Any]:
    """The row's ``nums`` and ``target`` as ints, or :class:`DataError` saying what is wrong ``where``.

    >>> check_row({"nums": [1, 2], "target": "3"}, "row 0")
    Traceback (most recent call last):
    ...
    swift_plugins.core.errors.DataError: row 0: target must be an integer, got '3'
    """
    nums, target = row.get("nums"), row.get("target")
    if not isinstance(nums, (list, tuple)) or not nums or not all(_is_int(n) for n in nums):
        raise DataError(f"{where}: nums must be a non-empty list of integers, got {nums!r}")
    if not _is_int(target):
        raise DataError(f"{where}: target must be an integer, got {target!r}")
    return {"nums": list(nums), "target": target}


def _messages(row: dict[str, Any]) -> list[dict[str, str]]:
    return [{"role": "user", "content": prompt_for(row["nums"], row["target"])}]


COUNTDOWN = Task(
    name="Countdown",
    columns=("nums", "target"),
    check_row=check_row,
    messages=_messages,
    hub_ids=HUB_IDS,
    tags=("math", "countdown"),
)


def check_columns(columns: Iterable[str], source: str) -> None:
    """:class:`DataError` unless ``columns`` include ``nums`` and ``target``."""
    COUNTDOWN.check_columns(columns, source)


def read_columns(path: str | Path) -> tuple[list[list[int]], list[int]]:
    """The checked ``nums`` and ``target`` columns of a Countdown file; a bad row is named."""
    nums, targets = [], []
    for where, row in read_rows(path):
        check_columns(row, where)
        checked = check_row(row, where)
        nums.append(checked["nums"])
        targets.append(checked["target"])
    return nums, targets
