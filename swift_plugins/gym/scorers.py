"""The reward's scores: 1.0 for a correct answer, 0.0 for anything else, by the dataset's own rules.

reasoning-gym's scorers pay partial credit in many datasets, and the hack search (:mod:`.hacks`) finds it reachable
without solving: the default scorer pays ``len(gold) / len(answer)`` to any answer holding the gold one (so a run of
digits earns on every short numeric answer), arc_agi and countdown pay 0.05 to any answer, game_of_life 0.9 to a
constant grid. So the reward keeps full credit only (:func:`score`): reasoning-gym's 1.0, under the dataset's own
equivalences (its tolerances, its accepted spellings). Where even its full credit pays for an answer that ignores
the question, this module scores the dataset itself (:data:`SCORERS`, each a test in ``tests/gym/test_gym_hacks.py``
showing the hack scored 1.0 under reasoning-gym's scorer and 0 here, and gold answers still 1.0):

- ``game_of_life_halting``: reasoning-gym compares ``bool(answer)`` with ``bool(gold)``: any non-empty answer
  scores 1.0. Here: ``True`` or ``False`` (any case; a period, quotes or bold around it), the gold one.
- ``coin_flip``: reasoning-gym gives credit for a matching prefix over the shorter length: ``0`` is full credit for
  any probability below 0.1. Here: within its own tolerance of the gold probability (1e-4), and within 1% of it or
  the gold rounded to the decimals the answer is written with (:func:`rounds_to`: ``0.0020`` for 0.001953125; ``0``
  is no answer to a probability of 0.00006), compared exactly as fractions.
- ``complex_arithmetic``: ``nan`` scores ``min(1.0, exp(-nan)) = 1.0``. Here: a finite number, at its distance 0.
- ``puzzle24``: any expression making 24 of four numbers in range scores 1.0, whether or not they are the puzzle's
  (one answer, ``1*3*5 + 9``, solves every puzzle). Here: + - * / over exactly the puzzle's numbers, exactly 24.
- ``countdown``: reasoning-gym's rule (every number used once, the target reached), on the expression read by
  :func:`arithmetic` (+ - * / over integers, as the puzzles are made; nothing evaluated) instead of sympy's
  ``parse_expr`` (``eval`` underneath), and the target reached exactly, not within 1e-6.
- ``polynomial_multiplication``: reasoning-gym's rule (the answer's expression equals the gold's as sympy builds
  them: terms in any order, like terms collected, a product of polynomials not expanded), on expressions read by
  :func:`expression` instead of sympy's ``parse_expr``.
- ``simple_integration``, ``intermediate_integration``: reasoning-gym's check (sympy simplifies the answer's
  derivative less the integrand to 0), on expressions read by :func:`expression` (this package's reader: no
  ``eval`` underneath, unlike sympy's ``parse_expr``), and only once the two agree numerically at three points: a
  wrong answer is scored in about a millisecond, not in the 10 ms to a second sympy's ``simplify`` takes to fail
  (the hack search and a trainer meet mostly wrong answers). The reader takes any one-letter name (a constant of
  integration: ``K``, ``C1``), ``E**(u)`` and ``ln``, as sympy's parser does.
- ``binary_matrix``, ``n_queens``, ``spiral_matrix``, ``string_insertion``: reasoning-gym's full credit is the gold
  text (n_queens: one of the valid boards), and its scorer ``eval``s any other answer to give a Python list of the
  answer partial credit. Here the answer is compared with the gold as written and never evaluated: a grid row by row
  and cell by cell however it is spaced (:func:`cells`), the spiral's numbers in order, the string as it is.

A right answer is paid in every form its question allows (the false-negative search, :mod:`.forms`): where
reasoning-gym's full credit misses the answer as written, it is scored once more without what is no part of it
(:func:`_as_written_by_the_gold`): the marks around a one-word answer, the case of a label, a number's or a list's
spelling.

A dataset that cannot be made sound is not served (:data:`.generator.NOT_SERVED`).

>>> from reasoning_gym import create_dataset
>>> halting = create_dataset("game_of_life_halting", size=1, seed=0)
>>> entry = halting[0]
>>> [score("game_of_life_halting", halting, answer, entry) for answer in ("no idea", entry["answer"].lower())]
[0.0, 1.0]
"""

