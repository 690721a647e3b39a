"""The false-negative search: each row's gold answer in the forms a right answer takes, scored as the reward scores it.

A reward must pay every right answer: one scored 0 teaches the model that the right answer is wrong. For a sample
of one dataset's rows, :func:`forms` writes each gold answer in the forms its dataset's questions allow
(:data:`FAMILIES`, by dataset; docs/tasks.md says why each): spaces around it (every dataset); a trailing period,
quotes or bold around a one-word answer; another case where case carries nothing; the same number written another
way (a fraction, ``.5``, a trailing zero, a rounding within reasoning-gym's tolerance); list items with other
spacing or in another order where order carries nothing; a grid's or a sequence's cells spaced otherwise; an
expression's terms and factors reordered, another constant of integration or none, ``E**(u)`` for ``exp(u)``,
``ln`` for ``log``. :func:`search` scores them with the
scorer it is given (:func:`through_the_reward`: a whole completion, its answer extracted and scored by the reward's
worker function; :func:`full_credit_of_reasoning_gym` beside it) and counts, per form, the rows where it scored
below 1.0. The variable names a setting chooses are searched with rows generated with that setting.

>>> [text for _, text in forms("game_of_life_halting", "True")]
['  True\\n', 'True.', "'True'", '"True"', '**True**', 'true', 'TRUE']
>>> [text for _, text in forms("simple_integration", "-2*x**3/3 + 3*x + C")][1:4]
['C + 3*x - 2*x**3/3', '-2*x**3/3 + x*3 + C', '-2*x**3/3 + 3*x + K']
>>> rows = [{"gym_dataset": "coin_flip", "answer": "0.5"}]
>>> tried, missed = search(rows, lambda answers, rows: [float(a == "0.5") for a in answers])
>>> sorted(missed)  # doctest: +NORMALIZE_WHITESPACE
['a fraction', 'a leading dot', 'a trailing zero', 'rounded to 4 places', 'rounded to 6 places',
 'spaces around it']
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from fractions import Fraction
from typing import Any

from .scorers import CASELESS, LISTS, WORDS

__all__ = ["FAMILIES", "forms", "full_credit_of_reasoning_gym", "search", "through_the_reward"]

Scorer = Callable[[list[str], Sequence[dict[str, Any]]], list[float]]
Form = tuple[str, str]  # (what it is, the answer written so)

_WORD = re.compile(r"[A-Za-z][A-Za-z'-]*")
_EXPRESSIONS = ("countdown", "puzzle24", "polynomial_multiplication")
_INTEGRATIONS = ("simple_integration", "intermediate_integration")
FAMILIES: dict[str, tuple[str, ...]] = {
    **{name: ("word", "case") if name in CASELESS else ("word",) for name in WORDS},
    **{name: ("terms",) for name in _EXPRESSIONS},
    **{name: ("terms", "constant", "functions") for name in _INTEGRATIONS},
    **{name: ("list spacing",) for name in LISTS},
    "game_of_life_halting": ("word", "case"),  # its own scorer (scorers.py)
    "coin_flip": ("decimal", "fraction", "rounding"),
    "decimal_chain_sum": ("decimal",),
    "decimal_arithmetic": ("decimal",),
    "advanced_geometry": ("decimal", "list spacing"),
    "number_format": ("decimal",),
    "polynomial_equations": ("list spacing", "list order"),
    "word_ladder": ("list spacing",),
    "cryptarithm": ("list spacing", "list order"),
    "prime_factorization": ("list order",),
    **{name: ("cell spacing",) for name in ("binary_matrix", "n_queens", "spiral_matrix")},
}  # every other dataset: spaces around the answer only


def _word(gold: str) -> Iterator[Form]:
    if _WORD.fullmatch(gold):
        yield from (("a trailing period", f"{gold}."), ("in quotes", f"'{gold}'"), ("in double quotes", f'"{gold}"'),
                    ("in bold", f"**{gold}**"))  # fmt: skip


def _case(gold: str) -> Iterator[Form]:
    yield from (("lower case", gold.lower()), ("upper case", gold.upper()))


def _number(gold: str) -> Fraction | None:
    try:
        return Fraction(gold.strip())
    except (ValueError, ZeroDivisionError):
        return None


def _decimal(gold: str) -> Iterator[Form]:
    if re.fullmatch(r"-?\d+\.\d+", gold):
        yield "a trailing zero", f"{gold}0"
        if re.fullmatch(r"-?0\.\d+", gold):
            yield "a leading dot", gold.replace("0.", ".", 1)


def _fraction(gold: str) -> Iterator[Form]:
    value = _number(gold)
    if value is not None and value.denominator != 1:
        yield ("a fraction", f"{value.numerator}/{value.denominator}") if "/" not in gold else \
            ("a decimal", f"{float(value)!r}")  # fmt: skip


def _rounding(gold: str) -> Iterator[Form]:
    value = _number(gold)
    for places in (4, 6) if value is not None else ():  # reasoning-gym's tolerance, 1e-4: 4 places or more
        rounded = f"{float(value):.{places}f}"
        if Fraction(rounded) != 0:  # a probability rounded to 0 is no answer (the hack coin_flip's scorer closed)
            yield f"rounded to {places} places", rounded


def _items(gold: str) -> tuple[str, list[str]] | None:
    """The separator and items of a list answer written ``a, b`` or ``a,b`` or ``a × b`` (not inside brackets)."""
    inner = gold[1:-1] if gold[:1] in "[(" and gold[-1:] in "])" else gold
    for separator in (" × ", ", ", ","):
        if separator in inner and not re.search(r"[\[(]", inner):
            return separator, inner.split(separator)
    return None


def _list_spacing(gold: str) -> Iterator[Form]:
    found = _items(gold)
    if found and found[0] in (", ", ","):
        other = "," if found[0] == ", " else ", "
        yield "list items spaced otherwise", gold.replace(found[0], other)


def _list_order(gold: str) -> Iterator[Form]:
    found = _items(gold)
    if found and len(set(found[1])) > 1:
        yield "list items in another order", gold.replace(found[0].join(found[1]), found[0].join(found[1][::-1]))


def _cell_spacing(gold: str) -> Iterator[Form]:
    if " " in gold:
        yield "cells two spaces apart", gold.replace(" ", "  ")
    if "\n" in gold:
        yield "lines ending in a space", gold.replace("\n", " \n")


def _binary(body: str, index: int) -> bool:
    """Whether the operator at ``body[index]`` joins two operands (not a sign; a ``*`` not part of ``**``)."""
    if body[index] == "*":
        return "*" not in (body[index - 1 : index], body[index + 1 : index + 2])
    before = body[:index].rstrip()
    return before[-1:].isalnum() or before[-1:] in ")."


def _split(text: str, operators: str) -> list[tuple[str, str]]:
    """``text`` split at the binary ``operators`` outside parentheses: ``[(operator, part), ...]``, the first one's
    operator its sign or empty.

    >>> _split("-2*x**3/3 + (x - 1)", "+-"), _split("2*x**3", "*")
    ([('-', '2*x**3/3'), ('+', '(x - 1)')], [('', '2'), ('*', 'x**3')])
    """
    body, sign = text.strip(), ""
    if body[:1] in ("+", "-") and "-" in operators:
        sign, body = body[0], body[1:].lstrip()
    parts, depth, start = [], 0, 0
    for index, char in enumerate(body):
        depth += (char == "(") - (char == ")")
        if depth == 0 and char in operators and _binary(body, index):
            parts.append((sign, body[start:index].strip()))
            sign, start = char, index + 1
    return [*parts, (sign, body[start:].strip())]


def _joined(terms: list[tuple[str, str]]) -> str:
    first, *rest = terms
    return ("-" if first[0] == "-" else "") + first[1] + "".join(f" {sign} {body}" for sign, body in rest)


def _reversed_factors(term: str) -> str:
    factors = [part for _, part in _split(term, "*")]
    return term if "/" in term or len(factors) < 2 else "*".join(reversed(factors))


def _terms(gold: str) -> Iterator[Form]:
    terms = _split(gold, "+-")
    if len(terms) > 1:
        yield "terms reordered", _joined([("+" if sign != "-" else "-", body) for sign, body in terms[::-1]])
    factored = [(sign, _reversed_factors(body)) for sign, body in terms]
    if factored != terms:
        yield "factors reordered", _joined(factored)


def _constant(gold: str) -> Iterator[Form]:
    if gold.endswith(" + C"):
        for name in ("K", "c", "C1", "D"):
            yield f"constant {name}", f"{gold[:-1]}{name}"
        yield "no constant", gold[:-4]


def _functions(gold: str) -> Iterator[Form]:
    if "exp(" in gold:
        yield "E**(u) for exp(u)", gold.replace("exp(", "E**(")
    if "log(" in gold:
        yield "ln for log", gold.replace("log(", "ln(")


_WRITERS: dict[str, Callable[[str], Iterator[Form]]] = {
    "word": _word, "case": _case, "decimal": _decimal, "fraction": _fraction, "rounding": _rounding,
    "list spacing": _list_spacing, "list order": _list_order, "terms": _terms, "constant": _constant,
    "functions": _functions, "cell spacing": _cell_spacing,
}  # fmt: skip


def forms(dataset: str, gold: str) -> list[Form]:
    """The forms of the right answer ``gold`` that ``dataset``'s questions allow, each different from it."""
    found = [("spaces around it", f"  {gold}\n")]
    for family in FAMILIES.get(dataset, ()):
        found += [(label, text) for label, text in _WRITERS[family](gold) if text != gold]
    return found


