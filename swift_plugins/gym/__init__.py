"""Gym: every reasoning-gym dataset as a task, ``TASK=gym:<name>``; seeded data, rewards that cannot hang.

The modules: :mod:`.entries` (an entry's metadata through JSON), :mod:`.generator` (names, settings, train and
held-out rows), :mod:`.data` (the prompt, the row contract), :mod:`.bounded` and :mod:`.worker` (scores under a
hard time bound), :mod:`.rewards`, :mod:`.scoring`, :mod:`.cli`; the ms-swift adapter is :mod:`.swift_adapter`.
:func:`spec` is the task of one dataset as the registry (:mod:`swift_plugins.tasks`) gives it.
"""

from __future__ import annotations

from functools import cache

from ..tasks import Preset, TaskSpec
from .data import GYM, SYSTEM_PROMPT

__all__ = ["spec"]


def _preset(name: str) -> Preset:
    # Countdown's recipe (a one-line answer after a think block, the same tag layout and format reward) with the
    # gym reward; 500 steps instead of an epoch, as the generated file has the size one asks for.
    generate = ("swift_plugins", "gym", "generate", name)
    return Preset(
        model="Qwen/Qwen2.5-3B-Instruct",
        dataset=f"data/gym-{name}.jsonl",
        args=(
            "--reward_funcs", "external_gym", "think_answer_format",
            "--max_length", "2048",
            "--max_completion_length", "1024",
            "--num_generations", "8",
            "--max_steps", "500",
        ),
        server_args=(
            "--per_device_train_batch_size", "8",
            "--per_device_eval_batch_size", "8",
            "--gradient_accumulation_steps", "8",
            "--learning_rate", "5e-7",
            "--beta", "0.001",
        ),
        colocate_args=(
            "--per_device_train_batch_size", "4",
            "--per_device_eval_batch_size", "8",
            "--gradient_accumulation_steps", "16",
            "--learning_rate", "1e-5",
            "--beta", "0.001",
        ),
        reference_completions=128,
        eval_steps=100,
        vllm_max_model_len=4096,
        smoke_data=(*generate, "--size", "64", "--test-size", "16", "--seed", "0", "--quiet"),
    )  # fmt: skip


@cache
def spec(name: str) -> TaskSpec:
    """The task ``gym:<name>``; :class:`~swift_plugins.core.errors.SettingError` naming the closest datasets."""
    from .generator import check_name

    check_name(name)
    return TaskSpec(
        name=f"gym:{name}",
        data=GYM,
        scoring="swift_plugins.gym.scoring",
        adapter="swift_plugins.gym.swift_adapter",
        preset=_preset(name),
        system_prompt=SYSTEM_PROMPT,
        held_out_hint=f"held-out rows, e.g. python -m swift_plugins gym generate {name} --size 10000 --test-size 500 "
        f"--seed 0 --out data/gym-{name}.jsonl (writes data/gym-{name}.test.jsonl beside it)",
        result_columns=(*GYM.columns, "answer"),
    )
