"""The GSM8K final-number rule on answer texts, and the references read from GSM8K rows."""

from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from swift_plugins.core.errors import DataError
from swift_plugins.gsm8k.answer import (
    MAX_ANSWER_CHARS,
    Verdict,
    answer_value,
    final_number,
    reference_number,
    reference_value,
)

# answer block content -> the value it states
VALUES = [
    ("72", 72),
    ("-3", -3),
    ("\u22123", -3),  # the minus sign
    ("72.0", 72),
    ("72.50", Fraction(145, 2)),
    (".5", Fraction(1, 2)),
    ("72.", 72),
    ("1,000", 1000),
    ("1,234,567.5", Fraction(2469135, 2)),
    ("1/2", Fraction(1, 2)),
    ("-3/4", Fraction(-3, 4)),
    ("\\frac{3}{4}", Fraction(3, 4)),
    ("\\dfrac{1}{3}", Fraction(1, 3)),
    ("1{,}000", 1000),
    ("1\\,000", 1000),
    ("007", 7),
    ("x2 = 72", 72),  # digits glued to a letter on their left belong to a word
    ("Q3 total: 72", 72),
    ("1 + 2 = 3/1", 3),
    ("72 = 72.0", 72),
    ("3/4 of 96 = 72", 72),
]


@pytest.mark.parametrize(("text", "value"), VALUES, ids=[case[0] for case in VALUES])
def test_values(text, value):
    assert answer_value(text) == value
    assert isinstance(answer_value(text), Fraction)


REFUSED = [
    ("", Verdict.NO_ANSWER),
    ("   ", Verdict.NO_ANSWER),
    ("seventy-two", Verdict.NO_ANSWER),
    ("x72", Verdict.NO_ANSWER),
    ("72 =", Verdict.NO_ANSWER),
    ("1,00", Verdict.MALFORMED),
    ("12,34", Verdict.MALFORMED),
    ("1000,000", Verdict.MALFORMED),
    ("1,0000", Verdict.MALFORMED),
    ("1.2.3", Verdict.MALFORMED),
    ("10/12/2023", Verdict.MALFORMED),
    ("1e3", Verdict.MALFORMED),
    ("72_000", Verdict.MALFORMED),
    ("3/0", Verdict.MALFORMED),
    ("\uff17\uff12", Verdict.MALFORMED),  # fullwidth digits
    ("\u0667\u0662", Verdict.MALFORMED),  # arabic-indic digits
    ("72\u00b2", Verdict.MALFORMED),  # superscript two
    ("1,00 = 72", Verdict.MALFORMED),
    ("72 73", Verdict.AMBIGUOUS),
    ("1 000", Verdict.AMBIGUOUS),
    ("3 1/2", Verdict.AMBIGUOUS),
    ("2023-05-01", Verdict.AMBIGUOUS),
    ("10:30", Verdict.AMBIGUOUS),
    ("73 = 72", Verdict.AMBIGUOUS),
    ("half of 144 = 72", Verdict.AMBIGUOUS),
    ("9" * (MAX_ANSWER_CHARS + 1), Verdict.AMBIGUOUS),
]


@pytest.mark.parametrize(("text", "verdict"), REFUSED, ids=[case[0][:20] for case in REFUSED])
def test_refused(text, verdict):
    assert answer_value(text) is verdict


@pytest.mark.parametrize(
    "word", ["or", "about", "around", "approximately", "approx", "roughly", "nearly", "almost", "maybe", "perhaps"]
)
def test_hedge_words_refuse(word):
    assert answer_value(f"{word} 72") is Verdict.AMBIGUOUS
    assert answer_value(f"{word.upper()} 72") is Verdict.AMBIGUOUS
    assert answer_value(f"{word}ange 72") == 72  # only whole words


def test_final_number_reads_the_last_answer_block_only():
    assert final_number("<answer>71</answer> on second thought <answer>72</answer>") == 72
    assert final_number("<reasoning>so 72</reasoning>") is None
    assert final_number("<answer>72") is None
    assert final_number("<answer>72 or 73</answer>") is None
    assert final_number(None) is None


REFERENCES = [
    ("Natalia sold 48/2 = <<48/2=24>>24 clips in May.\nNatalia sold 48+24 = <<48+24=72>>72 clips.\n#### 72", 72),
    ("#### 1,000", 1000),
    ("#### -3", -3),
    ("#### 0.5", Fraction(1, 2)),
    ("She had $5 #### 5 ... #### 6", 6),  # the last marker
]


@pytest.mark.parametrize(("field", "value"), REFERENCES)
def test_reference_number(field, value):
    assert reference_number(field) == value


@pytest.mark.parametrize("field", ["72", "#### ", "#### seventy-two", "#### 72 73", "#### 72 or 73", "#### 1,00"])
def test_malformed_reference_raises_a_data_error_naming_it(field):
    with pytest.raises(DataError, match=r"####|not one number"):
        reference_number(field)


@pytest.mark.parametrize(("text", "value"), [("72", 72), (" 1000\n", 1000), ("1,000", 1000), ("-3", -3), ("2.5", 2.5)])
def test_reference_value(text, value):
    assert reference_value(text) == value


@pytest.mark.parametrize("text", ["", "72 dollars", "seventy", "72 73", "1e3", "about 72"])
def test_malformed_final_answer_raises(text):
    with pytest.raises(DataError, match="not one number"):
        reference_value(text)


def _grouped(number: int) -> str:
    return f"{number:,}"


@settings(max_examples=400, deadline=None)
@given(st.integers(min_value=-(10**12), max_value=10**12), st.integers(min_value=0, max_value=99))
def test_a_decimal_written_any_accepted_way_reads_back_exactly(whole, cents):
    value = Fraction(whole) + (Fraction(cents, 100) if whole >= 0 else -Fraction(cents, 100))
    sign = "-" if value < 0 else ""
    magnitude = abs(whole)
    digits = f"{magnitude}.{cents:02d}" if cents else str(magnitude)
    grouped = f"{_grouped(magnitude)}.{cents:02d}" if cents else _grouped(magnitude)
    for text in (
        f"{sign}{digits}",
        f"{sign}{grouped}",
        f"{sign}${grouped}",
        f"{sign}{magnitude}.{cents:02d}0",
        f"**{sign}{digits}**",
        f"\\boxed{{{sign}{digits}}}",
        f"The answer is {sign}{grouped}.",
        f"x = {sign}{digits} dollars",
    ):
        assert answer_value(text) == value, text


@settings(max_examples=300, deadline=None)
@given(st.integers(-1000, 1000), st.integers(-1000, 1000), st.sampled_from([" or ", "\n", ", ", " and ", " / ", "; "]))
def test_two_different_values_are_never_read_as_one(first, second, joiner):
    text = f"{first}{joiner}{second}"
    if first != second:
        assert not isinstance(answer_value(text), Fraction), text


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 10**6), st.integers(1, 10**6))
def test_fractions_are_exact(numerator, denominator):
    assert answer_value(f"{numerator}/{denominator}") == Fraction(numerator, denominator)


@settings(max_examples=1000, deadline=None)
@given(st.one_of(st.text(), st.text(alphabet="0123456789-−.,/=$ \n{}\\fracboxed%aor~≈<>")))
def test_arbitrary_text_never_raises(text):
    value = answer_value(text)
    assert isinstance(value, (Fraction, Verdict))
    if "<" not in text:
        assert final_number(f"<answer>{text}</answer>") == (value if isinstance(value, Fraction) else None)
