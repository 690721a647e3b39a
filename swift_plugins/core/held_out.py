"""Held-out files tied to the training file they were drawn beside: a stale or overlapping one is never read as one.

``generate`` writes its training rows to OUT, its held-out rows beside it (``OUT.dev``, ``OUT.test``:
:func:`~.files.split_paths`) and, last, the record of the split, ``<stem>.split.json`` beside them: each file's name,
row count and SHA-256 (:func:`record_split`). Before any work it refuses to leave a held-out file of an earlier OUT
beside the OUT it replaces (:func:`check_split`). Every reader of a held-out file (the recipes' ``--val_dataset``,
``evaluate --data``, ``select``'s held-out files) calls :func:`check_held_out`:

- a held-out file that the record holds as it is, beside the training file as it is, was drawn apart from it: taken;
- one whose training file has changed since the record was written belongs to an older training file: refused;
- any other (no record, or a held-out file changed since) is refused when one of its prompts is a training prompt.

>>> import tempfile
>>> from .files import write_rows
>>> folder = Path(tempfile.mkdtemp())
>>> paths = {"train": folder / "cd.jsonl", "test": folder / "cd.test.jsonl"}
>>> counts = {name: write_rows([{"q": f"{name} {n}"} for n in range(3)], path) for name, path in paths.items()}
>>> record_split(paths, counts).name
'cd.split.json'
>>> check_held_out(paths["test"], row_keys)  # drawn beside cd.jsonl as it is: taken
>>> _ = write_rows([{"q": "train 0"}], paths["train"])  # cd.jsonl made again without held-out rows
>>> check_held_out(paths["test"], row_keys)  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
swift_plugins.core.errors.DataError: .../cd.test.jsonl: held out from an earlier .../cd.jsonl, which has changed \
since (.../cd.split.json): generate both again, or remove .../cd.test.jsonl
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from pathlib import Path

from .errors import DataError, OutputError
from .files import FORMATS, check_outputs, held_out_path, read_rows, write_text

__all__ = ["HELD_OUT", "check_held_out", "check_split", "record_split", "row_keys", "split_record", "training_path"]

HELD_OUT = ("dev", "test")  # the held-out splits, each in a file beside the training file (held_out_path)
Keys = Callable[[Path], set[str]]  # a file's prompts, as text that is equal for the same prompt


def split_record(training: str | Path) -> Path:
    """Where the record of the split of a training file is: its name before the suffix, then ``.split.json``.

    >>> split_record("data/train.jsonl")
    PosixPath('data/train.split.json')
    """
    training = Path(training)
    return training.with_name(f"{training.stem}.split.json")


def training_path(held_out: str | Path) -> Path | None:
    """The training file a held-out file is named after (``x.test.jsonl``: ``x.jsonl``); None for another name.

    >>> training_path("data/train.dev.parquet"), training_path("data/eval.jsonl")
    (PosixPath('data/train.parquet'), None)
    """
    held_out = Path(held_out)
    stem, _, split = held_out.stem.rpartition(".")
    return held_out.with_name(f"{stem}{held_out.suffix}") if stem and split in HELD_OUT else None


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    try:
        with path.open("rb") as file:
            for block in iter(lambda: file.read(1 << 20), b""):
                digest.update(block)
    except OSError as error:
        raise DataError(f"{path}: cannot read it ({error.strerror or error})") from None
    return digest.hexdigest()


def check_split(out: str | Path, paths: Mapping[str, Path]) -> None:
    """What ``generate --out OUT`` checks before any work, writing ``paths`` (split name to file): every file it writes
    and the record are outputs it can write (:func:`~.files.check_outputs`), and no held-out file beside OUT is left
    out of them. Such a file was drawn beside the OUT this replaces, so the new rows may hold its rows, and the
    recipes would take it as the held-out split of the new OUT: :class:`OutputError`."""
    out, written = Path(out), set(paths.values())
    record = [(split_record(paths["train"]), (".json",))] if _recorded(paths) else []
    check_outputs([*((path, FORMATS) for path in paths.values()), *record])
    for split in HELD_OUT:
        stale = held_out_path(out, split)
        if stale.exists() and stale not in written:
            raise OutputError(out, f"{stale} holds {split} rows drawn beside the {out.name} this would replace, and "
                                   f"the new rows may hold them: give --{split}-size to draw new ones, or remove it")


def _recorded(paths: Mapping[str, Path]) -> bool:
    """Whether a split is recorded: held-out files beside a training file (alone, a file is tied to nothing)."""
    return "train" in paths and len(paths) > 1


def record_split(paths: Mapping[str, Path], rows: Mapping[str, int]) -> Path | None:
    """Write the record of a split that ``generate`` has written (``paths``: split name to file, ``rows``: split name
    to row count) beside its files: each file's name, rows and SHA-256. Return its path; None, writing nothing, when
    no held-out file is beside a training file."""
    if not _recorded(paths):
        return None
    record = {name: {"name": path.name, "rows": rows[name], "sha256": _sha256(path)} for name, path in paths.items()}
    return write_text(json.dumps(record, indent=1) + "\n", split_record(paths["train"]))


def row_keys(path: Path, columns: tuple[str, ...] = ()) -> set[str]:
    """A file's prompts as JSON text: each row's ``columns`` (every column when none are named).

    >>> import tempfile
    >>> from .files import write_rows
    >>> path = Path(tempfile.mkdtemp()) / "rows.jsonl"
    >>> _ = write_rows([{"nums": [1, 2], "target": 3, "solution": "1 + 2"}], path)
    >>> row_keys(path, ("nums", "target"))
    {'{"nums": [1, 2], "target": 3}'}
    """
    return {json.dumps({column: row.get(column) for column in columns} if columns else row, sort_keys=True)
            for _, row in read_rows(path)}  # fmt: skip


def _record(training: Path) -> dict:
    """The record of ``training``'s split (empty where there is none); :class:`DataError` for one that is damaged."""
    path = split_record(training)
    if not path.is_file():
        return {}
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
        if not all({"name", "sha256"} <= set(entry) for entry in record.values()):
            raise ValueError("an entry without its name or sha256")
    except (OSError, ValueError, AttributeError, TypeError) as error:
        raise DataError(f"{path}: not a record of a split that generate wrote ({error}): generate again, or remove "
                        "it") from None  # fmt: skip
    return record


