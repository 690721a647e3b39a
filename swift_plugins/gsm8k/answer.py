"""The final number a GSM8K completion states, as an exact rational, by one written-down rule.

The rule, in order:

1. **The answer is the last ``<answer>…</answer>`` block** (:func:`~swift_plugins.core.tags.last_answer`).
   A completion without one states no answer, even if it ends in a number: the prompt asks for the
   block, a truncated completion's last number is usually an intermediate result, and a reward that
   read bare text would pay for ignoring the format. An answer longer than ``MAX_ANSWER_CHARS``
   is refused unread (that bounds the time spent on any completion).
2. **Numbers** are ASCII digits, written ``72``, ``-3`` (``-`` or ``−`` glued to the digits and not
   to a word: ``48-24`` is two numbers), ``72.5``, ``.5``, ``72.`` (a full stop after a number ends
   the sentence), ``1,000`` or ``1,234,567.5`` (commas between groups of exactly three digits), or
   ``-$5``, ``3/4`` (two integers: an exact fraction; ``\\frac{3}{4}`` too; LaTeX's ``1{,}000`` and ``1\\,000``
   are ``1,000``; thousands split by a plain space are two numbers). Letters glued to the end are a unit
   (``72kg``, ``5th``, ``72元``); digits glued to a letter on their left belong to a word (``x2``,
   ``H2O``, ``Q3``) and are no number. Everything else around numbers is ignored: ``$72``, ``72%``,
   ``72 dollars``, ``**72**``, ``\\boxed{72}``, ``#### 72``, ``The answer is 72.``
3. **Malformed numbers refuse the answer**: ``1,00``, ``1000,000``, ``1.2.3``, ``10/12/2023``,
   ``1e3``, ``3/0``, non-ASCII digits (``７２``): a reader cannot tell which value is meant.
4. **Hedges refuse the answer**: the words *or, about, around, approximately, approx, roughly,
   nearly, almost, maybe, perhaps, probably, possibly, between, either, least, most* (case-insensitive,
   whole words) and the signs ``~ ≈ ±`` state an estimate or a bound, not a value.
5. **Equations**: with ``=``, the final value is what follows the last ``=``; the text before it is
   working. Each earlier side that states a single number must state that same value
   (``48 + 24 = 72`` and ``x = 72`` are 72, ``73 = 72`` is refused).
6. **One value**: the final part must state exactly one value, any number of times (``72 (72.0)``
   is 72). Two different values (``72 or 73``, ``72\\n73``, ``70-75``, ``10:30``, a sentence with
   several numbers) are refused: the reward cannot know which one is final and never pays for a
   spread of guesses. No number at all is no answer.

Values are :class:`fractions.Fraction`, never floats: ``72``, ``72.0``, ``$72`` and ``72.`` are equal,
``0.1 + 0.2``-style rounding cannot happen, and ``1/3`` is not ``0.333``. Scanning is linear in the
answer's length (one regular expression without nested repetition); nothing here raises on any text.

>>> final_number("<reasoning>48 / 2 = 24 in May.</reasoning><answer>48 + 24 = $72</answer>")
Fraction(72, 1)
>>> final_number("<answer>72 or 73</answer>") is None
True
"""

from __future__ import annotations

import enum
import re
from fractions import Fraction
from functools import lru_cache

from ..core.errors import DataError
from ..core.tags import last_answer

__all__ = [
    "MAX_ANSWER_CHARS",
    "Verdict",
    "answer_value",
    "final_number",
    "reference_number",
    "reference_value",
]

MAX_ANSWER_CHARS = 1024


class Verdict(str, enum.Enum):
    """Why a completion's answer did or did not match its reference; the value is the label shown (as Countdown's)."""

    CORRECT = "correct"
    WRONG_VALUE = "wrong value"  # one readable value, not the reference
    NO_ANSWER = "no answer"  # no <answer>…</answer> block, not text, or a block with no number
    AMBIGUOUS = "ambiguous"  # two different values, a hedge, or too long to read
    MALFORMED = "malformed number"  # 1,00  1.2.3  1e3  3/0  ７２
    BAD_ROW = "bad row"  # the reference cannot be read


# A candidate number: digits (or a point and digits), with a glued minus sign (``-$5`` too), and whatever word
# characters, points, commas and slashes follow. Nothing glued on its left: no word character
# (``x2``), point, comma or slash. One character class repeated once: linear, no backtracking.
_CANDIDATE = re.compile(r"(?<![\w.,/])([-\u2212]?)\$?(\.?\d[\w.,/]*)")
# What a candidate must be, after trailing full stops and commas are dropped: a number, then
# letters only (a unit).
_NUMBER = re.compile(r"([0-9]+)/([0-9]+)|[0-9]{1,3}(?:,[0-9]{3})+(?:\.[0-9]+)?|[0-9]+(?:\.[0-9]+)?|\.[0-9]+")
_HEDGE = re.compile(
    r"\b(?:or|about|around|approx(?:imately)?|roughly|nearly|almost|maybe|perhaps|probably|possibly"
    r"|between|either|least|most)\b|[~≈±]"  # searched in the lower-cased answer: faster than IGNORECASE
)
_LATEX_FRACTION = re.compile(r"\\[dt]?frac\{([^{}]*)\}\{([^{}]*)\}")


