"""Gym: every reasoning-gym dataset as a task, ``TASK=gym:<name>``; seeded data, rewards that cannot hang.

The modules: :mod:`.entries` (an entry's metadata through JSON), :mod:`.generator` (names, settings, train and
held-out rows), :mod:`.data` (the prompt, the row contract), :mod:`.bounded` and :mod:`.worker` (scores under a
hard time bound), :mod:`.rewards`, :mod:`.scoring`, :mod:`.cli`; the ms-swift adapter is :mod:`.swift_adapter`.
:func:`spec` is the task of one dataset as the registry (:mod:`swift_plugins.tasks`) gives it.
"""

from __future__ import annotations

from dataclasses import replace
from functools import cache

from ..core import think_answer
from ..core.task import Preset, TaskSpec
from .data import GYM

__all__ = ["spec"]


def _preset(name: str) -> Preset:
    # The think/answer preset (Countdown's batches and learning rates) with the gym reward; 500 steps instead of an
    # epoch, as the generated file has the size one asks for.
    generate = ("swift_plugins", "gym", "generate", name)
    return replace(
        think_answer.PRESET,
        dataset=f"data/gym-{name}.jsonl",
        args=think_answer.task_args("external_gym", "--max_steps", "500"),
        eval_steps=100,
        smoke_data=(*generate, "--size", "64", "--test-size", "16", "--seed", "0", "--quiet"),
    )


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
        system_prompt=think_answer.SYSTEM_PROMPT,
        held_out_hint=f"held-out rows, e.g. python -m swift_plugins gym generate {name} --size 10000 --test-size 500 "
        f"--seed 0 --out data/gym-{name}.jsonl (writes data/gym-{name}.test.jsonl beside it)",
        result_columns=GYM.columns,
    )
