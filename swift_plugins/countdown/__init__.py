"""Countdown: exact rewards, data generation, solving and auditing, with no ms-swift import.

The ms-swift adapters live in :mod:`swift_plugins.countdown.swift_adapter`.
"""

from .expression import ExpressionError, parse_equation, value_of
from .rewards import (
    Verdict,
    countdown_accuracy_reward,
    countdown_shaped_reward,
    judge,
    think_answer_format_reward,
)
from .solver import solve, solve_batch

__all__ = [
    "ExpressionError",
    "Verdict",
    "countdown_accuracy_reward",
    "countdown_shaped_reward",
    "judge",
    "parse_equation",
    "solve",
    "solve_batch",
    "think_answer_format_reward",
    "value_of",
]