from __future__ import annotations

import ast
import cmath
import math
import operator
from collections.abc import Callable
from decimal import Decimal, InvalidOperation
from fractions import Fraction
from typing import Any

__all__ = ["CASELESS", "CONSTANTS", "FUNCTIONS", "LISTS", "NUMBERS", "SCORERS", "WORDS", "arithmetic", "cells",
           "expression", "literal", "rounds_to", "score", "unwrapped"]

INTEGRATION_POINTS = (37, 113, 271)  # hundredths: where an integration answer's derivative is compared numerically
# The functions the integrations' gold answers and integrands call (docs/tasks.md: the guard's names), ln (the
# natural log's other name, which sympy's parser reads as log) and the other trigonometric and hyperbolic functions a
# right answer may be written with; E and pi are the constants (intermediate_integration's question: "use exp(x) or
# E**(x)"), any other name a symbol, as sympy's parser reads them
FUNCTIONS = ("sin", "cos", "tan", "cot", "sec", "csc", "asin", "acos", "atan", "acot", "sinh", "cosh", "tanh", "asinh",
             "acosh", "atanh", "exp", "log", "ln", "sqrt", "Abs", "Integral")  # fmt: skip
CONSTANTS = ("E", "pi")


_OPERATIONS = {ast.Add: ("+", operator.add), ast.Sub: ("-", operator.sub), ast.Mult: ("*", operator.mul),
               ast.Div: ("/", operator.truediv)}  # fmt: skip


def _text(value: Fraction) -> str:
    return str(value.numerator) if value.denominator == 1 else f"{value.numerator}/{value.denominator}"


def arithmetic(answer: str, steps: list[str] | None = None) -> tuple[Fraction, list[int]] | None:
    """The exact value of an expression of + - * / and parentheses over integer literals, and those literals; None
    for anything else (another operator, a decimal, a name, a division by zero, a text Python cannot parse). It is
    parsed, never run. ``steps``, when given, receives each operation on computed values as it is done (a sign before
    a number is part of the number).

    >>> arithmetic("(6 - 2) * 6"), arithmetic("1.5*2"), arithmetic("7 // 2"), arithmetic("1/0")
    ((Fraction(24, 1), [6, 2, 6]), None, None, None)
    >>> steps = []
    >>> arithmetic("-15 / 5 + -( -2 * 4 )", steps)[0], steps
    (Fraction(5, 1), ['-15 / 5 = -3', '-2 * 4 = -8', '-(-8) = 8', '-3 + 8 = 5'])
    """
    try:
        tree = ast.parse(answer.strip(), mode="eval")
    except (SyntaxError, ValueError, MemoryError, RecursionError):  # ValueError: a NUL byte
        return None
    literals: list[int] = []
    record = steps.append if steps is not None else lambda step: None

    def value(node: ast.AST) -> Fraction:
        if isinstance(node, ast.Constant) and type(node.value) is int:
            literals.append(node.value)
            return Fraction(node.value)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.UAdd, ast.USub)):
            inner = value(node.operand)
            result, sign = (-inner, "-") if isinstance(node.op, ast.USub) else (inner, "+")
            if not isinstance(node.operand, ast.Constant):
                record(f"{sign}({_text(inner)}) = {_text(result)}")
            return result
        if isinstance(node, ast.BinOp) and type(node.op) in _OPERATIONS:
            left, right = value(node.left), value(node.right)
            symbol, apply = _OPERATIONS[type(node.op)]
            result = apply(left, right)  # ZeroDivisionError: no value
            record(f"{_text(left)} {symbol} {_text(right)} = {_text(result)}")
            return result
        raise ValueError("not + - * / over integers")

    try:
        return value(tree.body), literals
    except (ValueError, ZeroDivisionError, RecursionError):
        return None


