"""Cold-start SFT rows: worked Countdown solutions in the ``<think>…</think><answer>…</answer>`` format.

A pretrained chat model answers the Countdown prompt in prose, so GRPO alone sees no reward at
first. As DeepSeek-R1's cold start did, a short SFT on worked examples teaches the format. The
thinking is written from the solution itself: first the plainest attempt, all the numbers added
up, checked against the target (and kept when it hits), then each operation of the solution with
its intermediate result, so every line is arithmetic the model can check. Of all the solutions of
a puzzle the simplest is shown (no division if possible, then fewest parentheses, then additions
before subtractions before multiplications), so that similar puzzles get similar answers.

>>> print(assistant_turn([6, 2, 6], 24))
<think>
6 + 2 + 6 = 14, not 24.
6 + 6 = 12. 12 * 2 = 24.
</think>
<answer>(6 + 6) * 2 = 24</answer>
"""

from __future__ import annotations

import operator
from collections.abc import Iterable, Iterator, Sequence
from fractions import Fraction
from typing import Any

from ..core.errors import DataError
from .data import prompt_for
from .expression import parse_equation
from .solver import all_solutions

__all__ = ["assistant_turn", "sft_rows", "simplest_solution", "solution_steps"]

_RANK = {"+": 0, "-": 1, "*": 2, "/": 3}
_OPERATIONS = {"+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv}


def _text(value: Fraction) -> str:
    return str(value.numerator) if value.denominator == 1 else f"{value.numerator}/{value.denominator}"


def solution_steps(solution: str) -> list[str]:
    """Each operation of ``solution`` in the order it is evaluated, over the intermediate results.

    >>> solution_steps("6 / (1 - 3 / 4)")
    ['3 / 4 = 3/4', '1 - 3/4 = 1/4', '6 / 1/4 = 24']
    """
    equation = parse_equation(solution)
    stack: list[Fraction] = []
    steps = []
    for token in equation.template:
        if not isinstance(token, str):
            stack.append(Fraction(equation.literals[token]))
            continue
        right, left = stack.pop(), stack.pop()
        value = _OPERATIONS[token](left, right)
        steps.append(f"{_text(left)} {token} {_text(right)} = {_text(value)}")
        stack.append(value)
    return steps


def simplest_solution(nums: Sequence[int], target: int) -> str:
    """The solution a reader finds easiest to follow; :class:`DataError` if the puzzle has none.

    >>> simplest_solution([3, 13, 11], 21), simplest_solution([2, 12, 1], 26)
    ('13 + 11 - 3', '2 * (12 + 1)')
    """
    solutions = all_solutions(nums, target)
    if not solutions:
        raise DataError(f"{list(nums)} cannot make {target} with each number used once")
    return min(solutions, key=lambda text: (text.count("/"), text.count("("), [_RANK[c] for c in text if c in _RANK]))


def assistant_turn(nums: Sequence[int], target: int) -> str:
    """The worked answer to one puzzle: the sum checked first, the simplest solution's steps, the equation."""
    total, added = sum(nums), " + ".join(map(str, nums))
    attempt = f"{added} = {total}"
    if total == target:
        return f"<think>\n{attempt}.\n</think>\n<answer>{added} = {target}</answer>"
    solution = simplest_solution(nums, target)
    steps = ". ".join(solution_steps(solution))
    return f"<think>\n{attempt}, not {target}.\n{steps}.\n</think>\n<answer>{solution} = {target}</answer>"


def sft_rows(rows: Iterable[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """swift SFT rows (``messages``: the Countdown prompt, then the worked answer) from puzzle rows.

    >>> row = next(sft_rows([{"nums": [1, 2, 3], "target": 7}]))
    >>> [message["role"] for message in row["messages"]]
    ['user', 'assistant']
    """
    for row in rows:
        nums, target = list(row["nums"]), int(row["target"])
        yield {
            "messages": [
                {"role": "user", "content": prompt_for(nums, target)},
                {"role": "assistant", "content": assistant_turn(nums, target)},
            ]
        }
