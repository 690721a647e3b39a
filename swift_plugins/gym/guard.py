"""Answers that must not reach reasoning-gym's scorer: in 9 datasets ``score_answer`` evaluates the answer as Python.

countdown, puzzle24, simple_integration, intermediate_integration and polynomial_multiplication parse it with
sympy's expression parser (Python's ``eval`` underneath); binary_matrix, spiral_matrix, n_queens and string_insertion
``eval`` it to give partial credit to a Python list. The package scores all nine itself (:data:`.scorers.SCORERS`):
the five sympy ones from Python's syntax tree, read and never run (:func:`.scorers.arithmetic`,
:func:`.scorers.expression`), the four list ones by comparing the gold text (:data:`OWN`). So no answer reaches an
``eval``. In the five sympy datasets the guard is a second line: an answer is scored only when it matches the
dataset's allow-list (:data:`ALLOWED`): a plain math expression over numbers, operators and the few names its gold
answers use. Anything else (a call of a builtin, ``__``, a quote, attribute access, ``lambda``, a keyword) scores 0
unread. The other served datasets of reasoning-gym 0.1.25 compare or parse answers and never run them
(:data:`PLAIN`); a dataset on neither list was not audited, and every answer to it scores 0 (the guard fails closed:
the reward also refuses another release).

>>> refusal("countdown", "(6 - 2) * 6") is None, refusal("basic_arithmetic", "__import__('os')") is None
(True, True)
>>> refusal("countdown", "__import__('os').system('true') or 24")
'guarded: not a plain answer for countdown'
>>> refusal("new_dataset", "5")
'guarded: new_dataset was not audited (reasoning-gym 0.1.25)'
"""

from __future__ import annotations

import re
import string

from ..doctor.stacks import REASONING_GYM
from .scorers import CONSTANTS, FUNCTIONS

__all__ = ["ALLOWED", "OWN", "PLAIN", "RESERVED", "VARIABLE", "refusal"]

# A dot only inside a number (never attribute access); a number ends where no digit or dot follows, so a run of
# digits splits into numbers one way only (the pattern takes linear time on a megabyte of digits).
_NUMBER = r"(?:\d+(?:\.\d*)?|\.\d+)(?![\d.])"
_OPERATOR = r"[-+*/^(),=]"


def _expression(*names: str) -> re.Pattern[str]:
    """Numbers, operators and whole words of ``names`` only (``\\b``: ``2x`` or ``sinh`` is no allowed name)."""
    words = [rf"\b(?:{'|'.join(names)})\b"] if names else []
    return re.compile(rf"(?:\s*(?:{'|'.join([_NUMBER, _OPERATOR, *words])}))*\s*", re.ASCII)


# A variable: one letter, not C (the integrations' constant) nor one that sympy's parser reads as one of its objects
# (E is Euler's number, I the imaginary unit, N, O, Q and S functions); settings.py refuses settings naming another.
RESERVED = "CEINOQS"
VARIABLE = f"[{''.join(sorted(set(string.ascii_letters) - set(RESERVED)))}]"
# An integration's names: a variable, a constant of integration (one letter, digits after it: C, K, c, C1), and the
# functions and constants of the package's reader (scorers.FUNCTIONS, CONSTANTS: ln for log, E for Euler's number).
# None is a builtin; the reader calls none of them but its functions, and nothing is evaluated (the integrations are
# scored by the package's reader, never by sympy's parser).
INTEGRATION_NAMES = (r"[A-Za-z]\d*", *FUNCTIONS, *CONSTANTS)


ALLOWED: dict[str, re.Pattern[str]] = {
    "countdown": _expression(),
    "puzzle24": _expression(),
    "simple_integration": _expression(*INTEGRATION_NAMES),
    "intermediate_integration": _expression(*INTEGRATION_NAMES),
    "polynomial_multiplication": _expression(VARIABLE),
}
# Scored by the package alone, the answer compared with the gold text: reasoning-gym's scorer, which evaluates it,
# is never called
OWN = frozenset({"binary_matrix", "n_queens", "spiral_matrix", "string_insertion"})


# Read for eval, exec, compile and sympy's parsers (docs/tasks.md): their scorers never run the answer.
PLAIN = frozenset({
    "ab", "acre", "advanced_geometry", "aiw", "arc_1d", "arc_agi", "base_conversion", "basic_arithmetic", "bf",
    "binary_alternation", "bitwise_arithmetic", "boxnet", "caesar_cipher", "calendar_arithmetic", "chain_sum",
    "circuit_logic", "codeio", "coin_flip", "color_cube_rotation", "complex_arithmetic", "count_bits", "count_primes",
    "course_schedule", "cryptarithm", "decimal_arithmetic", "decimal_chain_sum", "dice", "emoji_mystery",
    "family_relationships", "figlet_font", "fraction_simplification", "futoshiki", "game_of_life",
    "game_of_life_halting", "gcd", "graph_color", "group_anagrams", "gsm_symbolic", "isomorphic_strings", "jugs",
    "kakurasu", "knight_swap", "knights_knaves", "largest_island", "lcm", "leg_counting", "letter_counting",
    "letter_jumble", "list_functions", "mahjong_puzzle", "manipulate_matrix", "maze", "mini_sudoku", "modulo_grid",
    "needle_haystack", "number_filtering", "number_format", "number_sequence", "number_sorting",
    "palindrome_generation", "palindrome_partitioning", "path_star", "polynomial_equations", "pool_matrix",
    "power_function", "prime_factorization", "products", "quantum_lock", "ransom_note", "rearc", "rectangle_count",
    "rotate_matrix", "rotten_oranges", "rubiks_cube", "rush_hour", "self_reference", "sentence_reordering",
    "shortest_path", "simple_equations", "simple_geometry", "sokoban", "spell_backward", "string_manipulation",
    "string_splitting", "string_synthesis", "sudoku", "survo", "syllogism", "time_intervals", "tower_of_hanoi",
    "tsumego", "word_ladder", "word_sequence_reversal", "word_sorting", "zebra_puzzles",
})


def refusal(dataset: str, answer: str | None) -> str | None:
    """Why ``answer`` must not be scored by ``dataset``'s ``score_answer``, or None when it may be.

    An integration's names pass (a constant of integration, ``E``); attribute access does not. binary_matrix's answers
    all pass: the package compares them with the gold text, and reasoning-gym's scorer never sees them.

    >>> [refusal("simple_integration", text) for text in ("-2*X**3/3 + K", "E**(t) + C1", "x.real")]
    [None, None, 'guarded: not a plain answer for simple_integration']
    >>> refusal("binary_matrix", "eval('[[0]]')") is None
    True
    """
    if dataset in PLAIN or dataset in OWN or answer is None:
        return None
    if dataset not in ALLOWED:
        return f"guarded: {dataset} was not audited (reasoning-gym {REASONING_GYM})"
    if ALLOWED[dataset].fullmatch(answer):
        return None
    return f"guarded: not a plain answer for {dataset}"