def check_held_out(held_out: str | Path, keys: Keys, training: str | Path | None = None) -> None:
    """:class:`DataError` unless ``held_out`` may be read as rows held out from ``training`` (default: the training
    file it is named after, :func:`training_path`; nothing to check without one). ``keys`` gives a file's prompts."""
    held_out = Path(held_out)
    training = Path(training) if training is not None else training_path(held_out)
    if training is None or not training.is_file() or not held_out.is_file():
        return
    record = _record(training) if held_out.parent.resolve() == training.parent.resolve() else {}
    trained = record.get("train", {})
    held = next((entry for name, entry in record.items() if name != "train" and entry["name"] == held_out.name), None)
    if held is not None and trained.get("name") == training.name:
        if _sha256(training) != trained["sha256"]:
            raise DataError(f"{held_out}: held out from an earlier {training}, which has changed since "
                            f"({split_record(training)}): generate both again, or remove {held_out}")  # fmt: skip
        if _sha256(held_out) == held["sha256"]:
            return  # drawn apart from the training rows by generate, and neither changed since
    shared = keys(held_out) & keys(training)
    if shared:
        raise DataError(f"{held_out}: {len(shared)} of its prompts are prompts of {training} too (first "
                        f"{min(shared)}): hold out only prompts that are not trained on (generate --test-size "
                        "draws them apart)")  # fmt: skip