def through_the_reward(answers: list[str], rows: Sequence[dict[str, Any]]) -> list[float]:
    """What the trainer's reward scores each answer written as a completion's ``<answer>`` block after its thinking:
    the answer extracted as the reward extracts it, and scored by the reward's worker function (in this process)."""
    from ..core.tags import last_answer
    from .bounded import request
    from .worker import score_request

    completions = [f"<think>Working it out.</think>\n<answer>{answer}</answer>" for answer in answers]
    return [score_request(request(row["gym_dataset"], last_answer(completion), row)).get("score", 0.0)
            for completion, row in zip(completions, rows, strict=True)]  # fmt: skip


def full_credit_of_reasoning_gym(answers: list[str], rows: Sequence[dict[str, Any]]) -> list[float]:
    """reasoning-gym's own ``score_answer``, 1.0 where it gives full credit (an error: 0), without the guard: only
    for answers that are no payload (the forms of gold answers)."""
    from reasoning_gym import create_dataset

    from .data import entry_of
    from .entries import decode

    def full(dataset: Any, answer: str, row: dict[str, Any]) -> float:
        try:
            return float(dataset.score_answer(answer, entry_of(row["question"], row["answer"], row["metadata"])) >= 1)
        except Exception:  # a scorer that cannot read an answer raises
            return 0.0

    datasets = {row["gym_config"]: create_dataset(row["gym_dataset"], **decode(row["gym_config"])) for row in rows}
    return [full(datasets[row["gym_config"]], answer, row) for answer, row in zip(answers, rows, strict=True)]


def search(rows: Sequence[dict[str, Any]], score: Scorer) -> tuple[Counter[str], Counter[str]]:
    """``(tried, missed)``: per form, the rows (with a gold answer) it was written for, and those where ``score``
    gave it less than 1.0."""
    written = [(row, label, text) for row in rows if row.get("answer") for label, text in
               forms(row["gym_dataset"], row["answer"])]  # fmt: skip
    scores = score([text for _, _, text in written], [row for row, _, _ in written]) if written else []
    tried = Counter(label for _, label, _ in written)
    missed = Counter(label for (_, label, _), value in zip(written, scores, strict=True) if value < 1.0)
    return tried, missed