def literal(text: str) -> Any:
    """The Python literal ``text`` spells (numbers, strings, lists, tuples, dicts, sets, True, False, None), read from
    its syntax tree without evaluating anything; ValueError for any other text (a set or dict key that is a list
    included).

    >>> literal("[1, -2,  3]") == literal("[1,-2,3]"), literal("('t', 'u')")
    (True, ('t', 'u'))
    >>> literal("{[1]}")
    Traceback (most recent call last):
    ...
    ValueError: not a Python literal: '{[1]}'
    """
    try:
        return ast.literal_eval(text)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):  # TypeError: an unhashable key
        raise ValueError(f"not a Python literal: {text[:80]!r}") from None


def expression(text: str) -> Any:
    """``text`` as a sympy expression, as sympy's ``parse_expr`` reads a plain one (integers exact, a name a symbol,
    :data:`FUNCTIONS` called by name), built from Python's syntax tree without evaluating it; None for anything
    else (another operator, a keyword, an attribute, a tuple, a text Python cannot parse).

    >>> expression("-2*X**3/3 + C"), expression("x*exp(x**2)/2"), expression("x.real"), expression("x ^ 2")
    (C - 2*X**3/3, x*exp(x**2)/2, None, None)
    >>> expression("E**(2*x) + ln(x) + K")
    K + exp(2*x) + log(x)
    """
    import sympy

    operators = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
                 ast.Pow: operator.pow}  # fmt: skip

    def build(node: ast.AST) -> Any:
        if isinstance(node, ast.Constant) and type(node.value) in (int, float):
            return sympy.Integer(node.value) if type(node.value) is int else sympy.Float(repr(node.value))
        if isinstance(node, ast.Name) and node.id in CONSTANTS:
            return getattr(sympy, node.id)
        if isinstance(node, ast.Name) and node.id not in FUNCTIONS:
            return sympy.Symbol(node.id)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.UAdd, ast.USub)):
            return -build(node.operand) if isinstance(node.op, ast.USub) else build(node.operand)
        if isinstance(node, ast.BinOp) and type(node.op) in operators:
            return operators[type(node.op)](build(node.left), build(node.right))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in FUNCTIONS \
                and not node.keywords:  # fmt: skip
            return getattr(sympy, node.func.id)(*(build(argument) for argument in node.args))
        raise ValueError("not a plain expression")

    try:
        return build(ast.parse(text.strip(), mode="eval").body)
    except (SyntaxError, ValueError, TypeError, ZeroDivisionError, MemoryError, RecursionError):
        return None


def unwrapped(answer: str) -> str:
    """A one-word answer as the word itself: without the spaces, quotes, backticks and bold around it, or a period
    after it.

    >>> [unwrapped(text) for text in ("True.", "'True'", "**True**", " `false` ", "True or False")]
    ['True', 'True', 'True', 'false', 'True or False']
    """
    text = answer.strip()
    while True:
        inner = text.removesuffix(".").strip()
        for mark in ("**", "*", "`", '"', "'"):
            if len(inner) > 2 * len(mark) and inner.startswith(mark) and inner.endswith(mark):
                inner = inner[len(mark) : -len(mark)].strip()
        if inner == text:
            return text
        text = inner


def _game_of_life_halting(dataset: Any, answer: str | None, entry: dict[str, Any]) -> bool:
    word = unwrapped(answer).lower() if isinstance(answer, str) else None
    return word in ("true", "false") and word == entry["answer"].lower()


def rounds_to(answer: str, gold: Fraction) -> bool:
    """Whether ``answer`` is ``gold`` rounded to the decimals it is written with (either way at a tie), and not 0.

    >>> rounds_to("0.0020", Fraction(1, 512)), rounds_to("0.002", Fraction(1, 512)), rounds_to("0", Fraction(1, 512))
    (True, True, False)
    """
    try:
        value = Decimal(answer.replace(",", "").strip())
    except InvalidOperation:
        return False
    exponent = value.as_tuple().exponent
    if not value.is_finite() or value.is_zero() or not isinstance(exponent, int) or exponent > 0:
        return False
    return abs(Fraction(value) - gold) <= Fraction(1, 2) * Fraction(10) ** exponent


