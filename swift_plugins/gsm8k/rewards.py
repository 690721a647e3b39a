"""GSM8K rewards as plain functions: no trainer import, usable from ms-swift and TRL alike.

Every reward takes ``completions`` (strings, or chat-message lists whose last ``content`` is
scored) plus dataset columns as keyword lists, and returns one float per completion; none raises.
The accuracy reward reads the reference from the ``final_answer`` column (``"72"``), or, when a
row has none, from a raw GSM8K ``answer`` column after its ``####``, so TRL users can pass raw rows.

>>> gsm8k_accuracy_reward(["<reasoning>48 + 24</reasoning><answer>$72</answer>"], final_answer=["72"])
[1.0]
>>> gsm8k_accuracy_reward(["<answer>72</answer>"], answer=["Natalia sold 48 + 24 = 72 clips.\\n#### 72"])
[1.0]
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from typing import Any

from ..core.errors import DataError
from ..core.tags import completion_text, is_two_block, last_answer
from .answer import Verdict, answer_value, reference_number, reference_value

__all__ = [
    "Verdict",
    "gsm8k_accuracy_reward",
    "judge",
    "reasoning_answer_format_reward",
]


def _reference(final_answer: Any, answer: Any) -> Fraction | None:
    """The row's reference number, from ``final_answer`` first, else from a raw ``answer``; None if unreadable."""
    try:
        if isinstance(final_answer, str):
            return reference_value(final_answer)
        if isinstance(final_answer, int) and not isinstance(final_answer, bool):
            return Fraction(final_answer)
        if final_answer is None and isinstance(answer, str):
            return reference_number(answer)
    except DataError:
        return None
    return None


def judge(completion: Any, reference: Any, answer: Any = None) -> Verdict:
    """Why one completion does or does not state the reference number.

    ``reference`` is a ``final_answer`` value (``"72"`` or an int); when it is None, ``answer``
    is read as a raw GSM8K answer field (``"… #### 72"``).

    >>> judge("<answer>72.0</answer>", "72")
    <Verdict.CORRECT: 'correct'>
    >>> judge("<answer>72 or 73</answer>", "72").value
    'ambiguous'
    """
    answer_text = last_answer(completion_text(completion))
    if answer_text is None:
        return Verdict.NO_ANSWER
    expected = _reference(reference, answer)
    if expected is None:
        return Verdict.BAD_ROW
    value = answer_value(answer_text)
    if isinstance(value, Verdict):
        return value
    return Verdict.CORRECT if value == expected else Verdict.WRONG_VALUE


def gsm8k_accuracy_reward(
    completions: Sequence[Any],
    final_answer: Sequence[Any] | None = None,
    answer: Sequence[Any] | None = None,
    **kwargs: Any,
) -> list[float]:
    """1.0 where the last answer block states exactly the reference number, else 0.0.

    >>> gsm8k_accuracy_reward(["<answer>1,000</answer>", "<answer>1,00</answer>", "1000"], final_answer=["1000"] * 3)
    [1.0, 0.0, 0.0]
    """
    references = final_answer if final_answer is not None else [None] * len(completions)
    raw = answer if answer is not None else [None] * len(completions)
    return [float(judge(c, r, a) is Verdict.CORRECT) for c, r, a in zip(completions, references, raw, strict=True)]


def reasoning_answer_format_reward(completions: Sequence[Any], **kwargs: Any) -> list[float]:
    """1.0 for each completion shaped ``<reasoning>…</reasoning><answer>…</answer>``, only whitespace around.

    The same strictness as ``think_answer_format`` (see :func:`~swift_plugins.core.tags.is_two_block`).

    >>> reasoning_answer_format_reward(["<reasoning>48 + 24</reasoning>\\n<answer>72</answer>\\n", "72"])
    [1.0, 0.0]
    """
    return [float(is_two_block(completion_text(c), "reasoning")) for c in completions]
