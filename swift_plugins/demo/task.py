"""What the demo takes from its task (``TASK``): the rows, the cold start, the lengths and the rewards.

Countdown (the default) is the measured demo: 1,000 puzzles of 3 numbers of 1-10 and targets of 1-30, worked
answers by ``countdown sft-data``, completions of 76 tokens (the longest worked answer is 72). A reasoning-gym
dataset (``TASK=gym:<name>``) takes the rows and held-out split of ``gym generate`` at the dataset's default
settings or those of ``GYM_SETTINGS``, the cold start of ``gym sft-data`` (:mod:`swift_plugins.gym.cold_start`),
and the lengths of the task's GRPO preset, as the launcher's recipes do: its completion length, at most the scale's
(:attr:`Scale.completion_cap <swift_plugins.demo.plan.Scale>`), its ``--max_length`` for SFT and its vLLM model
length.

>>> demo_task("", completion_cap=256).completion_tokens
76
>>> demo_task("gsm8k", completion_cap=256)
Traceback (most recent call last):
...
swift_plugins.core.errors.SettingError: TASK='gsm8k' is not a task of the demo: countdown (the default) or \
gym:<name> (python -m swift_plugins gym list names them)
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..core.errors import SettingError
from ..core.flags import Flags
from ..core.task import TaskSpec
from ..gym.data import NO_GOLD
from ..gym.settings import parse_settings
from ..tasks import task_named

__all__ = ["HELD_OUT", "DemoTask", "demo_task"]

TRAIN_ROWS = 1500  # 36 SFT steps of 8 rows, and the selection's candidates (160 at CPU scale, all at GPU scale)
HELD_OUT = 500  # rows of each held-out split: dev (for choosing settings) and test (for the figures a run reports)
SPLIT_SEED = 0  # the held-out rows are drawn with this seed whatever SEED is: every run is measured on the same ones
# 3 numbers of 1-10 and targets of 1-30: arithmetic a 135 M model can learn, and 2,025 distinct solvable puzzles:
# 1,000 train, 500 dev and 500 test
PUZZLES = ("--count", "3", "--numbers", "1-10", "--targets", "1-30")
PUZZLE_ROWS = 1000


@dataclass(frozen=True)
class DemoTask:
    """The task of a demo run and what each stage takes from it."""

    spec: TaskSpec
    family: str  # python -m swift_plugins FAMILY generate|sft-data: countdown or gym
    dataset: tuple[str, ...]  # the words naming the rows after ``generate`` (gym: the dataset's name)
    row_args: tuple[str, ...]  # generate's settings of the rows
    unit: str  # what a row is called in the stage titles and the data file's name
    answers: str  # what the cold start's answers are called in the plan
    completion_tokens: int  # every evaluation, the selection and GRPO
    sft_length: int  # SFT's --max_length: a prompt and its cold-start answer
    model_len: int | None = None  # vLLM's --vllm_max_model_len in GRPO (None: the scale's)
    train_rows: int = TRAIN_ROWS

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def rewards(self) -> tuple[str, ...]:
        """The preset's rewards, the accuracy reward first: GRPO logs both, dynamic sampling weighs the first."""
        return tuple(Flags(self.spec.preset.args).values("reward_funcs") or ())

    @property
    def reads_gym_settings(self) -> bool:
        """Whether the trainer's and the evaluations' rewards read ``GYM_SCORE_*``."""
        return self.family == "gym"

    def rows_file(self, data: Path) -> Path:
        return data / f"{self.unit}.jsonl"

    def generate(self, seed: int, out: Path) -> tuple[str, ...]:
        """``python -m`` words writing the training rows to ``out`` in an order drawn from ``seed``, and the dev and
        test rows beside it, the same for every seed (:data:`SPLIT_SEED`)."""
        return ("swift_plugins", self.family, "generate", *self.dataset, "--size", str(self.train_rows),
                "--dev-size", str(HELD_OUT), "--test-size", str(HELD_OUT), "--seed", str(seed),
                "--split-seed", str(SPLIT_SEED), *self.row_args, "--out", str(out), "--quiet")  # fmt: skip

    def sft_data(self, rows: Path, out: Path) -> tuple[str, ...]:
        """``python -m`` words writing the cold-start SFT rows of ``rows`` to ``out``."""
        return ("swift_plugins", self.family, "sft-data", str(rows), "--out", str(out))


def demo_task(name: str, completion_cap: int | None, settings: str = "") -> DemoTask:
    """The demo's task ``TASK=name`` (empty: countdown), its completions at most ``completion_cap`` tokens (None: the
    task's own length), a gym dataset's rows made with ``settings`` (``GYM_SETTINGS``: ``gym generate``'s
    ``key=value`` words, checked here);
    :class:`SettingError` in one line for another task, a gym dataset without gold answers or a bad setting.

    >>> demo_task("gym:chain_sum", 256, "max_terms=2 max_digits=1").row_args
    ('max_terms=2', 'max_digits=1')
    """
    name = name or "countdown"
    if name == "countdown":
        return DemoTask(
            task_named(name), "countdown", (), PUZZLES, "puzzles", "worked answers",
            completion_tokens=76, sft_length=256, train_rows=PUZZLE_ROWS,
        )  # fmt: skip
    family, _, dataset = name.partition(":")
    if family != "gym" or not dataset:
        raise SettingError(f"TASK={name!r} is not a task of the demo: countdown (the default) or gym:<name> "
                           "(python -m swift_plugins gym list names them)")  # fmt: skip
    spec = task_named(name)  # the dataset's name checked first: one line naming the closest
    if dataset in NO_GOLD:
        raise SettingError(f"TASK={name}: its rows have no gold answer to write the cold start from; the demo takes "
                           f"a dataset with one (not {', '.join(sorted(NO_GOLD))})")  # fmt: skip
    parse_settings(dataset, settings.split())
    preset = Flags(spec.preset.args)
    completion_tokens = int(preset.value("max_completion_length"))
    return DemoTask(
        spec, "gym", (dataset,), tuple(settings.split()), "questions", "cold-start answers",
        completion_tokens=min(completion_tokens, completion_cap) if completion_cap else completion_tokens,
        sft_length=int(preset.value("max_length")), model_len=spec.preset.vllm_max_model_len,
    )  # fmt: skip
