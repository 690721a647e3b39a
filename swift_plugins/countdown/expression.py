"""The Countdown answer grammar: a parser into expression templates and an exact evaluator.

Grammar (whitespace, including newlines, may separate any two tokens)::

    equation   := expression [ "=" claim ]
    expression := operand ( ("+" | "-" | "*" | "/") operand )*   with the usual precedence
    operand    := literal | "(" expression ")"
    literal    := "0" | [1-9][0-9]*                                 ASCII digits only
    claim      := [ "-" ] literal

Operators are binary only: no unary sign, no ``**`` or ``//``, no decimals, exponents, digit
separators, Unicode digits or operators, names or calls. Nothing here calls ``eval``.

An expression is split into its literals and its *template*: the postfix form with each literal
replaced by its position (``(7 - 4) * 2`` is ``(0, 1, '-', 2, '*')`` over ``(7, 4, 2)``). The
parser is iterative (shunting-yard), so deep nesting cannot exhaust the stack, and linear in the
length of the text; templates are cached by the shape of the text, since answers repeat a few
shapes. Values are computed as unreduced ``(numerator, denominator)`` int pairs, far cheaper
than :class:`~fractions.Fraction` per operation.

>>> equation = parse_equation("(70 - 42) * (30 / 5) = 168")
>>> equation.literals, equation.template, equation.claim
((70, 42, 30, 5), (0, 1, '-', 2, 3, '/', '*'), 168)
>>> equation.value()
Fraction(168, 1)
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from fractions import Fraction
from typing import NamedTuple

from ..core.errors import PluginError

__all__ = [
    "Equation",
    "ExpressionError",
    "Ratio",
    "Template",
    "parse_equation",
    "ratio_of",
    "split_equation",
    "value_of",
]

Template = tuple[int | str, ...]  # postfix; ints are positions in a list of numbers
Ratio = tuple[int, int]  # (numerator, denominator), unreduced; the denominator is never 0

_CLAIM = re.compile(r"\s*(-?)\s*(0|[1-9][0-9]*)\s*", re.ASCII)
_LEGAL_SHAPE = re.compile(r"[\sn()+*/-]*", re.ASCII)  # a shape writes each literal as "n"
_NUMBER = re.compile(r"([0-9]+)")  # split() on it alternates text between literals and literals
_SPACED = str.maketrans({symbol: f" {symbol} " for symbol in "()+-*/"})  # then str.split() tokenizes
_BINARY = {"+": 1, "-": 1, "*": 2, "/": 2}
_STACKED = {**_BINARY, "(": 0}  # "(" binds least, so operators never pop past it
_MAX_CACHED_SHAPES = 1 << 16
_templates: dict[str, Template] = {}


class ExpressionError(PluginError, ValueError):
    """The text is not an equation of the Countdown grammar."""


class Equation(NamedTuple):
    """A parsed answer: its literals in order, the template over them, and its optional claim."""

    literals: tuple[int, ...]
    template: Template
    claim: int | None

    def value(self) -> Fraction | None:
        return value_of(self.template, self.literals)


def ratio_of(template: Template, numbers: Sequence[int]) -> Ratio | None:
    """The exact value of ``template`` over ``numbers`` as a ratio; None on division by zero.

    >>> ratio_of((0, 1, "/", 2, "*"), [1, 3, 2])
    (2, 3)
    """
    stack: list[Ratio] = []
    for token in template:
        if type(token) is int:
            stack.append((numbers[token], 1))
            continue
        (c, d), (a, b) = stack.pop(), stack.pop()
        if token == "+":
            stack.append((a * d + c * b, b * d))
        elif token == "-":
            stack.append((a * d - c * b, b * d))
        elif token == "*":
            stack.append((a * c, b * d))
        elif c:
            stack.append((a * d, b * c))
        else:
            return None
    return stack[0]


def value_of(template: Template, numbers: Sequence[int]) -> Fraction | None:
    """The exact value of ``template`` over ``numbers``; None on division by zero.

    >>> value_of((0, 1, 2, "/", "-"), [6, 1, 4]), value_of((0, 1, "/"), [1, 0])
    (Fraction(23, 4), None)
    """
    ratio = ratio_of(template, numbers)
    return None if ratio is None else Fraction(*ratio)


def _compile(shape: str) -> Template:
    """Shunting-yard over a shape (literals written ``n``) that checks operand/operator alternation.

    Only legal shapes are cached, so the character check here covers every parse.
    """
    legal = _LEGAL_SHAPE.match(shape).end()
    if legal < len(shape):
        raise ExpressionError(f"unexpected character {shape[legal]!r}")
    output: list[int | str] = []
    stack: list[str] = []
    slot = 0
    expect_operand = True
    for token in shape.translate(_SPACED).split():
        if expect_operand:
            if token == "n":
                output.append(slot)
                slot += 1
                expect_operand = False
            elif token == "(":
                stack.append(token)
            else:
                raise ExpressionError(f"expected a number or '(' but found {token!r}")
        elif token == ")":
            while stack and stack[-1] != "(":
                output.append(stack.pop())
            if not stack:
                raise ExpressionError("unbalanced ')'")
            stack.pop()
        elif token in _BINARY:
            level = _BINARY[token]
            while stack and _STACKED[stack[-1]] >= level:
                output.append(stack.pop())
            stack.append(token)
            expect_operand = True
        else:
            found = "a number" if token == "n" else repr(token)
            raise ExpressionError(f"expected an operator or ')' but found {found}")
    if expect_operand:
        raise ExpressionError("the expression is empty or ends with an operator")
    while stack:
        if stack[-1] == "(":
            raise ExpressionError("unbalanced '('")
        output.append(stack.pop())
    return tuple(output)


def _compile_and_cache(shape: str) -> Template:
    template = _compile(shape)
    if len(_templates) >= _MAX_CACHED_SHAPES:
        _templates.clear()
    _templates[shape] = template
    return template


def _claim(text: str) -> int:
    match = _CLAIM.fullmatch(text)
    if match is None:
        raise ExpressionError("the right side of '=' must be one integer")
    return -int(match[2]) if match[1] else int(match[2])


def split_equation(text: str) -> tuple[tuple[int, ...], Template, int | None]:
    """``(literals, template, claim)`` of an equation: :func:`parse_equation` without the wrapper.

    >>> split_equation("6 * (6 - 2) = 24")
    ((6, 6, 2), (0, 1, 2, '-', '*'), 24)
    """
    expression, equals, claim = text.partition("=")
    if "n" in expression:  # would pass for a literal in the shape
        raise ExpressionError("unexpected character 'n'")
    if "=" in claim:
        raise ExpressionError("more than one '='")
    pieces = _NUMBER.split(expression)
    digits = pieces[1::2]
    if "0" in expression:
        for literal in digits:
            if literal[0] == "0" and len(literal) > 1:
                raise ExpressionError(f"leading zero in {literal!r}")
    shape = "n".join(pieces[::2])
    template = _templates.get(shape) or _compile_and_cache(shape)
    return tuple(map(int, digits)), template, _claim(claim) if equals else None


def parse_equation(text: str) -> Equation:
    """Parse ``expression [= claim]``; raise :class:`ExpressionError` on anything else.

    >>> parse_equation("1 + 2 * 3").value()
    Fraction(7, 1)
    """
    return Equation(*split_equation(text))
