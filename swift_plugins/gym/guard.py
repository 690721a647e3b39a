"""Answers that must not reach reasoning-gym's scorer: in 9 datasets ``score_answer`` evaluates the answer as Python.

countdown, puzzle24, simple_integration, intermediate_integration and polynomial_multiplication parse it with
sympy's expression parser (Python's ``eval`` underneath); binary_matrix, spiral_matrix, n_queens and string_insertion
``eval`` it to give partial credit to a Python list. So in those datasets an answer is scored only when it matches
the dataset's allow-list (:data:`ALLOWED`): a plain math expression over numbers, operators and the few names its
gold answers use, or the characters of its gold answers and of a list of them. Anything else (a call of a builtin,
``__``, a quote, attribute access, ``lambda``, a keyword) scores 0 unevaluated. Other datasets are not guarded.

>>> refusal("countdown", "(6 - 2) * 6") is None, refusal("basic_arithmetic", "__import__('os')") is None
(True, True)
>>> refusal("countdown", "__import__('os').system('true') or 24")
'guarded: not a plain answer for countdown'
"""

from __future__ import annotations

import re

__all__ = ["ALLOWED", "refusal"]

# A dot only inside a number (never attribute access); a number ends where no digit or dot follows, so a run of
# digits splits into numbers one way only (the pattern takes linear time on a megabyte of digits).
_NUMBER = r"(?:\d+(?:\.\d*)?|\.\d+)(?![\d.])"
_OPERATOR = r"[-+*/^(),=]"


def _expression(*names: str) -> re.Pattern[str]:
    """Numbers, operators and whole words of ``names`` only (``\\b``: ``2x`` or ``sinh`` is no allowed name)."""
    words = [rf"\b(?:{'|'.join(names)})\b"] if names else []
    return re.compile(rf"(?:\s*(?:{'|'.join([_NUMBER, _OPERATOR, *words])}))*\s*", re.ASCII)


# Names: those of 500 gold answers per dataset (docs/tasks.md), plus X, the integrations' other `symbols` setting.
# The list datasets have no parenthesis, dot or operator: no name can be called, looked into or computed with.
ALLOWED: dict[str, re.Pattern[str]] = {
    "countdown": _expression(),
    "puzzle24": _expression(),
    "simple_integration": _expression("x", "X", "C"),
    "intermediate_integration": _expression(
        "x", "X", "C", "sin", "cos", "exp", "log", "asin", "atan", "sqrt", "Integral"
    ),
    "polynomial_multiplication": _expression("x", "y", "z"),
    "binary_matrix": re.compile(r"[\d\s\[\],]*", re.ASCII),
    "spiral_matrix": re.compile(r"[-\d\s\[\],]*", re.ASCII),
    "n_queens": re.compile(r"[_Q\s\[\],'\"]*", re.ASCII),
    "string_insertion": re.compile(r"[A-E\s\[\],'\"]*", re.ASCII),
}


def refusal(dataset: str, answer: str | None) -> str | None:
    """Why ``answer`` must not be scored by ``dataset``'s ``score_answer``, or None when it may be.

    >>> [refusal("simple_integration", text) for text in ("-2*X**3/3 + C", "exp(x) + C", "x.real")]
    [None, 'guarded: not a plain answer for simple_integration', 'guarded: not a plain answer for simple_integration']
    """
    pattern = ALLOWED.get(dataset)
    if pattern is None or answer is None or pattern.fullmatch(answer):
        return None
    return f"guarded: not a plain answer for {dataset}"
