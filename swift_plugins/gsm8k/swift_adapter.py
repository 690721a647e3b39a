"""ms-swift 4.x adapters of GSM8K: the reward classes and the dataset registration.

Each reward class is a thin shell over a pure function; swift logs it as ``rewards/<ClassName>/mean``.
The two answer-tag rewards (:mod:`swift_plugins.core.tags`) serve any task; they are registered here,
with the first task whose format uses them alone.
"""

from __future__ import annotations

from pathlib import Path

from huggingface_hub import DatasetCard
from swift.rewards import orms

from ..core.errors import DataError
from ..core.files import FORMATS
from ..core.tags import answer_tag_reward, answer_tag_strict_reward
from ..integration.swift_adapter import RewardORM, TaskPreprocessor, register_task, register_task_files
from .data import GSM8K, SUBSET
from .rewards import gsm8k_accuracy_reward, reasoning_answer_format_reward

__all__ = [
    "REWARDS",
    "AnswerTag",
    "AnswerTagStrict",
    "Gsm8kAccuracy",
    "Gsm8kPreprocessor",
    "ReasoningAnswerFormat",
    "folder_subset",
    "register",
    "register_files",
]


class Gsm8kAccuracy(RewardORM):
    """``gsm8k_accuracy``: 1.0 iff the completion's final answer equals the reference number exactly."""

    reward = staticmethod(gsm8k_accuracy_reward)


class ReasoningAnswerFormat(RewardORM):
    """``reasoning_answer_format``: one ``<reasoning>…</reasoning>`` then one ``<answer>…</answer>``."""

    reward = staticmethod(reasoning_answer_format_reward)


class AnswerTag(RewardORM):
    """``answer_tag``: an ``<answer>…</answer>`` block somewhere (the TRL tutorial's loose tag reward)."""

    reward = staticmethod(answer_tag_reward)


class AnswerTagStrict(RewardORM):
    """``answer_tag_strict``: the whole completion is one answer block (the TRL tutorial's strict one)."""

    reward = staticmethod(answer_tag_strict_reward)


REWARDS = {
    "gsm8k_accuracy": Gsm8kAccuracy,
    "reasoning_answer_format": ReasoningAnswerFormat,
    "answer_tag": AnswerTag,
    "answer_tag_strict": AnswerTagStrict,
}


class Gsm8kPreprocessor(TaskPreprocessor):
    """Turns ``question``/``answer`` rows into the format prompt, adding the ``final_answer`` column."""

    task = GSM8K


def folder_subset(folder: str) -> str:
    """The config to load a local GSM8K folder with: ``main`` if its README declares it, else ``default``.

    A downloaded hub copy has a README whose configs map ``main`` to ``main/*.parquet``; without one,
    the ``default`` config reads every data file of the folder, so a folder holding several configs'
    subfolders (``main/``, ``socratic/``) and no README is refused rather than mixed.
    """
    readme = Path(folder) / "README.md"
    if readme.is_file():
        configs = DatasetCard.load(readme).data.get("configs") or []
        if any(config.get("config_name") == SUBSET for config in configs):
            return SUBSET
    parents = {file.parent for file in Path(folder).rglob("*") if file.suffix in FORMATS}
    if len(parents) > 1:
        raise DataError(
            f"--dataset {folder}: data files in {len(parents)} subfolders and no README.md naming a "
            f"'{SUBSET}' config; pass the subfolder or the file to train on (e.g. {folder}/{SUBSET})"
        )
    return "default"


def register_files(values: list[str]) -> list[str]:
    """Load the local GSM8K files and folders among ``values`` with :class:`Gsm8kPreprocessor`.

    A value that looks like a local path but does not exist raises ``DataError``. Local files
    without both ``question`` and ``answer`` columns are left to swift (or another task).
    """
    return register_task_files(Gsm8kPreprocessor, values, subset=folder_subset)


def register() -> None:
    """Register the rewards in ``orms`` and the preprocessor for ``modelscope/gsm8k`` and ``openai/gsm8k``.

    ms-swift registers ``modelscope/gsm8k`` itself (question/answer as a plain chat); this later
    registration, which also carries the Hugging Face id, takes precedence in swift's id lookup.
    """
    orms.update(REWARDS)
    register_task(Gsm8kPreprocessor)
