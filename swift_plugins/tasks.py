"""The package's tasks, by name: what ``plugin.py``, ``evaluate`` and the launcher look up.

A task is a subpackage of ``swift_plugins`` whose ``__init__`` exports ``SPEC``, a :class:`TaskSpec`: its rows
(a :class:`~swift_plugins.core.task.Task`), its scoring and ms-swift adapter modules, its GRPO recipe
(:class:`Preset`) and the hint the launcher prints when a run has no held-out file. Adding a task is that
subpackage and one line in :data:`NAMES`. Nothing here imports a task until it is asked for, and a task's
``__init__`` imports only the standard library, so the launcher's DRY_RUN needs nothing else.

>>> task_named("gsm8k").preset.reference_completions
84
>>> task_named("chess")
Traceback (most recent call last):
...
swift_plugins.core.errors.SettingError: TASK='chess' is not a task of this package: use countdown or gsm8k
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from types import ModuleType

from .core.errors import SettingError
from .core.task import Task

__all__ = ["NAMES", "Preset", "TaskSpec", "all_tasks", "task_named"]

NAMES = (
    "countdown",
    "gsm8k",
)


@dataclass(frozen=True)
class Preset:
    """A task's GRPO recipe for the launcher; ``*_args`` are ``swift rlhf`` words, every flag once."""

    model: str  # default MODEL
    dataset: str  # default DATASET
    args: tuple[str, ...]  # rewards, lengths, generations, run length
    server_args: tuple[str, ...]  # batch, lr, beta: full fine-tune against a rollout server
    colocate_args: tuple[str, ...]  # batch, lr, beta: LoRA with vLLM colocated on one GPU
    reference_completions: int  # completions per optimizer step of the reference run
    eval_steps: int
    vllm_max_model_len: int  # prompt + completion must fit
    # SMOKE=1 data: a hub sample ("id#N"), or the argv after `python -m` that writes `--out PATH` and its
    # held-out sibling PATH.test (the launcher appends --out)
    smoke_data: str | tuple[str, ...]
    collapse: tuple[str, str] | None = None  # (lr, beta) from which runs are known to collapse, with its source


@dataclass(frozen=True)
class TaskSpec:
    """Everything the tools and the launcher need of one task."""

    name: str  # the registry name: TASK=..., evaluate --task ...
    data: Task  # columns, row check, prompt
    scoring: str  # module: samples_from_rows, score_samples, sample_record, format_report
    adapter: str  # module with register() and register_files(values): the only one importing ms-swift
    preset: Preset
    system_prompt: str | None  # given to training with --system (None: the rows carry their own)
    held_out_hint: str  # how to make a held-out file, printed when a run has none

    def scoring_module(self) -> ModuleType:
        return importlib.import_module(self.scoring)

    def adapter_module(self) -> ModuleType:
        return importlib.import_module(self.adapter)


def task_named(name: str) -> TaskSpec:
    """The task registered as ``name``, or :class:`SettingError` naming the tasks there are."""
    if name not in NAMES:
        raise SettingError(f"TASK={name!r} is not a task of this package: use {' or '.join(NAMES)}")
    return importlib.import_module(f"{__package__}.{name}").SPEC


def all_tasks() -> list[TaskSpec]:
    """Every registered task, in :data:`NAMES` order."""
    return [task_named(name) for name in NAMES]
