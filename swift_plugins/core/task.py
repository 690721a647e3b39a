"""What a task is to the shared layer: one :class:`TaskSpec`, registered once by name (:mod:`swift_plugins.tasks`).

Its rows (a :class:`Task`: columns, hub ids, how a raw row becomes a prompt), its rewards (:class:`Reward`: a name,
a pure function, a weight, the accuracy reward named), its scorer, its GRPO recipe (:class:`Preset`), its commands
and what the CPU demo takes from it (:class:`Demo`). All pure: no ms-swift import; the swift adapter of
:mod:`swift_plugins.integration.swift_adapter` makes the preprocessor and the reward classes from it.

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
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from .errors import DataError
from .fields import SettingHelp
from .flags import Flags

__all__ = ["Demo", "Preset", "Reward", "Task", "TaskSpec", "load"]

Row = dict[str, Any]


def load(path: str) -> Any:
    """The object ``module:name`` names, imported now (a task names its functions, so that a DRY_RUN imports none).

    >>> load("swift_plugins.core.flags:Flags").__name__
    'Flags'
    """
    module, _, name = path.partition(":")
    return getattr(importlib.import_module(module), name)


@dataclass(frozen=True)
class Reward:
    """One reward: the name ``--reward_funcs`` takes, its pure function (``module:name``), the name ms-swift logs it
    under (``rewards/<logged>/mean``), its weight in the task's recipes (None: registered, not trained on unless
    named), and whether it is the task's accuracy reward (the one a right answer earns; the others judge its form).

    >>> FORMAT = Reward("think_answer_format", "swift_plugins.core.think_answer:think_answer_format_reward",
    ...                 "ThinkAnswerFormat")
    >>> FORMAT.function()(["<think>a</think><answer>b</answer>"])
    [1.0]
    """

    name: str
    path: str  # module:name of the function (completions, **columns) -> list[float]
    logged: str
    weight: float | None = 1.0
    accuracy: bool = False

    def function(self) -> Callable[..., list[float]]:
        return load(self.path)


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
    def max_length(self) -> int:
        """The ``--max_length`` of a training sequence."""
        return int(Flags(self.args).value("max_length"))



@dataclass(frozen=True)
class Demo:
    """What ``make demo`` takes from a task: how its rows and cold-start answers are made, what they are called, how
    long its answers are. ``generate`` and ``sft_data`` are the words after ``python -m`` of the task's commands
    (``generate`` takes ``--size``, ``--dev-size``, ``--test-size``, ``--seed``, ``--split-seed`` and ``--out``;
    ``sft_data`` a rows file and ``--out``); a cold start is always made, from each row's gold answer."""

    generate: tuple[str, ...]
    sft_data: tuple[str, ...]
    unit: str  # a row, in the stage titles and the data file's name (puzzles, questions)
    answers: str  # the cold start's answers, in the plan (worked answers)
    completion_tokens: int  # every evaluation, the selection and GRPO
    sft_length: int  # SFT's --max_length: a prompt and its cold-start answer
    train_rows: int = 1500
    model_len: int | None = None  # vLLM's --vllm_max_model_len in GRPO (None: the scale's)
    settings: tuple[str, ...] = ()  # the demo settings of this task alone (the demo refuses them for another) ...
    settings_help: tuple[SettingHelp, ...] = ()  # ... and the --help rows of those the launcher does not document
    row_settings: str = ""  # the one of them whose key=value words go to generate after its own arguments
    check_row_settings: Callable[[Sequence[str]], None] | None = None  # those words checked, one line if bad


@dataclass(frozen=True)
class TaskSpec:
    """Everything the tools, the plugin, the launcher and the demo need of one task.

    >>> from swift_plugins.tasks import task_named
    >>> countdown = task_named("countdown")
    >>> countdown.accuracy_reward.name, countdown.reward_args()
    ('external_countdown', ('--reward_funcs', 'external_countdown', 'think_answer_format'))
    """

    name: str  # the registry name: TASK=..., evaluate --task ...
    data: Task  # columns, row check, prompt
    rewards: tuple[Reward, ...]  # every reward the task registers; one is its accuracy reward
    scoring: str  # module: samples_from_rows, score_samples, sample_record, format_report
    preset: Preset
    system_prompt: str | None  # given to training with --system (None: the rows carry their own)
    held_out_hint: str  # how to make a held-out file, printed when a run has none
    result_columns: tuple[str, ...] = ()  # data columns evaluate puts back in swift infer's rows (it drops them)
    cli: str | None = None  # module whose add_command(subparsers) adds `python -m swift_plugins <task> ...`
    folder_subset: str | None = None  # module:name of (folder) -> the hub config a local folder is loaded with
    check_environment: str | None = None  # module:name of (environ) -> anything, raising on a bad setting of the task
    demo: Demo | None = None  # None: no demo of the task ...
    no_demo: str = ""  # ... and why, where the reason is the task's own

    def __post_init__(self) -> None:
        if sum(reward.accuracy for reward in self.rewards) != 1:
            raise ValueError(f"task {self.name}: exactly one reward must be its accuracy reward")

    @property
    def accuracy_reward(self) -> Reward:
        """The reward of a right answer (the others judge its form)."""
        return next(reward for reward in self.rewards if reward.accuracy)

    def reward_args(self) -> tuple[str, ...]:
        """The recipes' ``--reward_funcs`` (and ``--reward_weights`` where a weight is not 1): the rewards with a
        weight."""
        trained = [reward for reward in self.rewards if reward.weight is not None]
        weights = () if all(reward.weight == 1 for reward in trained) else (
            "--reward_weights", *(f"{reward.weight:g}" for reward in trained))  # fmt: skip
        return ("--reward_funcs", *(reward.name for reward in trained), *weights)

    def scoring_module(self) -> ModuleType:
        return importlib.import_module(self.scoring)
