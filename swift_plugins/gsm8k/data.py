"""GSM8K rows: the prompt, the reference's final number, row validation, the task's contract.

A raw row is GSM8K's ``{"question": str, "answer": str}``, the answer a worked solution that ends
with ``#### N``. A prepared row keeps both and adds ``final_answer``, the reference number as a plain
string, which GRPO hands to the rewards; its ``messages`` are the system format instruction, the
question, and the reference solution as the assistant turn (swift drops that turn before sampling
and ``swift infer`` records it as the result's ``labels``, where ``score`` finds the reference).

>>> row = GSM8K.prepare({"question": "Tom has 3 pens and buys 4. How many?", "answer": "3+4=<<3+4=7>>7\\n#### 7"},
...                     "train.jsonl:1")
>>> row["final_answer"], [m["role"] for m in row["messages"]]
('7', ['system', 'user', 'assistant'])
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path
from typing import Any

from ..core.errors import DataError
from ..core.files import FORMATS
from ..core.task import Task
from .answer import reference_number

__all__ = ["GSM8K", "HUB_IDS", "SUBSET", "SYSTEM_PROMPT", "check_row", "folder_subset", "messages", "plain_number"]

HUB_IDS = ("modelscope/gsm8k", "openai/gsm8k")  # (ModelScope, Hugging Face)
SUBSET = "main"  # the hub config of the plain solutions ("socratic" adds sub-questions)

# The from-scratch GRPO document's format: reasoning, then the final answer, each in its own tags.
SYSTEM_PROMPT = (
    "Solve the math problem. Think it through step by step inside <reasoning> </reasoning> tags, "
    "then give only the final number inside <answer> </answer> tags, in this format:\n"
    "<reasoning>\n...\n</reasoning>\n<answer>\n...\n</answer>"
)


def plain_number(value: Fraction) -> str:
    """A number as its plainest exact string: an integer, a finite decimal, else ``p/q``.

    >>> plain_number(Fraction(1000)), plain_number(Fraction(-5, 2)), plain_number(Fraction(1, 3))
    ('1000', '-2.5', '1/3')
    """
    if value.denominator == 1:
        return str(value.numerator)
    denominator, places = value.denominator, 0
    for factor in (2, 5):
        while denominator % factor == 0:
            denominator //= factor
            places += 1
    if denominator != 1:
        return f"{value.numerator}/{value.denominator}"
    scaled = abs(value) * 10**places
    digits = str(scaled.numerator).rjust(places + 1, "0")
    sign = "-" if value < 0 else ""
    return f"{sign}{digits[:-places]}.{digits[-places:]}".rstrip("0").rstrip(".")


def check_row(row: dict[str, Any], where: str) -> dict[str, Any]:
    """The row's ``question``, ``answer`` and ``final_answer``, or :class:`DataError` naming ``where``.

    >>> check_row({"question": "q", "answer": "no marker"}, "train.jsonl:3")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    swift_plugins.core.errors.DataError: train.jsonl:3: ...
    """
    question, answer = row.get("question"), row.get("answer")
    if not isinstance(question, str) or not question.strip():
        raise DataError(f"{where}: question must be non-empty text, got {question!r}")
    if not isinstance(answer, str):
        raise DataError(f"{where}: answer must be text ending with '#### N', got {answer!r}")
    try:
        final = reference_number(answer)
    except DataError as error:
        raise DataError(f"{where}: {error}") from None
    return {"question": question, "answer": answer, "final_answer": plain_number(final)}


def messages(row: dict[str, Any]) -> list[dict[str, str]]:
    """The chat of one prepared row: the format instruction, the question, the reference solution."""
    return [
        {"role": "system", "content": SYSTEM_PROMPT},
        {"role": "user", "content": row["question"]},
        {"role": "assistant", "content": row["answer"]},
    ]


GSM8K = Task(
    name="GSM8K",
    columns=("question", "answer"),
    check_row=check_row,
    messages=messages,
    hub_ids=HUB_IDS,
    subset=SUBSET,
    tags=("qa", "math"),
    claims_partial=False,  # question/answer columns are common: a file needs both to be GSM8K's
)


def folder_subset(folder: str) -> str:
    """The config to load a local GSM8K folder with: ``main`` if its README declares it, else ``default``.

    A downloaded hub copy has a README whose configs map ``main`` to ``main/*.parquet``; without one,
    the ``default`` config reads every data file of the folder, so a folder holding several configs'
    subfolders (``main/``, ``socratic/``) and no README is refused rather than mixed.
    """
    from huggingface_hub import DatasetCard  # the plugin's only: the task's rows need the standard library alone

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