def _plain(latex: str) -> str:
    """LaTeX numbers as plain text: ``\\frac{3}{4}`` is ``3/4``, ``1{,}000`` and ``1\\,000`` are ``1,000``/``1000``."""
    plain = _LATEX_FRACTION.sub(lambda match: f"{match[1].strip()}/{match[2].strip()}", latex)
    return plain.replace("{,}", ",").replace("\\,", "")


def _number(sign: str, body: str) -> int | Fraction | None:
    """The value of one candidate number, or None if it is malformed."""
    body = body.rstrip(".,")
    if body.isdigit() and body.isascii():  # most numbers: no need for the full grammar
        return -int(body) if sign else int(body)
    match = _NUMBER.match(body)
    if match is None or not (match.end() == len(body) or body[match.end() :].isalpha()):
        return None
    if match.group(1) is not None:
        denominator = int(match.group(2))
        if denominator == 0:
            return None
        value: int | Fraction = Fraction(int(match.group(1)), denominator)
    else:
        whole, _, decimals = match.group().replace(",", "").partition(".")
        decimals = decimals.rstrip("0")
        value = Fraction(int(whole + decimals), 10 ** len(decimals)) if decimals else int(whole or "0")
    return -value if sign else value


def _values(text: str) -> list[int | Fraction] | None:
    """Every number in ``text`` in order, or None if one is malformed."""
    values = []
    for sign, body in _CANDIDATE.findall(text):
        value = _number(sign, body)
        if value is None:
            return None
        values.append(value)
    return values


def answer_value(answer: str) -> Fraction | Verdict:
    """The one value an answer block's content states, or the verdict saying why there is none.

    >>> answer_value("She earned $1,000.50 in May.")
    Fraction(2001, 2)
    >>> answer_value("3/4 of 96 = 72 cookies")
    Fraction(72, 1)
    >>> answer_value("1,00")
    <Verdict.MALFORMED: 'malformed number'>
    >>> answer_value("about 72")
    <Verdict.AMBIGUOUS: 'ambiguous'>
    """
    if len(answer) > MAX_ANSWER_CHARS:
        return Verdict.AMBIGUOUS
    if answer.isascii() and answer.isdigit():  # the common case, "72": no scanning needed
        return Fraction(int(answer))
    if "\\" in answer or "{" in answer:
        answer = _plain(answer)
    if _HEDGE.search(answer.lower()):
        return Verdict.AMBIGUOUS
    *working, final = answer.split("=")
    values = _values(final)
    if values is None:
        return Verdict.MALFORMED
    if not values:
        return Verdict.NO_ANSWER
    value = values[0]
    if any(other != value for other in values):
        return Verdict.AMBIGUOUS
    for side in working:
        stated = _values(side)
        if stated is None:
            return Verdict.MALFORMED
        if len(stated) == 1 and stated[0] != value:
            return Verdict.AMBIGUOUS
    return value if isinstance(value, Fraction) else Fraction(value)


def final_number(text: str | None) -> Fraction | None:
    """The final value a completion's answer states, by the module's rule; None if it states none.

    >>> final_number("<answer>**$1,000**</answer>")
    Fraction(1000, 1)
    >>> final_number("The answer is 72.") is None
    True
    """
    answer = last_answer(text)
    if answer is None:
        return None
    value = answer_value(answer)
    return value if isinstance(value, Fraction) else None


@lru_cache(maxsize=4096)
def reference_value(final_answer: str) -> Fraction:
    """The reference number of a ``final_answer`` column (``"72"``, ``"1,000"``, ``"-3"``, ``"0.5"``).

    Raises DataError unless the text is exactly one number.

    >>> reference_value(" 1,000 ")
    Fraction(1000, 1)
    """
    text = final_answer.strip()
    values = _values(text)
    if not values or len(values) != 1 or _CANDIDATE.fullmatch(text) is None:
        raise DataError(f"the reference answer {final_answer!r} is not one number")
    return Fraction(values[0])


def reference_number(answer_field: str) -> Fraction:
    """The reference number of a raw GSM8K ``answer`` field: the number after its ``####``.

    Raises DataError when there is no ``####`` or no single number after it.

    >>> reference_number("Natalia sold 48/2 = <<48/2=24>>24 clips in May.\\n#### 72")
    Fraction(72, 1)
    """
    _, separator, tail = answer_field.rpartition("####")
    if not separator:
        raise DataError(f"the GSM8K answer has no '#### N' final line: {answer_field[-80:]!r}")
    return reference_value(tail)
