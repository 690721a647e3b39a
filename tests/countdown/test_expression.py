"""The answer grammar: precedence, exactness and rejection of everything outside it."""

from fractions import Fraction

import pytest

from swift_plugins.countdown.expression import ExpressionError, parse_equation, value_of


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("1 + 2 * 3", 7),
        ("(1 + 2) * 3", 9),
        ("8 - 3 - 2", 3),  # left-associative
        ("8 / 4 / 2", 1),
        ("8 - (3 - 2)", 7),
        ("1 / 3 + 1 / 6", Fraction(1, 2)),
        ("2 * 3 - 4 / 2", 4),
        ("0", 0),
    ],
)
def test_values_are_exact_with_the_usual_precedence(text, value):
    assert parse_equation(text).value() == value


def test_claim_and_literals_are_reported():
    equation = parse_equation("(70 - 42)\n* (30 / 5) = 168")
    assert equation.literals == (70, 42, 30, 5)
    assert equation.claim == 168
    assert parse_equation("1 - 2 = -1").claim == -1


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("2 ** 3", "expected a number or '\\('"),
        ("-1 + 2", "expected a number"),
        ("1 +", "ends with an operator"),
        ("(1 + 2", "unbalanced '\\('"),
        ("1 + 2)", "unbalanced '\\)'"),
        ("01 + 2", "leading zero"),
        ("1.5", "unexpected character '.'"),
        ("2(3)", "expected an operator"),
        ("1 = 2 = 3", "more than one '='"),
        ("1 = 1 + 0", "one integer"),
        ("1 = ", "one integer"),
        ("x", "unexpected character 'x'"),
        ("", "empty"),
    ],
)
def test_errors_say_what_is_wrong(text, message):
    with pytest.raises(ExpressionError, match=message):
        parse_equation(text)


def test_division_by_zero_has_no_value():
    assert parse_equation("1 / (2 - 2) + 3").value() is None
    assert parse_equation("(1 - 1) / 2").value() == 0
    assert value_of((0, 1, 2, "-", "/"), [1, 2, 2]) is None


def test_templates_are_shared_by_answers_of_the_same_shape():
    first, second = parse_equation("6 / (1 - 3 / 4)"), parse_equation("8 / (2 - 1 / 3)")
    assert first.template == second.template == (0, 1, 2, 3, "/", "-", "/")
    assert first.value() == 24 and second.value() == Fraction(24, 5)


def test_deep_nesting_does_not_recurse():
    depth = 50_000
    assert parse_equation("(" * depth + "7" + ")" * depth).value() == 7
