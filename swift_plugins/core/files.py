"""Rows on disk: reading and writing jsonl/json/parquet files, atomically, naming the user's paths.

Every file the package writes goes through :func:`atomic_path`: it is written under a temporary
sibling name and renamed over the destination only when complete, so an interrupted or failed write
never leaves a partial file and never destroys the previous good one. A command checks all of its
outputs with :func:`check_outputs` before any work: each can be written, none is one of the command's
inputs, no two are one path. A bad path fails at once, not after the work; a path that still cannot be
written raises :class:`OutputError` naming it, never the temporary. A file that cannot be read as rows
(not JSON, a damaged Parquet file, not UTF-8) is a :class:`DataError` naming it, and its line where it has one.

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
    "FOLDER",
    "FORMATS",
    "atomic_folder",
    "atomic_path",
    "check_output",
    "check_outputs",
    "column_names",
    "distinct_inputs",
    "held_out_path",
    "keep_previous",
    "read_rows",
    "split_paths",
    "write_jsonl",
    "write_rows",
    "write_text",
]

FORMATS = (".jsonl", ".json", ".parquet")
FOLDER: tuple[str, ...] = ()  # the formats of an output that is a folder (an evaluation's, a model's, a run's)
_TEMPORARY_STEM = 32  # characters of a name its temporary keeps: the temporary of any name the file system takes fits


def check_output(path: str | Path, formats: tuple[str, ...] = FORMATS) -> Path:
    """``path`` if a command can write it, else :class:`OutputError` naming it; creates and writes nothing.

    Writable means: an extension among ``formats`` (:data:`FOLDER`: a folder, new or existing), not a folder
    (a folder output: not a file), every name on the path one the file system takes, and its parent a folder
    that exists and is writable, or that can be created (the nearest existing ancestor is a writable folder).
    """
    path = Path(path)
    if formats != FOLDER and path.suffix not in formats:
        expected = " or ".join(filter(None, (", ".join(formats[:-1]), formats[-1])))
        raise OutputError(path, f"expected a {expected} file")
    _check_place(path, folder_output=formats == FOLDER)
    return path


def check_outputs(
    outputs: Iterable[tuple[str | Path | None, tuple[str, ...]]], inputs: Iterable[str | Path | None] = ()
) -> None:
    """The rule every command keeps for the files it writes, checked before any work: each output can be written
    (:func:`check_output` with its formats), none is an input of the command or a folder holding one, and no two
    are one path (paths resolved, symbolic links followed). So no command writes over what it reads, nor one of its
    outputs over another. ``outputs`` pairs each path with its formats; a path of None (an option not given) is
    skipped, as is an input of None.

    >>> check_outputs([("report.json", (".json",)), ("rows.jsonl", FORMATS)], inputs=["./rows.jsonl"])
    Traceback (most recent call last):
    ...
    swift_plugins.core.errors.OutputError: rows.jsonl: cannot write it (an input of this command: write it elsewhere)
    >>> check_outputs([("a.json", (".json",)), ("./a.json", FORMATS)])
    Traceback (most recent call last):
    ...
    swift_plugins.core.errors.OutputError: a.json: cannot write it (two outputs of this command go there: give \
each its own path)
    """
    read = [Path(path).resolve() for path in inputs if path is not None]
    written: list[Path] = []
    for path, formats in outputs:
        if path is None:
            continue
        path = check_output(path, formats)
        where = path.resolve()
        if any(where == source or where in source.parents for source in read):
            raise OutputError(path, "an input of this command: write it elsewhere")
        if any(where == place or where in place.parents or place in where.parents for place in written):
            raise OutputError(path, "two outputs of this command go there: give each its own path")
        written.append(where)


def distinct_inputs(paths: Iterable[str | Path]) -> None:
    """:class:`DataError` when one file is given twice (symbolic links followed): its rows would count twice.

    >>> distinct_inputs(["results.jsonl", "./results.jsonl"])
    Traceback (most recent call last):
    ...
    swift_plugins.core.errors.DataError: ./results.jsonl: the same file as results.jsonl: give each once
    """
    seen: dict[Path, str | Path] = {}
    for path in paths:
        first = seen.setdefault(Path(path).resolve(), path)
        if first is not path:
            raise DataError(f"{path}: the same file as {first}: give each once")


def _check_place(path: Path, folder_output: bool = False) -> None:
    """:class:`OutputError` unless a file (a folder, with ``folder_output``) can be put at ``path``, whatever its
    extension: its names are ones the file system takes, and the nearest folder on its way is a writable one."""
    folder = path if folder_output else path.parent
    while not _exists(folder):
        folder = folder.parent
    longest = max(path.parts, key=lambda part: len(os.fsencode(part)), default="")
    most = os.pathconf(folder, "PC_NAME_MAX")  # asked before the path itself, which the system would refuse
    if len(os.fsencode(longest)) > most:
        raise OutputError(path, f"a name of {len(os.fsencode(longest))} bytes, over the {most} the file system takes")
    if len(os.fsencode(path.absolute())) >= os.pathconf(folder, "PC_PATH_MAX"):
        raise OutputError(path, f"a path over the {os.pathconf(folder, 'PC_PATH_MAX')} bytes the system takes")
    if folder_output and path.exists() and not path.is_dir():
        raise OutputError(path, "a file, not a folder")
    if path.is_dir() and not folder_output:
        raise OutputError(path, IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR)))
    if not folder.is_dir():
        raise OutputError(path, f"{folder} is a file, not a folder")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise OutputError(path, PermissionError(errno.EACCES, os.strerror(errno.EACCES)))


def _exists(path: Path) -> bool:
    """Whether ``path`` exists; a path the system refuses to look up (a name too long) does not."""
    try:
        return path.exists()
    except OSError:
        return False


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
        handle, name = tempfile.mkstemp(prefix=f".{path.stem[:_TEMPORARY_STEM]}.", suffix=path.suffix, dir=path.parent)
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
    staging = Path(tempfile.mkdtemp(prefix=f".{path.name[:_TEMPORARY_STEM]}.partial.", dir=path.parent))
    try:
        yield staging
        mask = os.umask(0)
        os.umask(mask)
        staging.chmod(0o777 & ~mask)
        for file in staging.rglob("*"):
            file.chmod((0o777 if file.is_dir() else 0o666) & ~mask)
        if path.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{path.name[:_TEMPORARY_STEM]}.old.", dir=path.parent))
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
    if path.is_dir():
        raise DataError(f"{path}: a folder, not a file")
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


def _json(text: str, where: str) -> Any:
    """``text`` parsed as JSON, or :class:`DataError` saying ``where`` (and on which of its lines) it is not.

    >>> _json('[{"a": 1}, {"a": ', "rows.json")
    Traceback (most recent call last):
    ...
    swift_plugins.core.errors.DataError: rows.json:1: not valid JSON (Expecting value at column 18)
    """
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        line = f":{error.lineno}" if where.endswith(".json") else ""  # a line of a .jsonl file is named already
        raise DataError(f"{where}{line}: not valid JSON ({error.msg} at column {error.colno})") from None
    except RecursionError:
        raise DataError(f"{where}: not valid JSON here (nested too deeply)") from None


def _parquet(path: Path, schema: bool = False) -> Any:
    """A Parquet file's table (its schema only, with ``schema``), or :class:`DataError` naming a damaged one."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        return pq.read_schema(path) if schema else pq.read_table(path)
    except OSError as error:
        raise DataError(f"{path}: cannot read it ({error.strerror or error})") from None
    except pa.ArrowException as error:  # pyarrow names the file itself: its reason alone
        reason = str(error).rsplit("': ", 1)[-1].split(". ")[0]
        raise DataError(f"{path}: not a readable Parquet file ({reason}): write it again") from None


