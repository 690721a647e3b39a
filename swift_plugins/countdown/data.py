"""Countdown rows on disk: the prompt, reading and writing jsonl/parquet files, row validation.

A row is ``{"nums": [int, ...], "target": int}`` plus optional columns (``solution``).

>>> prompt_for([6, 2, 6], 24).splitlines()[0]
'Using the numbers [6, 2, 6], create an equation that equals 24.'
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

__all__ = [
    "HUB_IDS",
    "DataError",
    "check_columns",
    "check_row",
    "check_rows",
    "has_countdown_columns",
    "prompt_for",
    "read_columns",
    "read_rows",
    "write_jsonl",
]

HUB_IDS = ("zouxuhong/Countdown-Tasks-3to4", "Jiayi-Pan/Countdown-Tasks-3to4")  # (ModelScope, Hugging Face)
FORMATS = (".jsonl", ".json", ".parquet")


class DataError(ValueError):
    """A data file or row that cannot be used; the message names the file and the row."""


def prompt_for(nums: list[int], target: int) -> str:
    """The user prompt of the ms-swift Countdown recipe."""
    return (
        f"Using the numbers {nums}, create an equation that equals {target}.\n"
        "You can use basic arithmetic operations (+, -, *, /) and each number can only be used once.\n"
        "Show your work in <think> </think> tags. And return the final equation and answer in "
        "<answer> </answer> tags, for example <answer> (1 + 2) / 3 * 4 = 4 </answer>."
    )


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def check_row(nums: Any, target: Any, where: str) -> tuple[list[int], int]:
    """``(nums, target)`` as ints, or :class:`DataError` saying what is wrong ``where``.

    >>> check_row([1, 2], "3", "row 0")
    Traceback (most recent call last):
    ...
    swift_plugins.countdown.data.DataError: row 0: target must be an integer, got '3'
    """
    if not isinstance(nums, (list, tuple)) or not nums or not all(_is_int(n) for n in nums):
        raise DataError(f"{where}: nums must be a non-empty list of integers, got {nums!r}")
    if not _is_int(target):
        raise DataError(f"{where}: target must be an integer, got {target!r}")
    return list(nums), target


def check_columns(columns: Iterable[str], source: str) -> None:
    """:class:`DataError` unless ``columns`` include ``nums`` and ``target``."""
    missing = {"nums", "target"} - set(columns)
    if missing:
        raise DataError(
            f"{source}: Countdown data needs columns 'nums' and 'target'; missing {sorted(missing)} "
            f"(found {sorted(columns)})"
        )


def check_rows(nums: Iterable[Any], targets: Iterable[Any], source: str) -> None:
    """Check each row of a table's ``nums`` and ``target`` columns, naming the first bad one."""
    for index, (row_nums, target) in enumerate(zip(nums, targets, strict=True)):
        check_row(row_nums, target, f"{source}: row {index}")


def has_countdown_columns(path: str | Path) -> bool:
    """Whether a data file's schema or first row has a ``nums`` or a ``target`` column."""
    path = Path(path)
    if path.suffix == ".parquet":
        import pyarrow.parquet as pq

        names = pq.read_schema(path).names
    else:
        try:
            _, names = next(read_rows(path), ("", {}))
        except DataError:
            return False
    return bool({"nums", "target"} & set(names))


def _check_path(path: Path) -> None:
    if not path.is_file():
        raise DataError(f"{path}: no such file")
    if path.suffix not in FORMATS:
        raise DataError(f"{path}: expected a {', '.join(FORMATS)} file")


def read_rows(path: str | Path) -> Iterator[tuple[str, dict[str, Any]]]:
    """Yield ``(location, row)`` for each row of a jsonl/json/parquet file.

    ``location`` is ``path:line`` for JSON lines and ``path: row N`` (from 0) otherwise; a line that
    is not a JSON object raises :class:`DataError` naming it.
    """
    path = Path(path)
    _check_path(path)
    if path.suffix in (".parquet", ".json"):
        if path.suffix == ".parquet":
            import pyarrow.parquet as pq

            rows = pq.read_table(path).to_pylist()
        else:
            rows = json.loads(path.read_text(encoding="utf-8"))
            if not isinstance(rows, list) or not all(isinstance(row, dict) for row in rows):
                raise DataError(f"{path}: a .json file must hold a list of row objects")
        yield from ((f"{path}: row {index}", row) for index, row in enumerate(rows))
        return
    with path.open(encoding="utf-8") as file:
        for number, line in enumerate(file, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as error:
                raise DataError(f"{path}:{number}: not valid JSON ({error.msg})") from None
            if not isinstance(row, dict):
                raise DataError(f"{path}:{number}: a row must be a JSON object")
            yield f"{path}:{number}", row


def read_columns(path: str | Path) -> tuple[list[list[int]], list[int]]:
    """The checked ``nums`` and ``target`` columns of a Countdown file; a bad row is named."""
    nums, targets = [], []
    for where, row in read_rows(path):
        check_columns(row, where)
        row_nums, target = check_row(row["nums"], row["target"], where)
        nums.append(row_nums)
        targets.append(target)
    return nums, targets


def write_jsonl(rows: Iterable[dict[str, Any]], path: str | Path) -> int:
    """Write rows as JSON lines, creating parent folders; return the count written."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    count = 0
    with path.open("w", encoding="utf-8") as file:
        for row in rows:
            file.write(json.dumps(row) + "\n")
            count += 1
    return count