def _coin_flip(dataset: Any, answer: str | None, entry: dict[str, Any]) -> bool:
    try:
        value, gold = (Fraction(text.replace(",", "").strip()) for text in (answer, entry["answer"]))
    except (AttributeError, ValueError, ZeroDivisionError):  # None, not a number, n/0
        return False
    # reasoning-gym's tolerance, and within 1% or a rounding of the gold to the answer's decimals (never 0)
    return abs(value - gold) <= Fraction(1, 10**4) and (abs(value - gold) <= abs(gold) / 100 or rounds_to(answer, gold))


def _complex_arithmetic(dataset: Any, answer: str | None, entry: dict[str, Any]) -> bool:
    value = dataset.parse_string_to_complex(answer) if isinstance(answer, str) else None
    return value is not None and cmath.isfinite(value) and dataset.score_answer(answer, entry) >= 1.0


def _nonzero_somewhere(derivative: Any, integrand: Any, x: Any) -> bool:
    """Whether ``derivative`` and ``integrand`` of ``x`` clearly differ at one of three exact points (evaluated to 30
    digits): then their difference is not identically 0. Exact points: a float point's 15 digits would bound the
    accuracy of ``exp(35)``-sized terms that cancel."""
    import sympy

    for numerator in INTEGRATION_POINTS:
        point = sympy.Rational(numerator, 100)
        want, got = (expression.subs(x, point).evalf(30) for expression in (integrand, derivative))
        if all(value.is_number and value.is_finite for value in (want, got)):
            difference, scale = abs(complex(got - want)), max(1.0, abs(complex(want)))
            if difference > 1e-9 * scale:
                return True
    return False


def _integration(dataset: Any, answer: str | None, entry: dict[str, Any]) -> bool:
    import sympy

    antiderivative = expression(answer) if isinstance(answer, str) else None
    integrand = expression(entry["metadata"]["integrand"])
    if antiderivative is None or integrand is None:
        return False
    x = sympy.Symbol(entry["metadata"]["variable"])
    try:  # reasoning-gym's check, on the expressions read here
        derivative = sympy.diff(antiderivative, x)
        return not _nonzero_somewhere(derivative, integrand, x) and sympy.simplify(derivative - integrand) == 0
    except Exception:  # reasoning-gym's scorer scores 0 whatever it meets (a bare except)
        return False


def _makes(target: int, numbers: list[int], answer: str | None) -> bool:
    """Whether ``answer`` is + - * / over exactly ``numbers`` (each once) and equals ``target`` exactly."""
    found = arithmetic(answer) if isinstance(answer, str) else None
    return found is not None and found[0] == target and sorted(found[1]) == sorted(numbers)


def _puzzle24(dataset: Any, answer: str | None, entry: dict[str, Any]) -> bool:
    return _makes(24, entry["metadata"]["numbers"], answer)


def _countdown(dataset: Any, answer: str | None, entry: dict[str, Any]) -> bool:
    return _makes(entry["metadata"]["target"], entry["metadata"]["numbers"], answer)


def _polynomial(dataset: Any, answer: str | None, entry: dict[str, Any]) -> bool:
    built = expression(answer) if isinstance(answer, str) else None
    return built is not None and built == expression(entry["answer"])


def cells(text: str) -> list[list[str]]:
    """A grid written as lines of cells apart by whitespace: its rows of cells, however they are spaced.

    >>> cells(" 0 1\\n1  2 \\n"), cells("1 2 3")
    ([['0', '1'], ['1', '2']], [['1', '2', '3']])
    """
    return [line.split() for line in text.strip().splitlines() if line.strip()]


def _grid(dataset: Any, answer: str | None, entry: dict[str, Any]) -> bool:
    return isinstance(answer, str) and cells(answer) == cells(entry["answer"])


def _sequence(dataset: Any, answer: str | None, entry: dict[str, Any]) -> bool:
    return isinstance(answer, str) and answer.split() == entry["answer"].split()


def _n_queens(dataset: Any, answer: str | None, entry: dict[str, Any]) -> bool:
    return isinstance(answer, str) and cells(answer) in [cells(board) for board in entry["metadata"]["valid_answers"]]


def _text_alone(dataset: Any, answer: str | None, entry: dict[str, Any]) -> bool:
    return isinstance(answer, str) and answer.strip() == entry["answer"]