def read_rows(path: str | Path) -> Iterator[tuple[str, dict[str, Any]]]:
    """Yield ``(location, row)`` for each row of a jsonl/json/parquet file.

    ``location`` is ``path:line`` for JSON lines and ``path: row N`` (from 0) otherwise. A file that cannot be
    read, is not UTF-8 text, or is not valid JSON or Parquet, and a line that is not a JSON object, raise
    :class:`DataError` naming the file, and its line where it has one.
    """
    path = Path(path)
    _check_path(path)
    try:
        if path.suffix == ".parquet":
            rows = _parquet(path).to_pylist()
        elif path.suffix == ".json":
            text = _text(path.read_bytes(), str(path))
            if not text.strip():
                raise DataError(f"{path}: an empty file (a .json file holds a list of row objects)")
            rows = _json(text, str(path))
            if not isinstance(rows, list) or not all(isinstance(row, dict) for row in rows):
                raise DataError(f"{path}: a .json file must hold a list of row objects")
        else:
            file = path.open("rb")
    except OSError as error:
        raise DataError(f"{path}: cannot read it ({error.strerror or error})") from None
    if path.suffix != ".jsonl":
        yield from ((f"{path}: row {index}", row) for index, row in enumerate(rows))
        return
    with file:
        for number, raw in enumerate(file, start=1):
            line = _text(raw, f"{path}:{number}")
            if not line.strip():
                continue
            row = _json(line, f"{path}:{number}")
            if not isinstance(row, dict):
                raise DataError(f"{path}:{number}: a row must be a JSON object")
            yield f"{path}:{number}", row


def column_names(path: str | Path) -> set[str]:
    """The columns of a data file: a parquet file's schema, else its first row's keys (empty if unreadable)."""
    path = Path(path)
    try:
        if path.suffix == ".parquet":
            return set(_parquet(path, schema=True).names)
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
