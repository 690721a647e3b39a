"""ms-swift 4.x adapters shared by every task: the preprocessor, dataset registration, reward classes.

A task subpackage subclasses :class:`TaskPreprocessor` and :class:`RewardORM` and calls :func:`register_task`
and :func:`register_task_files` from its own ``swift_adapter``. The think/answer format rewards, which every
think/answer task trains with (:mod:`swift_plugins.core.think_answer`), are registered here, once, by
:func:`register_shared`.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any, ClassVar

from datasets import Dataset as HfDataset
from swift.dataset import DatasetMeta, RowPreprocessor, SubsetDataset, register_dataset
from swift.rewards import ORM, orms

from ..core.errors import DataError
from ..core.files import FORMATS, column_names
from ..core.task import Task
from ..core.think_answer import FORMAT_REWARD, think_answer_format_reward

__all__ = [
    "SHARED_REWARDS",
    "RewardORM",
    "TaskPreprocessor",
    "ThinkAnswerFormat",
    "ThinkAnswerFormatThinkInPrompt",
    "dataset_arguments",
    "register_shared",
    "register_task",
    "register_task_files",
]


class RewardORM(ORM):
    """An ORM class over a pure reward function: swift logs it as ``rewards/<ClassName>/mean``.

    Subclasses set ``reward = staticmethod(function)``; the dataset columns reach the function as
    keyword lists, as they reach any reward of the package from TRL.
    """

    reward: ClassVar[Callable[..., list[float]]]

    def __call__(self, completions: list[Any], **kwargs: Any) -> list[float]:
        return self.reward(completions, **kwargs)


class TaskPreprocessor(RowPreprocessor):
    """Turns a task's rows into prompts, keeping the task's columns (normalised) for the rewards.

    Subclasses set ``task``. Rows are checked before mapping, so a malformed file fails with the bad
    row named instead of having rows silently dropped.
    """

    task: ClassVar[Task]

    def __init__(self, source: str | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.source = source or f"{self.task.name} dataset"

    def prepare_dataset(self, dataset):
        if isinstance(dataset, HfDataset):  # a streamed dataset cannot be checked up front
            self.task.check_columns(dataset.column_names, self.source)
            self.task.check_table({column: dataset[column] for column in self.task.columns}, self.source)
        return dataset

    def preprocess(self, row: dict[str, Any]) -> dict[str, Any]:
        return self.task.prepare(row, self.source)


def dataset_arguments(argv: list[str]) -> list[str]:
    """The values of ``--dataset`` and ``--val_dataset`` in a swift command line, without ``#N``.

    >>> dataset_arguments(["--dataset", "a.jsonl#100", "b", "--val_dataset=c.parquet", "--lr", "1"])
    ['a.jsonl', 'b', 'c.parquet']
    """
    values, collecting = [], False
    for token in argv:
        flag, _, inline = token.partition("=")
        if token.startswith("--"):
            collecting = flag in ("--dataset", "--val_dataset")
            if collecting and inline:
                values.append(inline)
            continue
        if collecting:
            values.append(token)
    return [value.rsplit("#", 1)[0] for value in values]


def _looks_local(value: str) -> bool:
    return value.startswith(("/", ".", "~")) or value.endswith(FORMATS)


def _data_files(path: str) -> list[Path]:
    """A data file itself, or the data files of a folder at any depth (as in a downloaded hub copy)."""
    files = sorted(Path(path).rglob("*")) if os.path.isdir(path) else [Path(path)]
    return [file for file in files if file.suffix in FORMATS and file.is_file()]


def register_task_files(
    preprocessor: type[TaskPreprocessor], values: list[str], subset: Callable[[str], str] | None = None
) -> list[str]:
    """Load the local files and folders among ``values`` that hold the task's data with ``preprocessor``.

    A value that looks like a local path but does not exist raises :class:`DataError`; local files
    of another task or none are left alone. ``subset(folder)`` names the hub config a folder is
    loaded with (swift's default otherwise). Returns the values registered.
    """
    task, registered = preprocessor.task, []
    for value in values:
        if not os.path.exists(value):
            if _looks_local(value):
                raise DataError(f"--dataset {value}: no such file or folder")
            continue  # a hub id
        if any(task.holds_data(column_names(file)) for file in _data_files(value)):
            subsets = [SubsetDataset(subset=subset(value))] if subset and os.path.isdir(value) else ["default"]
            # swift looks local data up by the path exactly as given on its command line.
            for path in {value, os.path.abspath(value)}:
                meta = DatasetMeta(dataset_path=path, preprocess_func=preprocessor(source=value), subsets=subsets)
                register_dataset(meta, exist_ok=True)
            registered.append(value)
    return registered


def register_task(preprocessor: type[TaskPreprocessor]) -> None:
    """Register ``preprocessor`` for the task's hub ids, replacing any registration ms-swift ships.

    ms-swift registers some hub ids itself (``zouxuhong/Countdown-Tasks-3to4``, ``modelscope/gsm8k``);
    this later registration, which also carries the Hugging Face id, takes precedence in swift's
    id lookup.
    """
    task = preprocessor.task
    if task.hub_ids is None:
        return
    ms_id, hf_id = task.hub_ids
    register_dataset(
        DatasetMeta(
            ms_dataset_id=ms_id,
            hf_dataset_id=hf_id,
            subsets=[task.subset or "default"],
            preprocess_func=preprocessor(source=ms_id),
            tags=list(task.tags),
        ),
        exist_ok=True,
    )


class ThinkAnswerFormat(RewardORM):
    """``think_answer_format``: one ``<think>…</think>`` then one ``<answer>…</answer>``, whitespace around."""

    reward = staticmethod(think_answer_format_reward)


class ThinkAnswerFormatThinkInPrompt(RewardORM):
    """``think_answer_format_think_in_prompt``: for chat templates that already open ``<think>`` in the prompt."""

    reward = staticmethod(partial(think_answer_format_reward, think_in_prompt=True))


SHARED_REWARDS = {
    FORMAT_REWARD: ThinkAnswerFormat,
    f"{FORMAT_REWARD}_think_in_prompt": ThinkAnswerFormatThinkInPrompt,
}


def register_shared() -> None:
    """Register the rewards every think/answer task shares in ``orms``."""
    orms.update(SHARED_REWARDS)