SCORERS: dict[str, Callable[[Any, str | None, dict[str, Any]], bool]] = {
    "game_of_life_halting": _game_of_life_halting,
    "coin_flip": _coin_flip,
    "complex_arithmetic": _complex_arithmetic,
    "puzzle24": _puzzle24,
    "countdown": _countdown,
    "polynomial_multiplication": _polynomial,
    "simple_integration": _integration,
    "intermediate_integration": _integration,
    "binary_matrix": _grid,
    "n_queens": _n_queens,
    "spiral_matrix": _sequence,
    "string_insertion": _text_alone,
}


# One-word answers (a label the question names, a name, a word): a trailing period, quotes or bold around the word
# are no part of it (forms.py searches each, docs/tasks.md)
WORDS = frozenset({
    "acre", "bf", "calendar_arithmetic", "color_cube_rotation", "course_schedule", "family_relationships",
    "figlet_font", "isomorphic_strings", "mahjong_puzzle", "needle_haystack", "palindrome_generation", "ransom_note",
    "spell_backward", "syllogism", "zebra_puzzles",
})
# Of those, the ones whose answer is one of a few words the question names, where case carries nothing
CASELESS = frozenset({
    "acre", "calendar_arithmetic", "color_cube_rotation", "course_schedule", "family_relationships",
    "isomorphic_strings", "mahjong_puzzle", "ransom_note", "syllogism", "zebra_puzzles",
})
LISTS = frozenset({"list_functions"})  # a Python list of numbers, however it is spaced
# A number however it is written (0.98 for 0.980, .5 for 0.5): advanced_geometry's incircle radius is paid only as
# the gold's exact text (reasoning-gym reads the exact radius, a sympy text, with float(), which fails)
NUMBERS = frozenset({"advanced_geometry"})


def _full_credit(dataset: Any, answer: str | None, entry: dict[str, Any]) -> float:
    value = float(dataset.score_answer(answer, entry))
    if not math.isfinite(value):
        raise ValueError(f"score_answer gave {value}")
    return 1.0 if value >= 1.0 else 0.0


def _as_written_by_the_gold(name: str, answer: str, gold: Any) -> str:
    """``answer`` with what is no part of it taken off: the marks around a word (:data:`WORDS`), its case where case
    carries nothing (:data:`CASELESS`: the gold's own text), a number's spelling (:data:`NUMBERS`), a list's spacing
    (:data:`LISTS`: read by :func:`literal`, never evaluated)."""
    if name in WORDS:
        answer = unwrapped(answer)
        if name in CASELESS and isinstance(gold, str) and answer.lower() == gold.lower():
            return gold
    if name in NUMBERS and isinstance(gold, str):
        try:
            return gold if Decimal(answer.strip()) == Decimal(gold) else answer
        except (InvalidOperation, ValueError):
            return answer
    if name in LISTS and isinstance(gold, str):
        try:
            return gold if literal(answer.strip()) == literal(gold) else answer
        except ValueError:
            return answer
    return answer


def score(name: str, dataset: Any, answer: str | None, entry: dict[str, Any]) -> float:
    """1.0 if ``answer`` is correct for ``entry`` of dataset ``name`` (built: ``dataset``), else 0.0.

    This module's scorer where it has one, else reasoning-gym's full credit, on the answer as written or, where that
    is not full credit, without what is no part of it (:func:`_as_written_by_the_gold`); a score that is not a
    finite number raises ValueError, as any scorer's error does (the worker reports it).

    >>> from reasoning_gym import create_dataset
    >>> syllogism = create_dataset("syllogism", size=1, seed=0)
    >>> entry = syllogism[0]
    >>> [score("syllogism", syllogism, text, entry) for text in (f"**{entry['answer'].upper()}.**", "Yes or No")]
    [1.0, 0.0]
    """
    if name in SCORERS:
        return float(SCORERS[name](dataset, answer, entry))
    value = _full_credit(dataset, answer, entry)
    if value < 1.0 and isinstance(answer, str):
        plain = _as_written_by_the_gold(name, answer, entry["answer"])
        if plain != answer:
            return _full_credit(dataset, plain, entry)
    return value
