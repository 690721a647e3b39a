"""The GSM8K rewards on real completions: every accepted form, every known hack, and properties."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from swift_plugins.gsm8k.rewards import (
    Verdict,
    gsm8k_accuracy_reward,
    judge,
    reasoning_answer_format_reward,
)

REASONING = (
    "<reasoning>\nNatalia sold 48 clips in April. In May she sold half as many: 48 / 2 = 24.\n"
    "Altogether she sold 48 + 24 = 72 clips.\n</reasoning>\n"
)


def answer(text: str) -> str:
    return f"{REASONING}<answer>{text}</answer>"


# (name, completion, final_answer): each scores 1.0
ACCEPTED = [
    ("plain", answer("72"), "72"),
    ("spaces and newlines", answer("\n  72\n"), "72"),
    ("decimal zero", answer("72.0"), "72"),
    ("decimal zeros", answer("72.00"), "72"),
    ("dollar", answer("$72"), "72"),
    ("latex dollar", answer("\\$72"), "72"),
    ("thousands separator", answer("1,000"), "1000"),
    ("reference with separator", answer("1000"), "1,000"),
    ("full stop", answer("72."), "72"),
    ("negative", answer("-3"), "-3"),
    ("negative money", answer("-$3"), "-3"),
    ("unicode minus", answer("\u22123"), "-3"),
    ("unit word", answer("72 dollars"), "72"),
    ("glued unit", answer("72kg"), "72"),
    ("chinese unit", answer("72元"), "72"),
    ("percent", answer("25%"), "25"),
    ("bold", answer("**72**"), "72"),
    ("boxed", answer("\\boxed{72}"), "72"),
    ("boxed in math mode", answer("$\\boxed{72}$"), "72"),
    ("gsm8k marker", answer("#### 72"), "72"),
    ("sentence", answer("Natalia sold 72 clips altogether."), "72"),
    ("label", answer("Answer: 72"), "72"),
    ("equation", answer("48 + 24 = 72"), "72"),
    ("equation with unit", answer("48 + 24 = 72 clips"), "72"),
    ("variable", answer("x = 72"), "72"),
    ("repeated value", answer("72 (that is, 72.0)"), "72"),
    ("fraction", answer("1/2"), "0.5"),
    ("latex fraction", answer("\\frac{1}{2}"), "0.5"),
    ("latex thousands", answer("1{,}000"), "1000"),
    ("markdown bullet", answer("- 72"), "72"),
    ("last block wins", answer("71") + "\nWait, I mis-added.\n<answer>72</answer>", "72"),
    ("chat messages", [{"role": "assistant", "content": answer("72")}], "72"),
    ("integer reference", answer("72"), 72),
]


@pytest.mark.parametrize(
    ("completion", "final_answer"), [case[1:] for case in ACCEPTED], ids=[case[0] for case in ACCEPTED]
)
def test_accepted_forms_score_one(completion, final_answer):
    assert judge(completion, final_answer) is Verdict.CORRECT
    assert gsm8k_accuracy_reward([completion], final_answer=[final_answer]) == [1.0]


# (name, completion, final_answer, verdict): each scores 0.0
REJECTED = [
    # Two values, hedges and ranges: a spread of guesses is never paid.
    ("two values with or", answer("72 or 73"), "72", Verdict.AMBIGUOUS),
    ("two values on two lines", answer("72\n73"), "73", Verdict.AMBIGUOUS),
    ("two values with a comma", answer("72, 73"), "72", Verdict.AMBIGUOUS),
    ("range with a hyphen", answer("70-75"), "75", Verdict.AMBIGUOUS),
    ("range with an en dash", answer("70–75"), "70", Verdict.AMBIGUOUS),
    ("range in words", answer("between 70 and 75"), "70", Verdict.AMBIGUOUS),
    ("hedge about", answer("about 72"), "72", Verdict.AMBIGUOUS),
    ("hedge approximately", answer("approximately 72"), "72", Verdict.AMBIGUOUS),
    ("hedge tilde", answer("~72"), "72", Verdict.AMBIGUOUS),
    ("hedge almost equal", answer("≈ 72"), "72", Verdict.AMBIGUOUS),
    ("plus or minus", answer("72 ± 1"), "72", Verdict.AMBIGUOUS),
    ("bound", answer("at least 72"), "72", Verdict.AMBIGUOUS),
    ("false equation", answer("73 = 72"), "72", Verdict.AMBIGUOUS),
    ("several numbers in a sentence", answer("48 in April, 24 in May, 72 in all"), "72", Verdict.AMBIGUOUS),
    ("mixed number", answer("3 1/2"), "3.5", Verdict.AMBIGUOUS),
    ("time", answer("10:30"), "10", Verdict.AMBIGUOUS),
    ("date", answer("2023-05-01"), "2023", Verdict.AMBIGUOUS),
    ("answer too long", answer("72" + " " * 1100 + "72"), "72", Verdict.AMBIGUOUS),
    # Numbers that cannot be read one way.
    ("separator done wrong", answer("1,00"), "100", Verdict.MALFORMED),
    ("european decimal comma", answer("72,5"), "72", Verdict.MALFORMED),
    ("slash date", answer("10/12/2023"), "10", Verdict.MALFORMED),
    ("exponent", answer("7.2e1"), "72", Verdict.MALFORMED),
    ("division by zero", answer("72/0"), "72", Verdict.MALFORMED),
    ("fullwidth digits", answer("７２"), "72", Verdict.MALFORMED),
    ("version number", answer("7.2.0"), "72", Verdict.MALFORMED),
    # Exact values: no float tolerance to exploit.
    ("float rounding", answer("71.99999999999999999"), "72", Verdict.WRONG_VALUE),
    ("near miss", answer("72.0000001"), "72", Verdict.WRONG_VALUE),
    ("decimal of a third", answer("0.333"), "1/3", Verdict.WRONG_VALUE),
    ("wrong value", answer("71"), "72", Verdict.WRONG_VALUE),
    ("digit inside a word", answer("H2O 72"), "2", Verdict.WRONG_VALUE),
    ("earlier block right, last block wrong", answer("72") + "<answer>73</answer>", "72", Verdict.WRONG_VALUE),
    # No answer to read.
    ("no answer block", REASONING + "The answer is 72.", "72", Verdict.NO_ANSWER),
    ("gsm8k marker outside a block", REASONING + "#### 72", "72", Verdict.NO_ANSWER),
    ("unclosed block", REASONING + "<answer>72", "72", Verdict.NO_ANSWER),
    ("tags are case-sensitive", REASONING + "<Answer>72</Answer>", "72", Verdict.NO_ANSWER),
    ("number in words", answer("seventy-two"), "72", Verdict.NO_ANSWER),
    ("empty block", answer(""), "72", Verdict.NO_ANSWER),
    ("right block then an empty one", answer("72") + "<answer></answer>", "72", Verdict.NO_ANSWER),
    ("None", None, "72", Verdict.NO_ANSWER),
    ("not text", 72, "72", Verdict.NO_ANSWER),
    ("message without content", [{"role": "assistant"}], "72", Verdict.NO_ANSWER),
    # References that cannot be read.
    ("reference not a number", answer("72"), "seventy-two", Verdict.BAD_ROW),
    ("reference of two numbers", answer("72"), "72 73", Verdict.BAD_ROW),
    ("reference boolean", answer("1"), True, Verdict.BAD_ROW),
    ("reference float", answer("72"), 72.0, Verdict.BAD_ROW),
]


@pytest.mark.parametrize(
    ("completion", "final_answer", "verdict"), [case[1:] for case in REJECTED], ids=[case[0] for case in REJECTED]
)
def test_hacks_and_mistakes_score_zero(completion, final_answer, verdict):
    assert judge(completion, final_answer) is verdict
    assert gsm8k_accuracy_reward([completion], final_answer=[final_answer]) == [0.0]


def test_verdicts_are_labels():
    assert judge(answer("72"), "72") == "correct"
    assert {verdict.value for verdict in Verdict} == {
        "correct",
        "wrong value",
        "no answer",
        "ambiguous",
        "malformed number",
        "bad row",
    }


def test_reference_from_a_raw_gsm8k_answer_column():
    raw = "Natalia sold 48/2 = <<48/2=24>>24 clips in May.\nNatalia sold 48+24 = <<48+24=72>>72 clips.\n#### 72"
    assert gsm8k_accuracy_reward([answer("72"), answer("24")], answer=[raw, raw]) == [1.0, 0.0]
    assert gsm8k_accuracy_reward([answer("72")], answer=["no final line"]) == [0.0]
    assert judge(answer("72"), None, "no final line") is Verdict.BAD_ROW
    # final_answer wins over the raw answer when both are there
    assert gsm8k_accuracy_reward([answer("5")], final_answer=["5"], answer=[raw]) == [1.0]


def test_no_reference_at_all_scores_zero():
    assert gsm8k_accuracy_reward([answer("72")]) == [0.0]
    assert judge(answer("72"), None) is Verdict.BAD_ROW


def test_called_as_trl_grpo_trainer_calls_reward_functions():
    """TRL passes prompts, message-list completions, completion ids and every dataset column as keywords."""
    completions = [[{"role": "assistant", "content": answer("72")}], [{"role": "assistant", "content": "72"}]]
    kwargs = {
        "prompts": [[{"role": "user", "content": "Natalia sold clips to 48 of her friends in April, ..."}]] * 2,
        "completions": completions,
        "completion_ids": [[1, 2, 3], [4]],
        "question": ["Natalia sold clips ..."] * 2,
        "answer": ["Natalia sold 48+24 = <<48+24=72>>72 clips.\n#### 72"] * 2,
        "trainer_state": None,
    }
    assert gsm8k_accuracy_reward(**kwargs) == [1.0, 0.0]
    assert reasoning_answer_format_reward(**kwargs) == [1.0, 0.0]


def test_called_as_swift_calls_reward_functions():
    """ms-swift passes string completions and the preprocessed columns (final_answer, messages, ...)."""
    kwargs = {
        "messages": [[{"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}]] * 3,
        "final_answer": ["72", "72", "1000"],
        "solution": ["...", "...", "..."],
        "is_truncated": [False, False, True],
        "trainer_state": None,
    }
    completions = [answer("72"), answer("73"), REASONING + "<answer>1,0"]
    assert gsm8k_accuracy_reward(completions, **kwargs) == [1.0, 0.0, 0.0]


FORMAT_CASES = [
    ("<reasoning>x</reasoning><answer>y</answer>", True),
    ("\n <reasoning>\nx\n</reasoning>\n\n<answer>\ny\n</answer>\n", True),
    ("<reasoning>x</reasoning><answer>y</answer> trailing text", False),
    ("text <reasoning>x</reasoning><answer>y</answer>", False),
    ("<reasoning>x</reasoning> text <answer>y</answer>", False),
    ("<reasoning>x</reasoning><answer>y</answer><answer>z</answer>", False),
    ("<reasoning>x</reasoning><reasoning>x</reasoning><answer>y</answer>", False),
    ("<answer>y</answer><reasoning>x</reasoning>", False),
    ("<reasoning>x<answer>y</answer></reasoning>", False),
    ("<think>x</think><answer>y</answer>", False),
    ("<reasoning>x</reasoning>", False),
    ("<answer>y</answer>", False),
    ([{"role": "assistant", "content": "<reasoning>x</reasoning><answer>y</answer>"}], True),
    (None, False),
]


@pytest.mark.parametrize(("completion", "expected"), FORMAT_CASES)
def test_reasoning_answer_format(completion, expected):
    assert reasoning_answer_format_reward([completion]) == [float(expected)]


_integers = st.integers(min_value=-(10**9), max_value=10**9)


def _forms(value: int) -> list[str]:
    sign = "-" if value < 0 else ""
    magnitude = abs(value)
    return [
        str(value),
        f"{sign}{magnitude:,}",
        f"{sign}${magnitude:,}",
        f"{value}.0",
        f"{value}.",
        f"**{value}**",
        f"\\boxed{{{value}}}",
        f"{value} dollars",
        f"The answer is {sign}{magnitude:,}.",
        f"#### {value}",
        f"x = {value}",
        f"{value}/1",
    ]


@settings(max_examples=300, deadline=None)
@given(_integers, st.text(alphabet="abc 123+=.\n", max_size=200))
def test_the_reference_in_any_accepted_form_scores_one(value, reasoning):
    for form in _forms(value):
        completion = f"<reasoning>{reasoning}</reasoning>\n<answer>{form}</answer>"
        assert gsm8k_accuracy_reward([completion], final_answer=[str(value)]) == [1.0], form
        assert gsm8k_accuracy_reward([completion], final_answer=[str(value + 1)]) == [0.0], form


@settings(max_examples=300, deadline=None)
@given(_integers, _integers, st.sampled_from([" or ", "\n", ", ", " and ", " to ", " - "]))
def test_two_different_values_never_score(first, second, joiner):
    completion = answer(f"{first}{joiner}{second}")
    for reference in (first, second):
        expected = [1.0] if first == second and joiner != " or " else [0.0]
        assert gsm8k_accuracy_reward([completion], final_answer=[str(reference)]) == expected


@settings(max_examples=1000, deadline=None)
@given(
    st.one_of(st.text(), st.text(alphabet="<>/answerreasoning0123456789-.,=$ \n")),
    st.one_of(st.none(), st.text(max_size=10), st.integers(), st.floats(), st.booleans()),
)
def test_arbitrary_text_never_raises(text, final_answer):
    for completion in (text, f"<answer>{text}</answer>", f"<reasoning>{text}</reasoning><answer>{text}</answer>"):
        assert gsm8k_accuracy_reward([completion], final_answer=[final_answer])[0] in (0.0, 1.0)
        assert gsm8k_accuracy_reward([completion], answer=[text])[0] in (0.0, 1.0)
        assert reasoning_answer_format_reward([completion])[0] in (0.0, 1.0)
        assert isinstance(judge(completion, final_answer), Verdict)


ADVERSARIAL = {
    "1 MB of reasoning": (
        "<reasoning>" + "48 + 24 = 72. " * 75_000 + "</reasoning><answer>72</answer>",
        Verdict.CORRECT,
    ),
    "30,000 nested answer tags": ("<answer>" * 30_000 + "72" + "</answer>" * 30_000, Verdict.AMBIGUOUS),
    "30,000 answer blocks": ("<answer>72</answer>" * 30_000, Verdict.CORRECT),
    "200 equals signs": ("<answer>" + "72 = " * 200 + "72</answer>", Verdict.CORRECT),
    "1 MB of digits in the answer": ("<answer>" + "7" * 1_000_000 + "</answer>", Verdict.AMBIGUOUS),
    "1 MB answer of numbers": ("<answer>" + "72 " * 350_000 + "</answer>", Verdict.AMBIGUOUS),
    "a 1,000-character number": ("<answer>" + "1," * 499 + "000</answer>", Verdict.MALFORMED),
    "nested latex fractions": ("<answer>" + "\\frac{" * 100 + "1" + "}{2}" * 100 + "</answer>", Verdict.AMBIGUOUS),
    "unclosed latex fractions": ("<answer>\\frac{" + " " * 1000 + "72</answer>", Verdict.CORRECT),
}


@pytest.mark.parametrize(("completion", "verdict"), ADVERSARIAL.values(), ids=ADVERSARIAL.keys())
def test_adversarial_completions_are_scored(completion, verdict):
    """Megabyte inputs finish (scanning is linear, the answer length is bounded) with the right verdict."""
    assert judge(completion, "72") is verdict
