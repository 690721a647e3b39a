"""The Countdown rewards on real completions: every accepted form, every known hack, and properties."""

from fractions import Fraction

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from swift_plugins.core.think_answer import is_well_formatted, think_answer_format_reward
from swift_plugins.countdown.rewards import Verdict, countdown_accuracy_reward, countdown_shaped_reward, judge

THINK = "<think>\nLet me try (6 - 2) first: 4, and 4 * 6 = 24.\n</think>\n"


def answer(text: str) -> str:
    return f"{THINK}<answer>{text}</answer>"


ACCEPTED = [
    ("plain", answer("(6 - 2) * 6"), [6, 2, 6], 24),
    ("with claim", answer("(6 - 2) * 6 = 24"), [6, 2, 6], 24),
    ("claim without spaces", answer("(6-2)*6=24"), [6, 2, 6], 24),
    ("multi-line", answer("\n(6 - 2)\n  * 6\n= 24\n"), [6, 2, 6], 24),
    ("last block wins", answer("6 + 2 + 6") + " then <answer>(6 - 2) * 6</answer>", [6, 2, 6], 24),
    ("intermediate fractions", answer("6 / (1 - 3 / 4)"), [1, 3, 4, 6], 24),
    ("order of numbers free", answer("6 * (6 - 2)"), [2, 6, 6], 24),
    ("zero literal", answer("5 + 5 + 0"), [0, 5, 5], 10),
    ("nums as strings", answer("(6 - 2) * 6"), ["6", "2", "6"], "24"),
    ("nums as JSON text", answer("(6 - 2) * 6"), "[6, 2, 6]", 24),
    ("target as float", answer("(6 - 2) * 6"), [6, 2, 6], 24.0),
    ("chat messages", [{"role": "assistant", "content": answer("(6 - 2) * 6")}], [6, 2, 6], 24),
    ("redundant parentheses", answer("(((6 - 2)) * (6))"), [6, 2, 6], 24),
    ("negative claim", answer("2 - 6 - 6 = -10"), [6, 2, 6], -10),
]


