"""What a task is to the shared layer: its columns, its hub ids, and how a raw row becomes a prompt.

A task is a :class:`Task` value (pure: no ms-swift import); the swift adapter of
:mod:`swift_plugins.integration.swift_adapter` turns it into a registered preprocessor.

>>> echo = Task(
...     name="echo",
...     columns=("text",),
...     check_row=lambda row, where: {"text": str(row["text"])},
...     messages=lambda row: [{"role": "user", "content": row["text"]}],
... )
>>> echo.prepare({"text": "hi", "id": 3}, "rows.jsonl:1")
{'text': 'hi', 'id': 3, 'messages': [{'role': 'user', 'content': 'hi'}]}
>>> echo.check_columns(["id"], "rows.jsonl")
Traceback (most recent call last):
...
swift_plugins.core.errors.DataError: rows.jsonl: echo data needs columns 'text'; missing ['text'] (found ['id'])
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from .errors import DataError
from .flags import Flags

__all__ = ["Preset", "Task", "TaskSpec"]

Row = dict[str, Any]


@dataclass(frozen=True)
class Task:
    """One task's data contract.

    ``check_row(row, where)`` returns the row's task columns normalised (raising :class:`DataError`
    that names ``where`` when the row is malformed); ``messages(checked)`` builds the chat prompt
    from them. ``hub_ids`` are ``(ModelScope id, Hugging Face id)``; ``subset`` the hub config to load.
    """

    name: str
    columns: tuple[str, ...]
    check_row: Callable[[Row, str], Row]
    messages: Callable[[Row], list[dict[str, str]]]
    hub_ids: tuple[str, str] | None = None
    subset: str | None = None
    tags: tuple[str, ...] = field(default_factory=tuple)
    claims_partial: bool = True  # a file with only some of the columns is this task's (and fails clearly)

    def check_columns(self, columns: Iterable[str], source: str) -> None:
        """:class:`DataError` unless ``columns`` include every column of the task."""
        columns = set(columns)
        missing = [column for column in self.columns if column not in columns]
        if missing:
            wanted = " and ".join(f"'{column}'" for column in self.columns)
            raise DataError(
                f"{source}: {self.name} data needs columns {wanted}; missing {missing} (found {sorted(columns)})"
            )

    def check_table(self, table: dict[str, list[Any]], source: str) -> None:
        """Check every row of a column table, naming the first bad one as ``source: row N``."""
        self.check_columns(table, source)
        for index, values in enumerate(zip(*(table[column] for column in self.columns), strict=True)):
            self.check_row(dict(zip(self.columns, values, strict=True)), f"{source}: row {index}")

    def prepare(self, row: Row, where: str) -> Row:
        """The row with its task columns normalised and its ``messages`` prompt added."""
        checked = self.check_row(row, where)
        return {**row, **checked, "messages": self.messages(checked)}

    def holds_data(self, columns: Iterable[str]) -> bool:
        """Whether a file with these columns is meant for this task: all its columns, or any if ``claims_partial``."""
        present = set(columns)
        found = [column in present for column in self.columns]
        return any(found) if self.claims_partial else all(found)


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

    @property
    def completion_tokens(self) -> int:
        """The ``--max_completion_length`` training answers are cut at (what evaluation should allow too)."""
        return int(Flags(self.args).value("max_completion_length"))

    @property
    def accuracy_reward(self) -> str:
        """The first ``--reward_funcs`` name: the reward of a right answer (the others judge its form)."""
        return Flags(self.args).values("reward_funcs")[0]


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
    result_columns: tuple[str, ...] = ()  # data columns evaluate puts back in swift infer's rows (it drops them)

    def scoring_module(self) -> ModuleType:
        return importlib.import_module(self.scoring)

    def adapter_module(self) -> ModuleType:
        return importlib.import_module(self.adapter)
