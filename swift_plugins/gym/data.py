"""reasoning-gym rows: the prompt in the package's tag layout, row validation, the task's contract.

A row is one reasoning-gym entry: ``gym_dataset`` (its dataset's name), ``gym_config`` (the settings it was
generated with, as JSON: the scorer is built with them), ``question``, ``answer`` (reasoning-gym's gold answer,
null where a dataset has none and its scorer checks the answer itself) and ``metadata`` (the entry's metadata as
JSON, :mod:`.entries`). Rows of several datasets may share a file: each row is scored by its own dataset.

>>> row = {"gym_dataset": "basic_arithmetic", "gym_config": "{}", "question": "Calculate 2 + 3.",
...        "answer": "5", "metadata": "{}"}
>>> GYM.prepare(row, "rows.jsonl:1")["messages"][0]["content"].splitlines()[0]
'Calculate 2 + 3.'
>>> check_row({**row, "metadata": "{"}, "rows.jsonl:2")
Traceback (most recent call last):
...
swift_plugins.core.errors.DataError: rows.jsonl:2: metadata must be the entry's metadata as a JSON object, got '{'
"""

from __future__ import annotations

from typing import Any

from ..core.errors import DataError
from ..core.task import Task
from .entries import decode

__all__ = ["COLUMNS", "GYM", "check_row", "entry_of", "prompt_for"]

COLUMNS = ("gym_dataset", "gym_config", "question", "metadata")  # and "answer", which may be null
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
    if not isinstance(question, str) or not question:
        raise DataError(f"{where}: question must be non-empty text, got {question!r}")
    if answer is not None and not isinstance(answer, str):
        raise DataError(f"{where}: answer must be text or null, got {answer!r}")
    return {
        "gym_dataset": name,
        "gym_config": _json_object(row, "gym_config", where, "the dataset's settings"),
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