REJECTED = [
    # Hacks the eval-based reference reward pays for, or hangs on.
    ("power tower", answer("9**9**9**9"), [9, 9, 9, 9], 1, Verdict.ILLEGAL_SYNTAX),
    ("floor division", answer("7 // 2"), [7, 2], 3, Verdict.ILLEGAL_SYNTAX),
    ("decimal split into numbers", answer("1.5*2"), [1, 5, 2], 3, Verdict.ILLEGAL_SYNTAX),
    ("unary minus", answer("-1 + 2 + 3"), [1, 2, 3], 4, Verdict.ILLEGAL_SYNTAX),
    ("unary plus", answer("+1 + 2 + 3"), [1, 2, 3], 6, Verdict.ILLEGAL_SYNTAX),
    ("float tolerance", answer("10000001 / 10000000"), [10000001, 10000000], 1, Verdict.WRONG_VALUE),
    ("wrong claim", answer("(6 - 2) * 6 = 25"), [6, 2, 6], 24, Verdict.WRONG_VALUE),
    ("claim of the wrong target", answer("6 + 2 + 6 = 14"), [6, 2, 6], 24, Verdict.WRONG_VALUE),
    ("two equals signs", answer("(6 - 2) * 6 = 24 = 24"), [6, 2, 6], 24, Verdict.ILLEGAL_SYNTAX),
    ("decimal claim", answer("(6 - 2) * 6 = 24.0"), [6, 2, 6], 24, Verdict.ILLEGAL_SYNTAX),
    ("expression as claim", answer("(6 - 2) * 6 = 4 * 6"), [6, 2, 6], 24, Verdict.ILLEGAL_SYNTAX),
    ("exponent literal", answer("1e3 - 976"), [1, 3, 976], 24, Verdict.ILLEGAL_SYNTAX),
    ("hex literal", answer("0x10 + 8"), [0, 10, 8], 24, Verdict.ILLEGAL_SYNTAX),
    ("digit separator", answer("1_000 - 976"), [1000, 976], 24, Verdict.ILLEGAL_SYNTAX),
    ("leading zero", answer("(06 - 2) * 6"), [6, 2, 6], 24, Verdict.ILLEGAL_SYNTAX),
    ("unicode times", answer("(6 - 2) × 6"), [6, 2, 6], 24, Verdict.ILLEGAL_SYNTAX),
    ("unicode divide", answer("48 ÷ 2"), [48, 2], 24, Verdict.ILLEGAL_SYNTAX),
    ("latex times", answer("(6 - 2) \\times 6"), [6, 2, 6], 24, Verdict.ILLEGAL_SYNTAX),
    ("implicit multiplication", answer("6(6 - 2)"), [6, 2, 6], 24, Verdict.ILLEGAL_SYNTAX),
    ("juxtaposed numbers", answer("6 2 6"), [6, 2, 6], 24, Verdict.ILLEGAL_SYNTAX),
    ("arabic-indic digits", answer("(٦ - 2) * 6"), [6, 2, 6], 24, Verdict.ILLEGAL_SYNTAX),
    ("fullwidth digits", answer("(６ - 2) * 6"), [6, 2, 6], 24, Verdict.ILLEGAL_SYNTAX),
    ("names", answer("abs(6 - 2) * 6"), [6, 2, 6], 24, Verdict.ILLEGAL_SYNTAX),
    ("the letter n", answer("n * (6 - 2) * 6"), [6, 2, 6], 24, Verdict.ILLEGAL_SYNTAX),
    ("arabic-indic digits in the claim", answer("(6 - 2) * 6 = ٢٤"), [6, 2, 6], 24, Verdict.ILLEGAL_SYNTAX),
    ("leading zero in the claim", answer("(6 - 2) * 6 = 024"), [6, 2, 6], 24, Verdict.ILLEGAL_SYNTAX),
    ("unicode space", answer("(6 - 2)\u2003* 6"), [6, 2, 6], 24, Verdict.ILLEGAL_SYNTAX),
    ("code", answer("__import__('os').system('true') or 24"), [24], 24, Verdict.ILLEGAL_SYNTAX),
    ("unbalanced", answer("((6 - 2) * 6"), [6, 2, 6], 24, Verdict.ILLEGAL_SYNTAX),
    ("empty answer", answer(""), [6, 2, 6], 24, Verdict.ILLEGAL_SYNTAX),
    ("dangling operator", answer("(6 - 2) * 6 +"), [6, 2, 6], 24, Verdict.ILLEGAL_SYNTAX),
    ("answer too long", answer("(6 - 2) * 6" + " " * 1100 + "= 24"), [6, 2, 6], 24, Verdict.ILLEGAL_SYNTAX),
    # Right syntax, wrong use of the numbers.
    ("number missing", answer("6 * 4"), [6, 2, 6], 24, Verdict.WRONG_NUMBERS),
    ("number reused", answer("(6 - 2) * 6 * 2 / 2"), [6, 2, 6], 24, Verdict.WRONG_NUMBERS),
    ("number not given", answer("(6 - 3) * 8"), [6, 2, 6], 24, Verdict.WRONG_NUMBERS),
    ("division by zero", answer("5 / (1 - 1)"), [1, 1, 5], 5, Verdict.WRONG_VALUE),
    ("wrong value", answer("6 + 2 + 6"), [6, 2, 6], 24, Verdict.WRONG_VALUE),
    # No answer to score.
    ("no answer block", f"{THINK}(6 - 2) * 6 = 24", [6, 2, 6], 24, Verdict.NO_ANSWER),
    ("unclosed answer", f"{THINK}<answer>(6 - 2) * 6", [6, 2, 6], 24, Verdict.NO_ANSWER),
    ("tags are case-sensitive", f"{THINK}<Answer>(6 - 2) * 6</Answer>", [6, 2, 6], 24, Verdict.NO_ANSWER),
    ("None", None, [6, 2, 6], 24, Verdict.NO_ANSWER),
    ("not text", 24, [6, 2, 6], 24, Verdict.NO_ANSWER),
    ("message without content", [{"role": "assistant"}], [6, 2, 6], 24, Verdict.NO_ANSWER),
    # Rows that cannot be read.
    ("target not a number", answer("(6 - 2) * 6"), [6, 2, 6], "twenty-four", Verdict.BAD_ROW),
    ("target not an integer", answer("(6 - 2) * 6"), [6, 2, 6], 24.5, Verdict.BAD_ROW),
    ("nums missing", answer("(6 - 2) * 6"), None, 24, Verdict.BAD_ROW),
    ("nums not JSON", answer("(6 - 2) * 6"), "6, 2, 6]", 24, Verdict.BAD_ROW),
    ("nums of booleans", answer("1 + 1"), [True, True], 2, Verdict.BAD_ROW),
]


