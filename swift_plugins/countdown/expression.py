"""The Countdown answer grammar: a tokenizer, an iterative parser and an exact evaluator.

Grammar (whitespace, including newlines, may separate any two tokens)::

    equation   := expression [ "=" claim ]
    expression := operand ( ("+" | "-" | "*" | "/") operand )*   with the usual precedence
    operand    := literal | "(" expression ")"
    literal    := "0" | [1-9][0-9]*                                 ASCII digits only
    claim      := [ "-" ] literal

Operators are binary only: no unary sign, no ``**`` or ``//``, no decimals, exponents, digit
separators, Unicode digits or operators, names or calls. The parser is iterative (shunting-yard),
so deep nesting cannot exhaust the stack, and every step is linear in the length of the text.
Nothing here calls ``eval``.

>>> equation = parse_equation("(70 - 42) * (30 / 5) = 168")
>>> equation.literals, equation.claim
((70, 42, 30, 5), 168)
>>> evaluate(equation.postfix)
Fraction(168, 1)
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction

__all__ = ["OPERATORS", "Equation", "ExpressionError", "evaluate", "parse_equation"]

OPERATORS = ("+", "-", "*", "/")
_PRECEDENCE = {"+": 1, "-": 1, "*": 2, "/": 2}
# One token per match; anything the alternatives do not cover is caught by `(?P<bad>.)`.
_TOKEN = re.compile(r"\s*(?:(?P<int>[0-9]+)|(?P<op>[-+*/()=])|(?P<bad>.))", re.ASCII | re.DOTALL)


class ExpressionError(ValueError):
    """The text is not an equation of the Countdown grammar."""


@dataclass(frozen=True)
class Equation:
    """A parsed answer: its expression in postfix order, its literals and its optional claim."""

    postfix: tuple[int | str, ...]
    literals: tuple[int, ...]
    claim: int | None


def _literal(digits: str) -> int:
    if len(digits) > 1 and digits[0] == "0":
        raise ExpressionError(f"leading zero in {digits!r}")
    return int(digits)


def _tokens(text: str) -> list[str | int]:
    tokens: list[str | int] = []
    for match in _TOKEN.finditer(text.rstrip()):
        if match["bad"] is not None:
            raise ExpressionError(f"unexpected character {match['bad']!r}")
        tokens.append(_literal(match["int"]) if match["int"] is not None else match["op"])
    return tokens


def _split_claim(tokens: list[str | int]) -> tuple[list[str | int], int | None]:
    if "=" not in tokens:
        return tokens, None
    at = tokens.index("=")
    claim = tokens[at + 1 :]
    if claim and claim[0] == "-":
        sign, claim = -1, claim[1:]
    else:
        sign = 1
    if len(claim) != 1 or not isinstance(claim[0], int):
        raise ExpressionError("the right side of '=' must be one integer")
    return tokens[:at], sign * claim[0]


def _to_postfix(tokens: list[str | int]) -> list[int | str]:
    """Shunting-yard that also checks operand/operator alternation, so unary signs are rejected."""
    output: list[int | str] = []
    stack: list[str] = []
    expect_operand = True
    for token in tokens:
        if expect_operand:
            if isinstance(token, int):
                output.append(token)
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
        elif isinstance(token, str) and token in _PRECEDENCE:
            while stack and stack[-1] != "(" and _PRECEDENCE[stack[-1]] >= _PRECEDENCE[token]:
                output.append(stack.pop())
            stack.append(token)
            expect_operand = True
        else:
            raise ExpressionError(f"expected an operator or ')' but found {token!r}")
    if expect_operand:
        raise ExpressionError("the expression is empty or ends with an operator")
    while stack:
        if stack[-1] == "(":
            raise ExpressionError("unbalanced '('")
        output.append(stack.pop())
    return output


def parse_equation(text: str) -> Equation:
    """Parse ``expression [= claim]``; raise :class:`ExpressionError` on anything else.

    >>> parse_equation("1 + 2 * 3").postfix
    (1, 2, 3, '*', '+')
    """
    tokens = _tokens(text)
    if tokens.count("=") > 1:
        raise ExpressionError("more than one '='")
    expression, claim = _split_claim(tokens)
    postfix = _to_postfix(expression)
    literals = tuple(token for token in postfix if isinstance(token, int))
    return Equation(tuple(postfix), literals, claim)


def evaluate(postfix: tuple[int | str, ...] | list[int | str]) -> Fraction:
    """Evaluate a postfix expression exactly; raise ``ZeroDivisionError`` on division by zero.

    >>> evaluate((1, 3, "/", 2, "*"))
    Fraction(2, 3)
    """
    stack: list[Fraction] = []
    for token in postfix:
        if isinstance(token, int):
            stack.append(Fraction(token))
            continue
        right, left = stack.pop(), stack.pop()
        if token == "+":
            stack.append(left + right)
        elif token == "-":
            stack.append(left - right)
        elif token == "*":
            stack.append(left * right)
        else:
            stack.append(left / right)
    (value,) = stack
    return value
