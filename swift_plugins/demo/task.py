"""What the demo takes from its task (``TASK``): the rows, the cold start, the lengths and the rewards.

Every task of the registry with a :class:`~swift_plugins.core.task.Demo` record is a task of the demo: Countdown
(the default) and every reasoning-gym dataset with gold answers (``TASK=gym:<name>``). The record says how the rows
and the cold-start answers are made (the task's own ``generate`` and ``sft-data`` commands), what a row is called,
and the lengths: its completions, at most the scale's (:attr:`Scale.completion_cap
<swift_plugins.demo.plan.Scale>`), its ``--max_length`` for SFT and its vLLM model length.

>>> demo_task("", completion_cap=256).completion_tokens
76
>>> demo_task("gym:boxnet", completion_cap=256)  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
swift_plugins.core.errors.SettingError: TASK=gym:boxnet: its rows have no gold answer to write the cold start from; ...
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from ..core.errors import SettingError
from ..core.task import Demo, TaskSpec
from ..tasks import task_named, task_names

__all__ = ["DEFAULT_TASK", "HELD_OUT", "SPLIT_SEED", "DemoTask", "demo_task"]

DEFAULT_TASK = "countdown"
HELD_OUT = 500  # rows of each held-out split: dev (for choosing settings) and test (for the figures a run reports)
SPLIT_SEED = 0  # the held-out rows are drawn with this seed whatever SEED is: every run is measured on the same ones


@dataclass(frozen=True)
class DemoTask:
    """The task of a demo run and what each stage takes from it."""

    spec: TaskSpec
    row_args: tuple[str, ...]  # generate's key=value settings of the rows (the task's row_settings)
    completion_tokens: int  # every evaluation, the selection and GRPO

    @property
    def demo(self) -> Demo:
        return self.spec.demo

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def unit(self) -> str:
        return self.demo.unit

    def rows_file(self, data: Path) -> Path:
        return data / f"{self.unit}.jsonl"

    def generate(self, seed: int, out: Path) -> tuple[str, ...]:
        """``python -m`` words writing the training rows to ``out`` in an order drawn from ``seed``, and the dev and
        test rows beside it, the same for every seed (:data:`SPLIT_SEED`)."""
        return (*self.demo.generate, "--size", str(self.demo.train_rows), "--dev-size", str(HELD_OUT),
                "--test-size", str(HELD_OUT), "--seed", str(seed), "--split-seed", str(SPLIT_SEED), *self.row_args,
                "--out", str(out), "--quiet")  # fmt: skip

    def sft_data(self, rows: Path, out: Path) -> tuple[str, ...]:
        """``python -m`` words writing the cold-start SFT rows of ``rows`` to ``out``."""
        return (*self.demo.sft_data, str(rows), "--out", str(out))


def demo_task(name: str, completion_cap: int | None, env: Mapping[str, str] | None = None) -> DemoTask:
    """The demo's task ``TASK=name`` (empty: :data:`DEFAULT_TASK`), its completions at most ``completion_cap``
    tokens (None: the task's own length), its rows made with the words of the task's ``row_settings`` setting in
    ``env`` (checked here); :class:`SettingError` in one line for a task without a demo or a bad setting.

    >>> demo_task("gym:chain_sum", 256, {"GYM_SETTINGS": "max_terms=2 max_digits=1"}).row_args
    ('max_terms=2', 'max_digits=1')
    """
    name = name or DEFAULT_TASK
    spec = task_named(name)  # an unknown name: one line naming the closest
    if spec.demo is None:
        tasks = task_names(lambda task: task.demo is not None).replace(DEFAULT_TASK, f"{DEFAULT_TASK} (the default)", 1)
        raise SettingError(f"TASK={name}: {spec.no_demo}" if spec.no_demo else
                           f"TASK={name!r} is not a task of the demo: {tasks}")  # fmt: skip
    words = tuple((env or {}).get(spec.demo.row_settings, "").split()) if spec.demo.row_settings else ()
    if spec.demo.check_row_settings is not None:
        spec.demo.check_row_settings(words)
    cap = spec.demo.completion_tokens if completion_cap is None else min(spec.demo.completion_tokens, completion_cap)
    return DemoTask(spec, words, cap)
