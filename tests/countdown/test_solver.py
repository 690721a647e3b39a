"""The vectorised solver against a plain exact brute force over random puzzles."""

import itertools
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from swift_plugins.core.errors import DataError
from swift_plugins.countdown.expression import parse_equation
from swift_plugins.countdown.solver import format_expression, is_supported, solve, solve_batch, templates


def brute_force_values(numbers: list[Fraction]) -> set[Fraction]:
    """Every exact value of every expression using each number once (slow, obviously right)."""
    if len(numbers) == 1:
        return {numbers[0]}
    values = set()
    for size in range(1, len(numbers)):
        for left_idx in itertools.combinations(range(len(numbers)), size):
            left = [numbers[i] for i in left_idx]
            right = [numbers[i] for i in range(len(numbers)) if i not in left_idx]
            for a in brute_force_values(left):
                for b in brute_force_values(right):
                    values.update({a + b, a - b, a * b})
                    if b:
                        values.add(a / b)
    return values


def test_template_counts():
    assert [len(templates(n)) for n in (1, 2, 3, 4)] == [1, 6, 108, 3240]
    assert len(set(templates(4))) == 3240


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(1, 10_000), min_size=2, max_size=4), st.data())
def test_solver_finds_exactly_the_reachable_integer_targets(numbers, data):
    reachable = sorted(v for v in brute_force_values([Fraction(n) for n in numbers]) if v.denominator == 1)
    targets = [int(data.draw(st.sampled_from(reachable))) for _ in range(5)] + list(range(1, 40))
    solutions = solve_batch(np.array([numbers] * len(targets)), np.array(targets))
    for target, solution in zip(targets, solutions, strict=True):
        assert (solution is not None) == (Fraction(target) in reachable), (numbers, target)
        if solution is not None:
            equation = parse_equation(solution)
            assert sorted(equation.literals) == sorted(numbers)
            assert equation.value() == target


def test_fraction_only_solutions_are_found():
    assert solve([1, 3, 4, 6], 24) is not None  # 6 / (1 - 3 / 4)
    assert solve([5, 5, 5, 1], 24) is not None  # 5 * (5 - 1 / 5)
    assert solve([1, 1, 1], 100) is None


def test_format_expression_keeps_only_needed_parentheses():
    numbers = [1, 2, 3, 4]
    assert format_expression((0, 1, "-", 2, 3, "-", "-"), numbers) == "1 - 2 - (3 - 4)"
    assert format_expression((0, 1, 2, "*", "+"), numbers) == "1 + 2 * 3"
    assert format_expression((0, 1, "+", 2, "/"), numbers) == "(1 + 2) / 3"
    assert format_expression((0, 1, 2, "/", "/"), numbers) == "1 / (2 / 3)"


@pytest.mark.parametrize(("numbers", "target"), [([1, 2], 10**21), ([10**30, 2], 5), ([1, 2], -(10**19))])
def test_a_puzzle_beyond_int64_is_refused_not_an_overflow(numbers, target):
    assert not is_supported(numbers, target)
    with pytest.raises(DataError, match=r"row 0 \(.*\) is beyond the solver's bounds"):
        solve(numbers, target)
    with pytest.raises(DataError, match=r"row 1 \(.*\) is beyond the solver's bounds"):
        solve_batch([[1, 2], numbers], [3, target])