@pytest.mark.parametrize(
    ("completion", "nums", "target"), [case[1:] for case in ACCEPTED], ids=[case[0] for case in ACCEPTED]
)
def test_accepted_forms_score_one(completion, nums, target):
    assert judge(completion, nums, target) is Verdict.CORRECT
    assert countdown_accuracy_reward([completion], nums=[nums], target=[target]) == [1.0]


@pytest.mark.parametrize(
    ("completion", "nums", "target", "verdict"), [case[1:] for case in REJECTED], ids=[case[0] for case in REJECTED]
)
def test_hacks_and_mistakes_score_zero(completion, nums, target, verdict):
    assert judge(completion, nums, target) is verdict
    assert countdown_accuracy_reward([completion], nums=[nums], target=[target]) == [0.0]


def test_shaped_reward_gives_partial_credit_only_for_legal_equations_over_the_right_numbers():
    completions = [answer("(6 - 2) * 6"), answer("6 + 2 + 6"), answer("6 * 4"), answer("6 ** 2"), "no answer"]
    assert countdown_shaped_reward(completions, nums=[[6, 2, 6]] * 5, target=[24] * 5) == [1.0, 0.1, 0.0, 0.0, 0.0]


FORMAT_CASES = [
    ("<think>x</think><answer>y</answer>", False, True),
    ("\n <think>\nx\n</think>\n\n<answer>\ny\n</answer>\n", False, True),  # trailing newline is fine
    ("<think>x</think><answer>y</answer> trailing text", False, False),
    ("text <think>x</think><answer>y</answer>", False, False),
    ("<think>x</think> text <answer>y</answer>", False, False),
    ("<think>x</think><answer>y</answer><answer>z</answer>", False, False),
    ("<think>x</think><think>x</think><answer>y</answer>", False, False),
    ("<answer>y</answer><think>x</think>", False, False),
    ("<think>x<answer>y</answer></think>", False, False),
    ("<think>x</think>", False, False),
    ("x</think><answer>y</answer>", False, False),
    ("x</think>\n<answer>y</answer>\n", True, True),  # the template opened <think> in the prompt
    ("<think>x</think><answer>y</answer>", True, False),
    ("x<answer>y</answer>", True, False),
    (None, False, False),
]


@pytest.mark.parametrize(("completion", "think_in_prompt", "expected"), FORMAT_CASES)
def test_format(completion, think_in_prompt, expected):
    assert is_well_formatted(completion, think_in_prompt) is expected
    assert think_answer_format_reward([completion], think_in_prompt=think_in_prompt) == [float(expected)]


ADVERSARIAL = {
    "256 KB of thinking": "<think>" + "a" * 262_144 + "</think><answer>(6 - 2) * 6</answer>",
    "30,000 answer tags": "<answer>" * 30_000 + "(6 - 2) * 6" + "</answer>" * 30_000,
    "30,000 answer blocks": "<answer>1</answer>" * 30_000,
    "500 nested parentheses": answer("(" * 500 + "6" + ")" * 500 + " * (6 - 2)"),
    "100,000 nested parentheses": answer("(" * 100_000 + "6" + ")" * 100_000),
    "power tower": answer("9**9**9**9**9**9**9**9"),
    "huge literal": answer("9" * 1000),
    "huge product": answer(" * ".join(["99"] * 300)),
    "1 MB of digits and operators": answer("1+" * 500_000 + "1"),
}


