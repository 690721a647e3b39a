"""Countdown: given 3-4 numbers and a target, an equation using each number once; exact rewards, data tools.

The modules: :mod:`.expression` (the answer grammar, exact arithmetic), :mod:`.rewards`, :mod:`.solver`,
:mod:`.generator`, :mod:`.audit`, :mod:`.cold_start`, :mod:`.data`, :mod:`.scoring`, :mod:`.cli`; the ms-swift
adapter is :mod:`.swift_adapter`. ``SPEC`` is the task as the registry (:mod:`swift_plugins.tasks`) gives it.
"""

from dataclasses import replace

from ..core import think_answer
from ..core.task import TaskSpec
from .data import COUNTDOWN

__all__ = ["SPEC"]

# ms-swift's Countdown GRPO example (the think/answer preset): 3125 steps on 50000 rows.
PRESET = replace(
    think_answer.PRESET,
    dataset="zouxuhong/Countdown-Tasks-3to4#50000",
    args=think_answer.task_args("external_countdown", "--num_train_epochs", "1"),
    smoke_data=("swift_plugins", "countdown", "generate", "--size", "64", "--test-size", "16", "--seed", "0",
                "--jobs", "1", "--quiet"),
    # ms-swift's Countdown run oscillated around step 200 with lr 1e-6 and beta 0.04
    collapse=("1e-6", "0.04"),
)  # fmt: skip

SPEC = TaskSpec(
    name="countdown",
    data=COUNTDOWN,
    scoring="swift_plugins.countdown.scoring",
    adapter="swift_plugins.countdown.swift_adapter",
    preset=PRESET,
    system_prompt=think_answer.SYSTEM_PROMPT,
    held_out_hint="held-out puzzles, e.g. python -m swift_plugins countdown generate --size 1000 --seed 1 "
    "--out held-out.jsonl",
)
