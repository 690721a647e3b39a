"""The rewards any task may train with, by the name ``--reward_funcs`` takes: the think/answer format (and its form
for chat templates that open ``<think>`` in the prompt) and the TRL tutorial's answer-tag rewards. The plugin
registers them once (:mod:`swift_plugins.integration.swift_adapter`); a task lists the ones its recipes train with
among its own rewards.

>>> [reward.name for reward in SHARED]
['think_answer_format', 'think_answer_format_think_in_prompt', 'answer_tag', 'answer_tag_strict']
>>> FORMAT.function()(["<think>a</think><answer>b</answer>", "b"])
[1.0, 0.0]
"""

from __future__ import annotations

from .task import Reward

__all__ = ["FORMAT", "SHARED"]

FORMAT = Reward("think_answer_format", "swift_plugins.core.think_answer:think_answer_format_reward",
                "ThinkAnswerFormat")
SHARED = (
    FORMAT,
    Reward("think_answer_format_think_in_prompt",
           "swift_plugins.core.think_answer:think_answer_format_think_in_prompt_reward",
           "ThinkAnswerFormatThinkInPrompt", weight=None),
    Reward("answer_tag", "swift_plugins.core.tags:answer_tag_reward", "AnswerTag", weight=None),
    Reward("answer_tag_strict", "swift_plugins.core.tags:answer_tag_strict_reward", "AnswerTagStrict", weight=None),
)  # fmt: skip