@pytest.mark.parametrize("completion", ADVERSARIAL.values(), ids=ADVERSARIAL.keys())
def test_adversarial_completions_are_scored_without_raising(completion):
    # Their timings are benchmarks/bench_rewards.py's worst-case table, not a unit test's business.
    assert countdown_accuracy_reward([completion], nums=[[6, 2, 6]], target=[24]) in ([0.0], [1.0])


def test_nested_parentheses_within_the_length_limit_are_parsed_not_rejected():
    # 500 levels fit in 1024 characters; a recursive parser would exhaust the stack on this.
    assert countdown_accuracy_reward(
        [answer("(" * 500 + "6" + ")" * 500 + " * (6 - 2)")], nums=[[6, 6, 2]], target=[24]
    ) == [1.0]


# Random expressions over random numbers, with their text, literals and exact value.
_literals = st.integers(min_value=0, max_value=1000).map(lambda n: (str(n), [n], Fraction(n)))


def _combine(children):
    def join(pair_and_op):
        (left, right), op = pair_and_op
        text = f"({left[0]}){op}({right[0]})"
        a, b = left[2], right[2]
        if op == "/" and b == 0:
            return None
        value = {"+": a + b, "-": a - b, "*": a * b, "/": a / b if b else None}[op]
        return text, left[1] + right[1], value

    return st.tuples(st.tuples(children, children), st.sampled_from("+-*/")).map(join).filter(lambda x: x is not None)


expressions = st.recursive(_literals, _combine, max_leaves=6)


@settings(max_examples=300, deadline=None)
@given(expressions, st.randoms())
def test_random_valid_expressions_score_one_against_their_own_value(expression, random):
    text, literals, value = expression
    assume(value.denominator == 1)
    shuffled = random.sample(literals, len(literals))
    completion = answer(text.replace("(", " ( ").replace(")", " ) "))
    assert countdown_accuracy_reward([completion], nums=[shuffled], target=[int(value)]) == [1.0]
    assert countdown_accuracy_reward([answer(f"{text} = {int(value)}")], nums=[shuffled], target=[int(value)]) == [1.0]
    assert countdown_accuracy_reward([completion], nums=[shuffled], target=[int(value) + 1]) == [0.0]


@settings(max_examples=500, deadline=None)
@given(
    st.one_of(st.text(), st.text(alphabet="<>/answerthik0123456789+-*/()= \n.")), st.lists(st.integers()), st.integers()
)
def test_arbitrary_text_never_raises(text, nums, target):
    for completion in (text, f"<answer>{text}</answer>", f"<think>{text}</think><answer>{text}</answer>"):
        assert countdown_accuracy_reward([completion], nums=[nums], target=[target])[0] in (0.0, 1.0)
        assert countdown_shaped_reward([completion], nums=[nums], target=[target])[0] in (0.0, 0.1, 1.0)
        assert think_answer_format_reward([completion])[0] in (0.0, 1.0)


def test_called_as_trl_grpo_trainer_calls_reward_functions():
    """TRL passes prompts, message-list completions, completion ids and every dataset column as keywords."""
    completions = [[{"role": "assistant", "content": answer("(6 - 2) * 6")}], [{"role": "assistant", "content": "?"}]]
    kwargs = {
        "prompts": [[{"role": "user", "content": "Using the numbers [6, 2, 6] ..."}]] * 2,
        "completions": completions,
        "completion_ids": [[1, 2, 3], [4]],
        "nums": [[6, 2, 6]] * 2,
        "target": [24, 24],
        "solution": ["(6 - 2) * 6"] * 2,
        "trainer_state": None,
    }
    assert countdown_accuracy_reward(**kwargs) == [1.0, 0.0]
    assert countdown_shaped_reward(**kwargs) == [1.0, 0.0]
    assert think_answer_format_reward(**kwargs) == [1.0, 0.0]
