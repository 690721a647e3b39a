"""The R1 frame the think/answer tasks share: the system prompt, the format reward, the GRPO recipe's shape.

A completion thinks in ``<think>…</think>`` and answers in ``<answer>…</answer>``; Countdown and every
reasoning-gym task train in this frame. :data:`PRESET` is ms-swift's Countdown GRPO example in 4.x flags, the
recipe each think/answer task starts from and changes where it must.

>>> think_answer_format_reward(["<think>x</think><answer>y</answer>\\n", "<answer>y</answer>"])
[1.0, 0.0]
>>> PRESET.reference_completions
128
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .tags import completion_text, is_two_block
from .task import Preset

__all__ = [
    "PRESET",
    "SYSTEM_PROMPT",
    "is_well_formatted",
    "task_args",
    "think_answer_format_reward",
    "think_answer_format_think_in_prompt_reward",
]

# The system prompt of ms-swift's Countdown example, which the GPU recipes train with (``--system``).
SYSTEM_PROMPT = (
    "You are a helpful assistant. You first thinks about the reasoning process in the mind and then provides "
    "the user with the answer."
)


def is_well_formatted(completion: Any, think_in_prompt: bool = False) -> bool:
    """True for exactly one ``<think>…</think>`` then one ``<answer>…</answer>``, only whitespace around.

    With ``think_in_prompt=True`` the chat template already opened ``<think>`` in the prompt, so the
    completion must start inside the think block and contain no ``<think>`` of its own.

    >>> is_well_formatted("<think>a</think>\\n<answer>b</answer>\\n")
    True
    >>> is_well_formatted("a</think><answer>b</answer>", think_in_prompt=True)
    True
    """
    return is_two_block(completion_text(completion), "think", first_in_prompt=think_in_prompt)


def think_answer_format_reward(completions: Sequence[Any], think_in_prompt: bool = False, **kwargs: Any) -> list[float]:
    """1.0 for each completion shaped ``<think>…</think><answer>…</answer>``, else 0.0."""
    return [float(is_well_formatted(c, think_in_prompt)) for c in completions]


def think_answer_format_think_in_prompt_reward(completions: Sequence[Any], **kwargs: Any) -> list[float]:
    """:func:`think_answer_format_reward` for chat templates that already open ``<think>`` in the prompt.

    >>> think_answer_format_think_in_prompt_reward(["a</think><answer>b</answer>"])
    [1.0]
    """
    return think_answer_format_reward(completions, think_in_prompt=True)


# ms-swift's Countdown GRPO example (docs: BestPractices/GRPO.md, "Complete GRPO Experimental Workflow"), in 4.x
# flags: 2 GPUs x 8 x 8 = 128 completions (16 prompts of 8) per step. A task replaces its dataset, run length and
# smoke data; its rewards are its own (core.task.TaskSpec.rewards).
PRESET = Preset(
    model="Qwen/Qwen2.5-3B-Instruct",
    dataset="",
    args=(
        "--max_length", "2048",
        "--max_completion_length", "1024",
        "--num_generations", "8",
    ),
    server_args=(
        "--per_device_train_batch_size", "8",
        "--per_device_eval_batch_size", "8",
        "--gradient_accumulation_steps", "8",
        "--learning_rate", "5e-7",
        "--beta", "0.001",
    ),
    # LoRA updates a small low-rank delta, so it takes a larger learning rate than the full fine-tune. Micro-batches
    # of 4 keep the 150k-vocabulary logits small: 4 x 16 = 64 completions (8 prompts of 8) per step. With eval on,
    # the eval batch x processes must be a multiple of num_generations (swift/rlhf_trainers/args_mixin.py,
    # RolloutTrainerArgumentsMixin): 8, not 4.
    colocate_args=(
        "--per_device_train_batch_size", "4",
        "--per_device_eval_batch_size", "8",
        "--gradient_accumulation_steps", "16",
        "--learning_rate", "1e-5",
        "--beta", "0.001",
    ),
    reference_completions=128,
    eval_steps=500,  # the ms-swift doc evaluated every 500 steps
    vllm_max_model_len=4096,
    smoke_data=(),
)  # fmt: skip


def task_args(*run_length: str) -> tuple[str, ...]:
    """The preset's ``args`` for a task run for ``run_length``.

    >>> task_args("--max_steps", "500")[-2:]
    ('--max_steps', '500')
    """
    return (*PRESET.args, *run_length)
