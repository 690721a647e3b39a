"""reasoning-gym rows: the prompt in the package's tag layout, row validation, the task's contract.

A row is one reasoning-gym entry: ``gym_dataset`` (its dataset's name), ``gym_config`` (the settings it was
generated with, as JSON: the scorer is built with them), ``question``, ``answer`` (reasoning-gym's gold answer,
null only in the datasets of :data:`NO_GOLD`, whose scorer checks the answer itself) and ``metadata`` (the entry's
metadata as JSON, :mod:`.entries`). Rows of several datasets may share a file: each row is scored by its own
dataset. A row that cannot be scored is refused before anything is scored or asked of a model: a dataset that is
not served (with the closest names), settings its dataset refuses (:func:`.settings.check_config`), no answer.

>>> row = {"gym_dataset": "basic_arithmetic", "gym_config": "{}", "question": "Calculate 2 + 3.",
...        "answer": "5", "metadata": "{}"}
>>> GYM.prepare(row, "rows.jsonl:1")["messages"][0]["content"].splitlines()[0]
'Calculate 2 + 3.'
>>> check_row({**row, "metadata": "{"}, "rows.jsonl:2")
Traceback (most recent call last):
...
swift_plugins.core.errors.DataError: rows.jsonl:2: metadata must be the entry's metadata as a JSON object, got '{'
>>> check_row({**row, "gym_dataset": "composite"}, "rows.jsonl:3")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
swift_plugins.core.errors.DataError: rows.jsonl:3: gym:composite is not served: a mix of other datasets: ...
>>> check_row({**row, "answer": None}, "rows.jsonl:4")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
swift_plugins.core.errors.DataError: rows.jsonl:4: answer must be basic_arithmetic's gold answer (non-empty text: no \
answer can match an empty one), got None
"""

from __future__ import annotations

from typing import Any

from ..core.errors import DataError, SettingError
from ..core.task import Task
from .entries import decode
from .generator import check_name
from .settings import check_config

__all__ = ["COLUMNS", "GYM", "NO_GOLD", "check_row", "entry_of", "prompt_for"]

COLUMNS = ("gym_dataset", "gym_config", "question", "answer", "metadata")  # answer: null in NO_GOLD's datasets only
# The datasets whose entries have no gold answer (None): their scorer checks the answer itself (tests/gym check it).
NO_GOLD = frozenset({"boxnet", "graph_color", "rubiks_cube", "rush_hour"})
FORMAT_INSTRUCTION = (
    "Show your work in <think> </think> tags. And return only the final answer in <answer> </answer> tags, "
    "for example <think> ... </think> <answer> 42 </answer>."
)


def prompt_for(question: str) -> str:
    """The user prompt: reasoning-gym's question, then the think/answer tag layout."""
    return f"{question}\n\n{FORMAT_INSTRUCTION}"


def _json_object(row: dict[str, Any], column: str, where: str, what: str) -> str:
    text = row.get(column)
    try:
        if isinstance(text, str) and isinstance(decode(text), dict):
            return text
    except ValueError:
        pass
    raise DataError(f"{where}: {column} must be {what} as a JSON object, got {text!r}")


def check_row(row: dict[str, Any], where: str) -> dict[str, Any]:
    """The row's gym columns, or :class:`DataError` saying what is wrong ``where``."""
    name, question, answer = row.get("gym_dataset"), row.get("question"), row.get("answer")
    if not isinstance(name, str) or not name:
        raise DataError(f"{where}: gym_dataset must name a reasoning-gym dataset, got {name!r}")
    try:
        check_name(name)
    except SettingError as error:
        raise DataError(f"{where}: {error}") from None
    if not isinstance(question, str) or not question:
        raise DataError(f"{where}: question must be non-empty text, got {question!r}")
    if name in NO_GOLD:
        if answer is not None:
            raise DataError(f"{where}: answer must be null: {name} has no gold answer, got {answer!r}")
    elif not isinstance(answer, str) or not answer:
        got = repr(answer) if "answer" in row else "no answer column"
        raise DataError(f"{where}: answer must be {name}'s gold answer (non-empty text: no answer can match an empty "
                        f"one), got {got}")  # fmt: skip
    config = _json_object(row, "gym_config", where, "the dataset's settings")
    try:
        check_config(name, config)
    except ValueError as error:
        raise DataError(f"{where}: gym_config {config}: {error}") from None
    return {
        "gym_dataset": name,
        "gym_config": config,
        "question": question,
        "answer": answer,
        "metadata": _json_object(row, "metadata", where, "the entry's metadata"),
    }


def entry_of(question: str, answer: str | None, metadata: str) -> dict[str, Any]:
    """The reasoning-gym entry a row carries, as ``score_answer`` takes it.

    >>> entry_of("q", "a", '{"grid": {"__tuple__": [1]}}')
    {'question': 'q', 'answer': 'a', 'metadata': {'grid': (1,)}}
    """
    return {"question": question, "answer": answer, "metadata": decode(metadata)}


def _messages(row: dict[str, Any]) -> list[dict[str, str]]:
    return [{"role": "user", "content": prompt_for(row["question"])}]


GYM = Task(
    name="Gym",
    columns=COLUMNS,
    check_row=check_row,
    messages=_messages,
    claims_partial=False,  # question/metadata columns are common: a file needs every gym column to be gym's
)
