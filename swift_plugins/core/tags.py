"""Tagged blocks in completions, for every task: the last answer block, the two-block format, tag rewards.

Completions are strings, or chat-message lists whose last message's ``content`` is scored; anything
else has no text and scores 0.0. Every function here runs in linear time (a few ``str.find``/``count``
calls, no regular expression that can backtrack) and never raises on any completion. Tags are
case-sensitive and must be written exactly (``<answer>``, not ``<Answer>`` or ``< answer >``).

The two tag rewards are the TRL GRPO tutorial's loose and strict answer-tag rewards, scoring 1.0
instead of its 5 and 10 (weigh them with ``--reward_weights``):

>>> answer_tag_reward(["Sure. <answer>42</answer>", "42"])
[1.0, 0.0]
>>> answer_tag_strict_reward(["<answer>42</answer>\\n", "Sure. <answer>42</answer>"])
[1.0, 0.0]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = [
    "answer_tag_reward",
    "answer_tag_strict_reward",
    "completion_text",
    "is_single_block",
    "is_two_block",
    "last_answer",
]


def completion_text(completion: Any) -> str | None:
    """The text of a completion: a string, or the last message's ``content`` of a chat list; else None.

    >>> completion_text([{"role": "user", "content": "q"}, {"role": "assistant", "content": "hi"}])
    'hi'
    >>> completion_text(42) is None
    True
    """
    if isinstance(completion, str):
        return completion
    if isinstance(completion, Sequence) and completion and isinstance(completion[-1], dict):
        content = completion[-1].get("content")
        return content if isinstance(content, str) else None
    return None


def last_answer(text: str | None, tag: str = "answer") -> str | None:
    """The stripped content of the last ``<tag>…</tag>`` block, or None if there is none.

    The last closing tag, then the nearest opening tag before it: linear time whatever the number
    of tags, and an unclosed block after the last complete one is ignored.

    >>> last_answer("<answer>1</answer> <answer> 2\\n+ 3 </answer> <answer>4")
    '2\\n+ 3'
    >>> last_answer("<reasoning>r</reasoning>", tag="reasoning")
    'r'
    >>> last_answer("</answer><answer>") is None
    True
    """
    if not isinstance(text, str):
        return None
    opening, closing = f"<{tag}>", f"</{tag}>"
    end = text.rfind(closing)
    if end < 0:
        return None
    start = text.rfind(opening, 0, end)
    if start < 0:
        return None
    return text[start + len(opening) : end].strip()


def is_two_block(text: str | None, first: str, second: str = "answer", first_in_prompt: bool = False) -> bool:
    """True iff the stripped text is exactly one ``<first>…</first>`` then one ``<second>…</second>``.

    Only whitespace may stand before, between and after the two blocks, and neither tag may appear
    anywhere else. With ``first_in_prompt=True`` the chat template already opened ``<first>`` in the
    prompt, so the text must start inside the first block and hold no ``<first>`` of its own.

    >>> is_two_block("<think>a</think>\\n<answer>b</answer>\\n", "think")
    True
    >>> is_two_block("a</reasoning><answer>b</answer>", "reasoning", first_in_prompt=True)
    True
    >>> is_two_block("<think>a</think> so: <answer>b</answer>", "think")
    False
    """
    if not isinstance(text, str):
        return False
    first_open, first_close = f"<{first}>", f"</{first}>"
    second_open, second_close = f"<{second}>", f"</{second}>"
    text = text.strip()
    if not first_in_prompt:
        if not text.startswith(first_open):
            return False
        text = text[len(first_open) :]
    if not all(text.count(tag) == 1 for tag in (first_close, second_open, second_close)):
        return False
    if first_open in text or not text.endswith(second_close):
        return False
    first_end = text.index(first_close) + len(first_close)
    second_start = text.index(second_open)
    return second_start >= first_end and not text[first_end:second_start].strip()


def is_single_block(text: str | None, tag: str = "answer") -> bool:
    """True iff the stripped text is one ``<tag>…</tag>`` block with non-blank content and nothing else.

    >>> is_single_block(" <answer>\\n42\\n</answer>\\n")
    True
    >>> is_single_block("<answer>1</answer><answer>2</answer>")
    False
    """
    if not isinstance(text, str):
        return False
    opening, closing = f"<{tag}>", f"</{tag}>"
    text = text.strip()
    return (
        text.startswith(opening)
        and text.endswith(closing)
        and text.count(opening) == 1
        and text.count(closing) == 1
        and bool(text[len(opening) : -len(closing)].strip())
    )


def answer_tag_reward(completions: Sequence[Any], **kwargs: Any) -> list[float]:
    """1.0 for each completion holding an ``<answer>…</answer>`` block with non-blank content anywhere.

    >>> answer_tag_reward(["I think <answer>7</answer>, yes.", "<answer> </answer>", None])
    [1.0, 0.0, 0.0]
    """
    return [float(bool(last_answer(completion_text(c)))) for c in completions]


def answer_tag_strict_reward(completions: Sequence[Any], **kwargs: Any) -> list[float]:
    """1.0 for each completion that is, stripped, one ``<answer>…</answer>`` block and nothing else.

    >>> answer_tag_strict_reward([[{"role": "assistant", "content": "<answer>7</answer>"}], "7 <answer>7</answer>"])
    [1.0, 0.0]
    """
    return [float(is_single_block(completion_text(c))) for c in completions]
