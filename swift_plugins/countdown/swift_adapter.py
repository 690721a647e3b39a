"""ms-swift 4.x adapters: the reward classes and the Countdown dataset registration.

This is the only module that imports ms-swift. Each reward class is a thin shell over a pure
function of :mod:`.rewards`; swift logs it as ``rewards/<ClassName>/mean``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from datasets import Dataset as HfDataset
from swift.dataset import DatasetMeta, RowPreprocessor, register_dataset
from swift.rewards import ORM, orms

from .data import FORMATS, HUB_IDS, DataError, check_columns, check_rows, has_countdown_columns, prompt_for
from .rewards import countdown_accuracy_reward, countdown_shaped_reward, think_answer_format_reward

__all__ = [
    "REWARDS",
    "CountdownAccuracy",
    "CountdownPreprocessor",
    "CountdownShaped",
    "ThinkAnswerFormat",
    "ThinkAnswerFormatThinkInPrompt",
    "dataset_arguments",
    "register",
    "register_countdown_files",
]


class CountdownAccuracy(ORM):
    """``external_countdown``: 1.0 iff the last answer uses exactly ``nums`` and equals ``target``."""

    def __call__(self, completions: list[Any], nums: list[Any], target: list[Any], **kwargs: Any) -> list[float]:
        return countdown_accuracy_reward(completions, nums, target)


class CountdownShaped(ORM):
    """``countdown_shaped``: the accuracy reward plus 0.1 for a legal equation over the right numbers."""

    def __call__(self, completions: list[Any], nums: list[Any], target: list[Any], **kwargs: Any) -> list[float]:
        return countdown_shaped_reward(completions, nums, target)


class ThinkAnswerFormat(ORM):
    """``think_answer_format``: one ``<think>…</think>`` then one ``<answer>…</answer>``, whitespace around."""

    think_in_prompt = False

    def __call__(self, completions: list[Any], **kwargs: Any) -> list[float]:
        return think_answer_format_reward(completions, think_in_prompt=self.think_in_prompt)


class ThinkAnswerFormatThinkInPrompt(ThinkAnswerFormat):
    """``think_answer_format_think_in_prompt``: for chat templates that already open ``<think>`` in the prompt."""

    think_in_prompt = True


REWARDS = {
    "external_countdown": CountdownAccuracy,
    "countdown_shaped": CountdownShaped,
    "think_answer_format": ThinkAnswerFormat,
    "think_answer_format_think_in_prompt": ThinkAnswerFormatThinkInPrompt,
}


class CountdownPreprocessor(RowPreprocessor):
    """Turns ``nums``/``target`` rows into a user prompt, keeping both columns as ints for the rewards.

    Rows are checked before mapping, so a malformed file fails with the bad row named instead of
    having rows silently dropped.
    """

    def __init__(self, source: str = "Countdown dataset", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.source = source

    def prepare_dataset(self, dataset):
        if isinstance(dataset, HfDataset):  # a streamed dataset cannot be checked up front
            check_columns(dataset.column_names, self.source)
            check_rows(dataset["nums"], dataset["target"], self.source)
        return dataset

    def preprocess(self, row: dict[str, Any]) -> dict[str, Any]:
        nums, target = [int(n) for n in row["nums"]], int(row["target"])
        return {
            **row,
            "nums": nums,
            "target": target,
            "messages": [{"role": "user", "content": prompt_for(nums, target)}],
        }


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


def _holds_countdown_data(path: str) -> bool:
    """A data file with ``nums``/``target`` columns, or a folder holding one (at any depth, as in a hub copy)."""
    files = sorted(Path(path).rglob("*")) if os.path.isdir(path) else [Path(path)]
    return any(file.suffix in FORMATS and has_countdown_columns(file) for file in files)


def register_countdown_files(values: list[str]) -> list[str]:
    """Load the local Countdown files and folders among ``values`` with :class:`CountdownPreprocessor`.

    A value that looks like a local path but does not exist raises :class:`DataError`. Local files
    without ``nums``/``target`` columns are left to swift. Returns the paths registered.
    """
    registered = []
    for value in values:
        if not os.path.exists(value):
            if _looks_local(value):
                raise DataError(f"--dataset {value}: no such file or folder")
            continue  # a hub id
        if _holds_countdown_data(value):
            # swift looks local data up by the path exactly as given on its command line.
            for path in {value, os.path.abspath(value)}:
                meta = DatasetMeta(dataset_path=path, preprocess_func=CountdownPreprocessor(source=value))
                register_dataset(meta, exist_ok=True)
            registered.append(value)
    return registered


def register() -> None:
    """Register the rewards in ``orms`` and the preprocessor for the hub ids of the Countdown data.

    ms-swift registers ``zouxuhong/Countdown-Tasks-3to4`` itself; this later registration, which also
    carries the Hugging Face id, takes precedence in swift's id lookup.
    """
    orms.update(REWARDS)
    ms_id, hf_id = HUB_IDS
    register_dataset(
        DatasetMeta(
            ms_dataset_id=ms_id,
            hf_dataset_id=hf_id,
            preprocess_func=CountdownPreprocessor(source=ms_id),
            tags=["math", "countdown"],
        ),
        exist_ok=True,
    )
