"""The task-independent tag helpers and the TRL tutorial's answer-tag rewards, on real completions."""

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from swift_plugins.core.tags import (
    answer_tag_reward,
    answer_tag_strict_reward,
    completion_text,
    is_single_block,
    is_two_block,
    last_answer,
)


@pytest.mark.parametrize(
    ("completion", "text"),
    [
        ("plain", "plain"),
        ([{"role": "assistant", "content": "hi"}], "hi"),
        ([{"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}], "a"),
        ([{"role": "assistant"}], None),
        ([{"role": "assistant", "content": None}], None),
        ([], None),
        (None, None),
        (42, None),
        (b"<answer>1</answer>", None),
        (["<answer>1</answer>"], None),
    ],
)
def test_completion_text(completion, text):
    assert completion_text(completion) == text


LAST_ANSWER_CASES = [
    ("<answer>42</answer>", "42"),
    ("<answer>  \n42\n </answer>", "42"),
    ("<answer>1</answer><answer>2</answer>", "2"),
    ("<answer>1</answer><answer>2</answer><answer>3", "2"),  # an unclosed block after the last one is ignored
    ("<answer><answer>7</answer>", "7"),  # nearest opening tag before the last closing one
    ("<answer>7</answer></answer>", "7</answer>"),  # from the opening tag nearest the last closing one
    ("<answer></answer>", ""),
    ("</answer><answer>", None),
    ("<answer>42", None),
    ("42</answer>", None),
    ("<Answer>42</Answer>", None),
    ("<answer >42</answer>", None),
    ("", None),
    (None, None),
]


@pytest.mark.parametrize(("text", "expected"), LAST_ANSWER_CASES)
def test_last_answer(text, expected):
    assert last_answer(text) == expected


def test_last_answer_with_another_tag():
    assert last_answer("<reasoning>a</reasoning><answer>b</answer>", tag="reasoning") == "a"
    assert last_answer("<answer>b</answer>", tag="reasoning") is None


TWO_BLOCK_CASES = [
    ("<think>x</think><answer>y</answer>", "think", False, True),
    ("\n <think>\nx\n</think>\n\n<answer>\ny\n</answer>\n", "think", False, True),
    ("<reasoning>x</reasoning>\n<answer>y</answer>", "reasoning", False, True),
    ("<reasoning>x</reasoning><answer>y</answer>", "think", False, False),
    ("<think>x</think><answer>y</answer> trailing text", "think", False, False),
    ("text <think>x</think><answer>y</answer>", "think", False, False),
    ("<think>x</think> text <answer>y</answer>", "think", False, False),
    ("<think>x</think><answer>y</answer><answer>z</answer>", "think", False, False),
    ("<think>x</think><think>x</think><answer>y</answer>", "think", False, False),
    ("<answer>y</answer><think>x</think>", "think", False, False),
    ("<think>x<answer>y</answer></think>", "think", False, False),
    ("<think>x</think>", "think", False, False),
    ("x</think><answer>y</answer>", "think", False, False),
    ("x</think>\n<answer>y</answer>\n", "think", True, True),
    ("<think>x</think><answer>y</answer>", "think", True, False),
    ("x<answer>y</answer>", "think", True, False),
    ("<think>x</think><answer>y</answer>", "think", False, True),
    (None, "think", False, False),
]


@pytest.mark.parametrize(("text", "first", "first_in_prompt", "expected"), TWO_BLOCK_CASES)
def test_is_two_block(text, first, first_in_prompt, expected):
    assert is_two_block(text, first, first_in_prompt=first_in_prompt) is expected


def test_is_two_block_with_another_second_tag():
    assert is_two_block("<plan>a</plan><code>b</code>", "plan", "code")
    assert not is_two_block("<plan>a</plan><answer>b</answer>", "plan", "code")


TAG_REWARD_CASES = [
    # completion, loose, strict
    ("<answer>42</answer>", 1.0, 1.0),
    ("  <answer>\n42\n</answer>\n", 1.0, 1.0),
    ("<answer>line one\nline two</answer>", 1.0, 1.0),  # the tutorial's strict regex refused this (no DOTALL)
    ("The answer is <answer>42</answer>.", 1.0, 0.0),
    ("<think>6*7</think><answer>42</answer>", 1.0, 0.0),
    ("<answer>41</answer><answer>42</answer>", 1.0, 0.0),
    ("<answer></answer>", 0.0, 0.0),
    ("<answer> \n </answer>", 0.0, 0.0),
    ("<answer>42", 0.0, 0.0),
    ("42", 0.0, 0.0),
    ("<ANSWER>42</ANSWER>", 0.0, 0.0),
    ([{"role": "assistant", "content": "<answer>42</answer>"}], 1.0, 1.0),
    (None, 0.0, 0.0),
    (42, 0.0, 0.0),
]


@pytest.mark.parametrize(("completion", "loose", "strict"), TAG_REWARD_CASES)
def test_tag_rewards(completion, loose, strict):
    assert answer_tag_reward([completion]) == [loose]
    assert answer_tag_strict_reward([completion]) == [strict]


def test_is_single_block_with_another_tag():
    assert is_single_block("<sql>SELECT 1</sql>", tag="sql")
    assert not is_single_block("<answer>SELECT 1</answer>", tag="sql")


def test_called_as_trl_grpo_trainer_calls_reward_functions():
    kwargs = {
        "prompts": [[{"role": "user", "content": "q"}]] * 2,
        "completions": [
            [{"role": "assistant", "content": "<answer>4</answer>"}],
            [{"role": "assistant", "content": "4"}],
        ],
        "completion_ids": [[1], [2]],
        "answer": ["4", "4"],
        "trainer_state": None,
    }
    assert answer_tag_reward(**kwargs) == [1.0, 0.0]
    assert answer_tag_strict_reward(**kwargs) == [1.0, 0.0]


# The TRL tutorial's patterns, as the reference behaviour on texts where its quirks do not show
# (no newline, no blank block, at most one block).
TUTORIAL_LOOSE = re.compile(r"^.*<answer>(.+)</answer>.*$", re.DOTALL)
TUTORIAL_STRICT = re.compile(r"^<answer>(.+)</answer>$")

_words = st.text(alphabet="abc 12", min_size=1, max_size=8).filter(lambda s: s.strip() == s and s)


@settings(max_examples=300, deadline=None)
@given(_words, _words, _words, st.booleans(), st.booleans())
def test_agrees_with_the_tutorial_patterns_on_single_line_texts(before, content, after, with_before, with_after):
    text = (before if with_before else "") + f"<answer>{content}</answer>" + (after if with_after else "")
    assert answer_tag_reward([text]) == [float(bool(TUTORIAL_LOOSE.fullmatch(text)))]
    assert answer_tag_strict_reward([text]) == [float(bool(TUTORIAL_STRICT.fullmatch(text)))]


@settings(max_examples=500, deadline=None)
@given(st.one_of(st.text(), st.text(alphabet="<>/answerthinkg \n")), st.sampled_from(["think", "reasoning"]))
def test_arbitrary_text_never_raises(text, first):
    for completion in (text, f"<answer>{text}</answer>", [{"role": "assistant", "content": text}]):
        assert answer_tag_reward([completion])[0] in (0.0, 1.0)
        assert answer_tag_strict_reward([completion])[0] in (0.0, 1.0)
        assert is_two_block(completion_text(completion), first) in (True, False)
        answer = last_answer(completion_text(completion))
        assert answer is None or answer == answer.strip()


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="ab<>/ \n"), st.text(alphabet="ab<>/ \n"))
def test_two_block_format_is_exactly_two_blocks_around_whitespace(first, second):
    """The reference: a regex with no tags inside the blocks, checked on tag-free contents."""
    text = f"<think>{first}</think>\n<answer>{second}</answer>"
    tag_free = all(tag not in first + second for tag in ("<think>", "</think>", "<answer>", "</answer>"))
    assert is_two_block(text, "think") is tag_free
