"""Rows on disk: reading jsonl/json/parquet files with their location, and writing files atomically.

Every file the package writes goes through :func:`atomic_path`: it is written under a temporary
sibling name and renamed over the destination only when complete, so an interrupted or failed write
never leaves a partial file and never destroys the previous good one.

>>> import tempfile
>>> folder = Path(tempfile.mkdtemp())
>>> write_jsonl([{"a": 1}], folder / "rows.jsonl")
1
>>> list(read_rows(folder / "rows.jsonl"))[0][1]
{'a': 1}
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from .errors import DataError

__all__ = ["FORMATS", "atomic_path", "column_names", "read_rows", "write_jsonl", "write_text"]

FORMATS = (".jsonl", ".json", ".parquet")


@contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """Yield a temporary sibling of ``path`` (same suffix) to write; rename it over ``path`` on success.

    Parent folders are created. If the block raises (or is interrupted), the temporary file is
    removed and ``path`` is left as it was.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, name = tempfile.mkstemp(prefix=f".{path.stem}.", suffix=path.suffix, dir=path.parent)
    os.close(handle)
    temporary = Path(name)
    try:
        yield temporary
        mask = os.umask(0)
        os.umask(mask)
        temporary.chmod(0o666 & ~mask)  # mkstemp makes it 0600; give it a normal file's mode
        os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)


def write_text(text: str, path: str | Path) -> Path:
    """Write ``text`` to ``path`` atomically; return the path."""
    with atomic_path(path) as temporary:
        temporary.write_text(text, encoding="utf-8")
    return Path(path)


def write_jsonl(rows: Iterable[dict[str, Any]], path: str | Path) -> int:
    """Write rows as JSON lines atomically, creating parent folders; return the count written."""
    count = 0
    with atomic_path(path) as temporary, temporary.open("w", encoding="utf-8") as file:
        for row in rows:
            file.write(json.dumps(row) + "\n")
            count += 1
    return count


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


def column_names(path: str | Path) -> set[str]:
    """The columns of a data file: a parquet file's schema, else its first row's keys (empty if unreadable)."""
    path = Path(path)
    if path.suffix == ".parquet":
        import pyarrow.parquet as pq

        return set(pq.read_schema(path).names)
    try:
        _, row = next(read_rows(path), ("", {}))
    except DataError:
        return set()
    return set(row)
