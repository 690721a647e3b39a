"""Cold-start SFT rows: worked Countdown solutions in the ``<think>…</think><answer>…</answer>`` format.

A pretrained chat model answers the Countdown prompt in prose, so GRPO alone sees no reward at
first. As DeepSeek-R1's cold start did, a short SFT on worked examples teaches the format. The
thinking is written from the solution itself: first a plain attempt (the numbers added up in
order) checked against the target and rejected when it misses, then each operation of the solution
with its intermediate result, so every line is arithmetic the model can check.

>>> print(assistant_turn([6, 2, 6], 24, "(6 - 2) * 6"))
<think>
6 + 2 + 6 = 14, not 24.
6 - 2 = 4. 4 * 6 = 24.
</think>
<answer>(6 - 2) * 6 = 24</answer>
"""

from __future__ import annotations

import operator
from collections.abc import Iterable, Iterator, Sequence
from fractions import Fraction
from typing import Any

from .data import prompt_for
from .expression import parse_equation

__all__ = ["assistant_turn", "sft_rows", "solution_steps"]

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


def assistant_turn(nums: Sequence[int], target: int, solution: str) -> str:
    """The worked answer to one puzzle: a checked first attempt, the solution's steps, the equation."""
    attempt = sum(nums)
    lines = [] if attempt == target else [f"{' + '.join(map(str, nums))} = {attempt}, not {target}."]
    lines.append(". ".join(solution_steps(solution)) + ".")
    return "<think>\n" + "\n".join(lines) + f"\n</think>\n<answer>{solution} = {target}</answer>"


def sft_rows(rows: Iterable[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """swift SFT rows (``messages``: the Countdown prompt, then the worked answer) from generated rows.

    >>> row = next(sft_rows([{"nums": [1, 2, 3], "target": 7, "solution": "1 + 2 * 3"}]))
    >>> [message["role"] for message in row["messages"]]
    ['user', 'assistant']
    """
    for row in rows:
        nums, target = list(row["nums"]), int(row["target"])
        yield {
            "messages": [
                {"role": "user", "content": prompt_for(nums, target)},
                {"role": "assistant", "content": assistant_turn(nums, target, row["solution"])},
            ]
        }
