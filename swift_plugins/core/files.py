"""Rows on disk: reading and writing jsonl/json/parquet files, atomically, naming the user's paths.

Every file the package writes goes through :func:`atomic_path`: it is written under a temporary
sibling name and renamed over the destination only when complete, so an interrupted or failed write
never leaves a partial file and never destroys the previous good one. A command checks each of its
outputs with :func:`check_output` before any work, so a bad path fails at once, not after the work;
a path that still cannot be written raises :class:`OutputError` naming it, never the temporary.

>>> import tempfile
>>> folder = Path(tempfile.mkdtemp())
>>> write_rows([{"a": 1}], folder / "rows.parquet")
1
>>> next(read_rows(folder / "rows.parquet"))[1]
{'a': 1}
>>> check_output("out/rows.csv")
Traceback (most recent call last):
...
swift_plugins.core.errors.OutputError: out/rows.csv: cannot write it (expected a .jsonl, .json or .parquet file)
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from .errors import DataError, OutputError

__all__ = [
    "FORMATS",
    "atomic_folder",
    "atomic_path",
    "check_output",
    "column_names",
    "held_out_path",
    "keep_previous",
    "read_rows",
    "split_paths",
    "write_jsonl",
    "write_rows",
    "write_text",
]

FORMATS = (".jsonl", ".json", ".parquet")


def check_output(path: str | Path, formats: tuple[str, ...] = FORMATS) -> Path:
    """``path`` if a command can write it, else :class:`OutputError` naming it; creates and writes nothing.

    Writable means: an extension among ``formats``, not a folder, and its parent a folder that
    exists and is writable, or that can be created (the nearest existing ancestor is a writable folder).
    """
    path = Path(path)
    if path.suffix not in formats:
        expected = " or ".join(filter(None, (", ".join(formats[:-1]), formats[-1])))
        raise OutputError(path, f"expected a {expected} file")
    _check_place(path)
    return path


def _check_place(path: Path) -> None:
    """:class:`OutputError` unless a file can be put at ``path`` (whatever its extension)."""
    if path.is_dir():
        raise OutputError(path, IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR)))
    folder = path.parent
    while not folder.exists():
        folder = folder.parent
    if not folder.is_dir():
        raise OutputError(path, f"{folder} is a file, not a folder")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise OutputError(path, PermissionError(errno.EACCES, os.strerror(errno.EACCES)))


@contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """Yield a temporary sibling of ``path`` (same suffix) to write; rename it over ``path`` on success.

    Parent folders are created. If the block raises (or is interrupted), the temporary file is
    removed and ``path`` is left as it was. An OSError met creating, writing or renaming the
    temporary becomes an :class:`OutputError` naming ``path``.
    """
    path = Path(path)
    _check_place(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, name = tempfile.mkstemp(prefix=f".{path.stem}.", suffix=path.suffix, dir=path.parent)
    except OSError as error:
        raise OutputError(path, error) from None
    os.close(handle)
    temporary = Path(name)
    try:
        yield temporary
        mask = os.umask(0)
        os.umask(mask)
        temporary.chmod(0o666 & ~mask)  # mkstemp makes it 0600; give it a normal file's mode
        os.replace(temporary, path)
    except OSError as error:
        if error.filename not in (None, name):  # the block failed on another file (an input): not ours
            raise
        raise OutputError(path, error) from None
    finally:
        temporary.unlink(missing_ok=True)


@contextmanager
def atomic_folder(path: str | Path) -> Iterator[Path]:
    """Yield a new temporary sibling folder of ``path`` to fill; on success it becomes ``path``.

    An existing ``path`` is replaced whole, and only once the new folder is complete (callers decide first what
    they may replace). If the block raises (or is interrupted), the temporary folder is removed and ``path`` is
    left as it was. The folder and its files get the usual permissions (a temporary folder is made 0700).

    >>> folder = Path(tempfile.mkdtemp()) / "model"
    >>> with atomic_folder(folder) as staging:
    ...     _ = (staging / "config.json").write_text("{}")
    >>> sorted(path.name for path in folder.iterdir())
    ['config.json']
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{path.name}.partial.", dir=path.parent))
    try:
        yield staging
        mask = os.umask(0)
        os.umask(mask)
        staging.chmod(0o777 & ~mask)
        for file in staging.rglob("*"):
            file.chmod((0o777 if file.is_dir() else 0o666) & ~mask)
        if path.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{path.name}.old.", dir=path.parent))
            os.replace(path, old / path.name)
            os.replace(staging, path)
            shutil.rmtree(old)
        else:
            os.replace(staging, path)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def held_out_path(path: str | Path, split: str = "test") -> Path:
    """Where a data file's held-out split goes (``generate --test-size``, ``--dev-size``): its name before the suffix.

    >>> held_out_path("data/train.jsonl"), held_out_path("data/train.jsonl", "dev")
    (PosixPath('data/train.test.jsonl'), PosixPath('data/train.dev.jsonl'))
    """
    path = Path(path)
    return path.with_name(f"{path.stem}.{split}{path.suffix}")


