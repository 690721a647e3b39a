"""Countdown: given 3-4 numbers and a target, an equation using each number once; exact rewards, data tools.

The modules: :mod:`.expression` (the answer grammar, exact arithmetic), :mod:`.rewards`, :mod:`.solver`,
:mod:`.generator`, :mod:`.audit`, :mod:`.cold_start`, :mod:`.data`, :mod:`.scoring`, :mod:`.cli`. ``SPEC`` is the
task as the registry (:mod:`swift_plugins.tasks`) gives it.
"""

from dataclasses import replace

from ..core import think_answer
from ..core.rewards import FORMAT
from ..core.task import Demo, Reward, TaskSpec
from .data import COUNTDOWN

__all__ = ["SPEC"]

# ms-swift's Countdown GRPO example (the think/answer preset): 3125 steps on 50000 rows.
PRESET = replace(
    think_answer.PRESET,
    dataset="zouxuhong/Countdown-Tasks-3to4#50000",
    args=think_answer.task_args("--num_train_epochs", "1"),
    smoke_data=("swift_plugins", "countdown", "generate", "--size", "64", "--test-size", "16", "--seed", "0",
                "--jobs", "1", "--quiet"),
    # ms-swift's Countdown run oscillated around step 200 with lr 1e-6 and beta 0.04
    collapse=("1e-6", "0.04"),
)  # fmt: skip

REWARDS = (
    Reward("external_countdown", "swift_plugins.countdown.rewards:countdown_accuracy_reward", "CountdownAccuracy",
           accuracy=True),
    FORMAT,
    # the accuracy reward plus 0.1 for a legal equation over the right numbers
    Reward("countdown_shaped", "swift_plugins.countdown.rewards:countdown_shaped_reward", "CountdownShaped",
           weight=None),
)  # fmt: skip

# 3 numbers of 1-10 and targets of 1-30: arithmetic a 135 M model can learn, and 2,025 distinct solvable puzzles,
# of which the demo draws 1,000 to train, 500 dev and 500 test; the longest worked answer is 72 tokens.
DEMO = Demo(
    generate=("swift_plugins", "countdown", "generate", "--count", "3", "--numbers", "1-10", "--targets", "1-30"),
    sft_data=("swift_plugins", "countdown", "sft-data"), unit="puzzles", answers="worked answers",
    completion_tokens=76, sft_length=256, train_rows=1000,
)  # fmt: skip

SPEC = TaskSpec(
    name="countdown",
    data=COUNTDOWN,
    rewards=REWARDS,
    scoring="swift_plugins.countdown.scoring",
    preset=PRESET,
    system_prompt=think_answer.SYSTEM_PROMPT,
    held_out_hint="held-out puzzles, e.g. python -m swift_plugins countdown generate --size 1000 --seed 1 "
    "--out held-out.jsonl",
    cli="swift_plugins.countdown.cli",
    demo=DEMO,
)
