"""Cold-start SFT rows for a gym task: the question, then its gold answer in the ``<think>…</think><answer>…</answer>``
frame.

reasoning-gym gives gold answers, not worked solutions, so the think part holds only what the row itself proves.
Where the entry's metadata carries a worked solution (gsm_symbolic's ``answer_cot``) it is the think part. Where
it carries the arithmetic ``expression`` whose value is the gold answer (basic_arithmetic, chain_sum, products),
each operation is one line, computed exactly, in the order it is evaluated. Where it carries the counts of each
animal (leg_counting), each kind's legs come from the dataset's own table, then their sum. Where it carries the words
and the letter to count (letter_counting), each word is spelled out with the count of that letter in it, then their
sum. Otherwise the think part says that no steps are shown: a cold start teaches the frame, and a think made up for
it would teach made-up reasoning.

>>> row = {"gym_dataset": "chain_sum", "gym_config": "{}", "question": "State the final answer: 4 - 9 + 2 =",
...        "answer": "-3", "metadata": '{"expression": "4 - 9 + 2"}'}
>>> print(assistant_turn(row))
<think>
4 - 9 = -5. -5 + 2 = -3.
</think>
<answer>-3</answer>
>>> print(assistant_turn({**row, "metadata": "{}"}))
<think>
No worked steps: the answer follows.
</think>
<answer>-3</answer>
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from fractions import Fraction
from typing import Any

from ..core.errors import DataError
from .data import NO_GOLD, prompt_for
from .entries import decode
from .scorers import arithmetic

__all__ = ["NO_STEPS", "assistant_turn", "expression_steps", "leg_steps", "letter_steps", "sft_rows"]

NO_STEPS = "No worked steps: the answer follows."
_WORKED_SOLUTION = "answer_cot"  # gsm_symbolic: the worked solution, ending with "#### <answer>"


def expression_steps(expression: str, answer: str) -> list[str] | None:
    """Each operation of ``expression`` over exact values, if its value is ``answer``; else None.

    The expression is parsed, never run: only integers, ``+ - * /`` and signs are read (:func:`.scorers.arithmetic`).

    >>> expression_steps("-15 / 5 + -( -2 * 4 )", "5")
    ['-15 / 5 = -3', '-2 * 4 = -8', '-(-8) = 8', '-3 + 8 = 5']
    >>> expression_steps("2 * 3", "7"), expression_steps("__import__('os')", "0")
    (None, None)
    """
    steps: list[str] = []
    found = arithmetic(expression, steps)
    try:
        return steps if found is not None and steps and found[0] == Fraction(answer.strip()) else None
    except (ValueError, ZeroDivisionError):  # an answer that is no number
        return None


def leg_steps(animals: Any, answer: str) -> list[str] | None:
    """leg_counting's steps: each kind of animal's legs, from reasoning-gym's own table, then their sum, if it is
    ``answer``; else None.

    >>> leg_steps({"grasshopper": 2, "jellyfish": 3}, "12")
    ['2 grasshoppers: 6 legs each, 2 * 6 = 12', '3 jellyfishs: 0 legs each, 3 * 0 = 0', '12 + 0 = 12']
    >>> leg_steps({"chicken": 1}, "2"), leg_steps({"chicken": 1}, "3"), leg_steps({"unicorn": 1}, "4")
    (['1 chicken: 2 legs each, 1 * 2 = 2'], None, None)
    """
    from reasoning_gym.arithmetic.leg_counting import ANIMALS

    if not isinstance(animals, dict) or not animals or not set(animals) <= set(ANIMALS):
        return None
    if not all(isinstance(count, int) and count > 0 for count in animals.values()):
        return None
    legs = [count * ANIMALS[name] for name, count in animals.items()]
    steps = [
        f"{count} {name}{'s' if count > 1 else ''}: {ANIMALS[name]} legs each, {count} * {ANIMALS[name]} = {total}"
        for (name, count), total in zip(animals.items(), legs, strict=True)
    ]
    if len(legs) > 1:
        steps.append(" + ".join(map(str, legs)) + f" = {sum(legs)}")
    return steps if str(sum(legs)) == answer.strip() else None


def letter_steps(words: Any, letter: Any, answer: str) -> list[str] | None:
    """letter_counting's steps: each word spelled out in lower case with the count of ``letter`` in it, as
    reasoning-gym counts it (case aside), then the sum of the counts, if it is ``answer``; else None.

    >>> letter_steps(["Only", "a", "moon"], "o", "3")
    ['only: o n l y has 1 "o"', 'a: a has 0 "o"', 'moon: m o o n has 2 "o"', '1 + 0 + 2 = 3']
    >>> letter_steps(["moon"], "o", "2"), letter_steps(["moon"], "o", "1"), letter_steps("moon", "o", "2")
    (['moon: m o o n has 2 "o"'], None, None)
    """
    if not isinstance(words, list) or not words or not all(isinstance(word, str) and word for word in words):
        return None
    if not isinstance(letter, str) or len(letter) != 1:
        return None
    lowered = [word.lower() for word in words]
    counts = [word.count(letter) for word in lowered]
    steps = [f'{word}: {" ".join(word)} has {count} "{letter}"' for word, count in zip(lowered, counts, strict=True)]
    if len(counts) > 1:
        steps.append(" + ".join(map(str, counts)) + f" = {sum(counts)}")
    return steps if str(sum(counts)) == answer.strip() else None


def _worked_solution(metadata: dict[str, Any], answer: str) -> str | None:
    """The dataset's own worked solution, without its final ``#### answer`` line, if it ends with the answer."""
    text = metadata.get(_WORKED_SOLUTION)
    if not isinstance(text, str):
        return None
    body, mark, final = text.rpartition("####")
    return body.strip() if mark and body.strip() and final.strip() == answer.strip() else None


def _think(dataset: str, metadata: dict[str, Any], answer: str) -> str:
    worked = _worked_solution(metadata, answer)
    if worked is not None:
        return worked
    expression = metadata.get("expression")
    if isinstance(expression, str):
        steps = expression_steps(expression, answer)
    elif dataset == "leg_counting":
        steps = leg_steps(metadata.get("animals"), answer)
    elif dataset == "letter_counting":
        steps = letter_steps(metadata.get("span"), metadata.get("target_letter"), answer)
    else:
        steps = None
    return ". ".join(steps) + "." if steps else NO_STEPS


def assistant_turn(row: dict[str, Any]) -> str:
    """The cold-start answer to one gym row (its columns): a think part from the row, then its gold answer;
    :class:`DataError` for a row without a gold answer."""
    answer = row.get("answer")
    if row.get("gym_dataset") in NO_GOLD or not isinstance(answer, str) or not answer.strip():
        raise DataError(f"gym:{row.get('gym_dataset')} rows have no gold answer to write a cold start from")
    think = _think(row["gym_dataset"], decode(row["metadata"]), answer)
    return f"<think>\n{think}\n</think>\n<answer>{answer.strip()}</answer>"


def sft_rows(rows: Iterable[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """swift SFT rows (``messages``: the gym prompt, then the cold-start answer) from gym rows.

    >>> row = {"gym_dataset": "spell_backward", "gym_config": "{}", "question": "Spell sun backward.",
    ...        "answer": "nus", "metadata": "{}"}
    >>> [message["role"] for message in next(sft_rows([row]))["messages"]]
    ['user', 'assistant']
    """
    for row in rows:
        yield {
            "messages": [
                {"role": "user", "content": prompt_for(row["question"])},
                {"role": "assistant", "content": assistant_turn(row)},
            ]
        }