def split_paths(out: str | Path, size: int, test_size: int, dev_size: int = 0) -> dict[str, Path]:
    """Where ``generate --size SIZE --test-size TEST_SIZE --dev-size DEV_SIZE --out OUT`` writes each split it has.

    The training rows go to ``out`` and the held-out rows beside it (:func:`held_out_path`), the test file the
    launcher takes as a dataset's held-out split. With ``size`` and ``dev_size`` 0 the test rows are the only rows,
    so they go to ``out`` itself.

    >>> split_paths("data/train.jsonl", 50000, 1000, 500)  # doctest: +NORMALIZE_WHITESPACE
    {'train': PosixPath('data/train.jsonl'), 'dev': PosixPath('data/train.dev.jsonl'),
     'test': PosixPath('data/train.test.jsonl')}
    >>> split_paths("data/eval.jsonl", 0, 1000)
    {'test': PosixPath('data/eval.jsonl')}
    """
    out = Path(out)
    if not size and not dev_size:
        return {"test": out} if test_size else {}
    sizes = {"train": size, "dev": dev_size, "test": test_size}
    return {name: out if name == "train" else held_out_path(out, name) for name, count in sizes.items() if count}


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


def write_rows(rows: Iterable[dict[str, Any]], path: str | Path) -> int:
    """Write rows in the format ``path``'s extension names, atomically; return the count written.

    ``.jsonl``: one JSON object a line; ``.json``: one list of objects; ``.parquet``: a table with a
    column per key. Any other extension raises :class:`OutputError` before anything is written.
    """
    path = check_output(path)
    if path.suffix == ".jsonl":
        return write_jsonl(rows, path)
    rows = list(rows)
    with atomic_path(path) as temporary:
        if path.suffix == ".json":
            temporary.write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")
        else:
            import pyarrow as pa
            import pyarrow.parquet as pq

            pq.write_table(pa.Table.from_pylist(rows), temporary)
    return len(rows)


def _check_path(path: Path) -> None:
    if not path.is_file():
        raise DataError(f"{path}: no such file")
    if path.suffix not in FORMATS:
        raise DataError(f"{path}: expected a {', '.join(FORMATS)} file")


def _text(data: bytes, where: str) -> str:
    """``data`` decoded as UTF-8, or :class:`DataError` saying ``where`` it is not.

    >>> _text(b"caf\\xe9", "rows.jsonl:3")
    Traceback (most recent call last):
    ...
    swift_plugins.core.errors.DataError: rows.jsonl:3: not UTF-8 text (byte 0xe9 at offset 3): save it as UTF-8
    """
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        byte = data[error.start : error.start + 1].hex()
        raise DataError(f"{where}: not UTF-8 text (byte 0x{byte} at offset {error.start}): save it as UTF-8") from None


def read_rows(path: str | Path) -> Iterator[tuple[str, dict[str, Any]]]:
    """Yield ``(location, row)`` for each row of a jsonl/json/parquet file.

    ``location`` is ``path:line`` for JSON lines and ``path: row N`` (from 0) otherwise; a line that
    is not a JSON object, or a file that is not UTF-8 text, raises :class:`DataError` naming it.
    """
    path = Path(path)
    _check_path(path)
    if path.suffix in (".parquet", ".json"):
        if path.suffix == ".parquet":
            import pyarrow.parquet as pq

            rows = pq.read_table(path).to_pylist()
        else:
            rows = json.loads(_text(path.read_bytes(), str(path)))
            if not isinstance(rows, list) or not all(isinstance(row, dict) for row in rows):
                raise DataError(f"{path}: a .json file must hold a list of row objects")
        yield from ((f"{path}: row {index}", row) for index, row in enumerate(rows))
        return
    with path.open("rb") as file:
        for number, raw in enumerate(file, start=1):
            line = _text(raw, f"{path}:{number}")
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


def keep_previous(path: Path) -> str | None:
    """Rename ``path`` to ``path.N`` (the first free N, so .1 is the oldest); say so, or None if absent."""
    if not path.exists():
        return None
    number = 1
    while path.with_name(f"{path.name}.{number}").exists():
        number += 1
    path.rename(path.with_name(f"{path.name}.{number}"))
    return f"kept the previous {path.name} as {path.name}.{number}"
