"""ms-swift 4.x adapters, made from each task's :class:`~swift_plugins.core.task.TaskSpec`: the preprocessor, the
dataset registration, the reward classes.

:func:`register_spec` puts a reward class over each of the task's pure reward functions in ms-swift's ``orms``
(named as the task names it: swift logs it as ``rewards/<Name>/mean``) and registers a preprocessor for the task's
hub ids; :func:`register_spec_files` registers it for the task's local files named on the command line. The
rewards any task may train with (:mod:`swift_plugins.core.rewards`) are registered once, by :func:`register_shared`.

>>> from swift_plugins.tasks import task_named
>>> reward_class(task_named("countdown").accuracy_reward).__name__
'CountdownAccuracy'
"""

from __future__ import annotations

import os
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any, ClassVar

from datasets import Dataset as HfDataset
from swift.dataset import DatasetMeta, RowPreprocessor, SubsetDataset, register_dataset
from swift.rewards import ORM, orms

from ..core.errors import DataError
from ..core.files import FORMATS, column_names
from ..core.rewards import SHARED
from ..core.task import Reward, Task, TaskSpec, load

__all__ = [
    "RewardORM",
    "TaskPreprocessor",
    "dataset_arguments",
    "preprocessor_class",
    "register_shared",
    "register_spec",
    "register_spec_files",
    "register_task",
    "register_task_files",
    "reward_class",
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

    ms-swift registers some hub ids itself (``zouxuhong/Countdown-Tasks-3to4``, for one);
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


@cache
def reward_class(reward: Reward) -> type[RewardORM]:
    """The ms-swift reward class over ``reward``'s function, named as ms-swift logs it."""
    return type(reward.logged, (RewardORM,), {"reward": staticmethod(reward.function()), "__module__": __name__,
                                              "__doc__": f"``{reward.name}``: {reward.path}"})  # fmt: skip


@cache
def preprocessor_class(task: Task) -> type[TaskPreprocessor]:
    """The preprocessor of ``task``'s rows."""
    name = "".join(word.capitalize() for word in task.name.replace(":", "_").split("_")) + "Preprocessor"
    return type(name, (TaskPreprocessor,), {"task": task, "__module__": __name__})


def register_spec(spec: TaskSpec) -> None:
    """Put the task's rewards in ms-swift's ``orms`` and its preprocessor on its hub ids; run its check of the
    environment first (a bad setting of the task fails here, before training starts)."""
    if spec.check_environment:
        load(spec.check_environment)(dict(os.environ))
    orms.update({reward.name: reward_class(reward) for reward in spec.rewards})
    register_task(preprocessor_class(spec.data))


def register_spec_files(spec: TaskSpec, values: list[str]) -> list[str]:
    """Load the local files and folders among ``values`` that hold the task's rows with its preprocessor (a value
    that looks like a local path but does not exist raises ``DataError``); the values registered."""
    subset = load(spec.folder_subset) if spec.folder_subset else None
    return register_task_files(preprocessor_class(spec.data), values, subset=subset)


def register_shared() -> None:
    """Register the rewards any task may train with in ``orms``."""
    orms.update({reward.name: reward_class(reward) for reward in SHARED})
