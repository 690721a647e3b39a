"""Countdown rewards as plain functions: no trainer import, usable from ms-swift and TRL alike.

Every reward takes ``completions`` (strings, or chat-message lists whose last ``content`` is
scored) plus dataset columns as keyword lists, and returns one float per completion. Rewards
never raise: malformed completions and malformed rows score 0.0.

>>> countdown_accuracy_reward(["<think>…</think><answer>(6 - 2) * 6 = 24</answer>"],
...                           nums=[[6, 2, 6]], target=[24])
[1.0]
"""

from __future__ import annotations

import enum
import json
from collections.abc import Sequence
from typing import Any

from ..core.tags import completion_text, last_answer
from .expression import ExpressionError, ratio_of, split_equation

__all__ = [
    "MAX_ANSWER_CHARS",
    "Verdict",
    "countdown_accuracy_reward",
    "countdown_shaped_reward",
    "judge",
]

MAX_ANSWER_CHARS = 1024
SHAPED_PARTIAL_CREDIT = 0.1


class Verdict(str, enum.Enum):
    """Why a completion did or did not solve its puzzle; the value is the label shown."""

    CORRECT = "correct"
    WRONG_VALUE = "wrong value"  # right numbers, but the value (or the claim) misses the target
    NO_ANSWER = "no answer"  # no <answer>…</answer> block, or not text at all
    ILLEGAL_SYNTAX = "illegal syntax"  # the answer is not an equation of the grammar
    WRONG_NUMBERS = "wrong numbers"  # literals are not exactly the puzzle's numbers
    BAD_ROW = "bad row"  # the dataset row's nums/target cannot be read


def _as_int(value: Any) -> int:
    """An integer from an int, an integral float or a numeric string; ValueError otherwise."""
    if type(value) is int:
        return value
    if isinstance(value, bool):
        raise ValueError(f"not a number: {value!r}")
    if isinstance(value, str):
        value = value.strip()
        try:
            return int(value)
        except ValueError:
            value = float(value)
    if isinstance(value, float):
        if not value.is_integer():
            raise ValueError(f"not an integer: {value!r}")
        return int(value)
    return int(value.__index__())


def _as_numbers(nums: Any) -> list[int]:
    if isinstance(nums, str):
        nums = json.loads(nums)
    if type(nums) is list and all(type(number) is int for number in nums):
        return nums
    return [_as_int(number) for number in nums]


def judge(completion: Any, nums: Any, target: Any) -> Verdict:
    """Score one completion against one puzzle.

    >>> judge("<answer>1.5*2</answer>", [1, 5, 2], 3)
    <Verdict.ILLEGAL_SYNTAX: 'illegal syntax'>
    """
    answer = last_answer(completion_text(completion))
    if answer is None:
        return Verdict.NO_ANSWER
    try:
        numbers, goal = _as_numbers(nums), _as_int(target)
    except (TypeError, ValueError, AttributeError):
        return Verdict.BAD_ROW
    if len(answer) > MAX_ANSWER_CHARS:
        return Verdict.ILLEGAL_SYNTAX
    try:
        literals, template, claim = split_equation(answer)
    except ExpressionError:
        return Verdict.ILLEGAL_SYNTAX
    if sorted(literals) != sorted(numbers):
        return Verdict.WRONG_NUMBERS
    if claim is not None and claim != goal:
        return Verdict.WRONG_VALUE
    ratio = ratio_of(template, literals)
    if ratio is None:  # division by zero
        return Verdict.WRONG_VALUE
    numerator, denominator = ratio
    return Verdict.CORRECT if numerator == goal * denominator else Verdict.WRONG_VALUE


def countdown_accuracy_reward(
    completions: Sequence[Any], nums: Sequence[Any], target: Sequence[Any], **kwargs: Any
) -> list[float]:
    """1.0 where the last answer is an equation over exactly ``nums`` equal to ``target``, else 0.0.

    >>> countdown_accuracy_reward(["<answer>1.5*2</answer>", "<answer>(1+5)/2</answer>"],
    ...                           nums=[[1, 5, 2]] * 2, target=[3, 3])
    [0.0, 1.0]
    """
    return [float(judge(c, n, t) is Verdict.CORRECT) for c, n, t in zip(completions, nums, target, strict=True)]


def countdown_shaped_reward(
    completions: Sequence[Any], nums: Sequence[Any], target: Sequence[Any], **kwargs: Any
) -> list[float]:
    """Like the accuracy reward, plus 0.1 for a legal equation over the right numbers that misses.

    >>> countdown_shaped_reward(["<answer>1+5+2</answer>"], nums=[[1, 5, 2]], target=[3])
    [0.1]
    """
    credit = {Verdict.CORRECT: 1.0, Verdict.WRONG_VALUE: SHAPED_PARTIAL_CREDIT}
    return [credit.get(judge(c, n, t), 0.0) for c, n, t in zip(completions, nums, target, strict=True)]
