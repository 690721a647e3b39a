"""The local files a run reads: the plugin, a local model, every row of a local data file, checked with the
task's own row rules before anything starts (the trainer would fail on them after loading the model), and a local
held-out file against the training file (:func:`~swift_plugins.core.held_out.check_held_out`: not of an older one,
no training prompt in it); and the folder it writes, which must be one it can make and write.

>>> from pathlib import Path
>>> check_plugin(Path("/nowhere"))
Traceback (most recent call last):
...
swift_plugins.core.errors.SettingError: plugin not found: /nowhere/swift_plugins/plugin.py (incomplete checkout?)
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path

from ..core.console import Console
from ..core.errors import DataError, OutputError, SettingError
from ..core.files import FOLDER, FORMATS, check_output, check_outputs, read_rows
from ..core.flags import Flags
from ..core.held_out import check_held_out, row_keys
from ..core.task import TaskSpec
from .trainer import Origin

__all__ = ["check_output_dir", "check_paths", "check_plugin"]

LOCAL_PREFIXES = ("/", "./", "../", "~")
DATA_SUFFIXES = (".jsonl", ".json", ".parquet", ".csv")


def check_plugin(repo: Path) -> None:
    """The checkout ``repo`` holds the plugin every swift command loads."""
    plugin = repo / "swift_plugins" / "plugin.py"
    if not plugin.is_file():
        raise SettingError(f"plugin not found: {plugin} (incomplete checkout?)")


def check_output_dir(path: Path) -> None:
    """``OUTPUT_DIR`` is a folder that exists or can be made, and written: not a file, no file on its way, names the
    file system takes (a run would fail on it at its first log, after the checks and the loads).

    >>> check_output_dir(Path("/dev/null/run"))
    Traceback (most recent call last):
    ...
    swift_plugins.core.errors.SettingError: OUTPUT_DIR=/dev/null/run: cannot write it (/dev/null is a file, not a \
folder); point it at a folder
    """
    try:
        check_output(path, FOLDER)
    except OutputError as error:
        raise SettingError(f"OUTPUT_DIR={path}: cannot write it ({error.reason}); point it at a folder") from None


def _is_local(value: str) -> bool:
    return value.startswith(LOCAL_PREFIXES) or value.endswith(DATA_SUFFIXES)


def check_paths(
    flags: Flags, origin: Origin, task: TaskSpec, console: Console, sources: Mapping[str, str] | None = None
) -> None:
    """A local ``--model`` exists; every local ``--dataset`` / ``--val_dataset`` exists, a file's rows are rows
    ``task`` accepts, and a ``--val_dataset`` file may be held out from each ``--dataset`` file. ``sources`` maps a
    file the launch writes before training (the selected rows) to the file it is made from, which is checked
    instead, and which that file may not be (:func:`~swift_plugins.core.files.check_outputs`)."""
    for written, source in (sources or {}).items():
        try:
            check_outputs([(written, FORMATS)], inputs=[Path(source).expanduser()])
        except OutputError as error:
            raise SettingError(f"the selected rows, {written}: cannot write them ({error.reason}); point DATASET or "
                               "OUTPUT_DIR elsewhere") from None  # fmt: skip
    model = flags.value("model") or ""
    if _is_local(model) and not Path(model).expanduser().exists():
        raise SettingError(
            f"{origin('model', model, 'MODEL')}: no such folder; point MODEL at a model folder or a hub id "
            f"such as {task.preset.model}"
        )
    files: dict[str, list[tuple[str, Path]]] = {"dataset": [], "val_dataset": []}
    for flag, setting in (("dataset", "DATASET"), ("val_dataset", "VAL_DATASET")):
        for value in flags.values(flag) or []:
            value = (sources or {}).get(value, value)
            local = re.sub(r"#\d+$", "", value)
            if not _is_local(local):
                continue
            path, name = Path(local).expanduser(), origin(flag, value, setting)
            if not path.exists():
                raise SettingError(
                    f"{name}: no such file; point {setting} at a local .jsonl/.json/.parquet file or a hub dataset id"
                )
            if path.is_dir() and not any(file.suffix in DATA_SUFFIXES for file in path.rglob("*") if file.is_file()):
                raise SettingError(f"{name}: a folder without a data file; point {setting} at a local "
                                   ".jsonl/.json/.parquet file or a folder of them")  # fmt: skip
            if path.is_file():
                _check_rows(task, path, name, console)
                files[flag].append((name, path))
    for name, held_out in files["val_dataset"]:
        for _, training in files["dataset"]:
            try:
                check_held_out(held_out, lambda rows: row_keys(rows, task.data.columns), training)
            except ImportError as error:  # pyarrow for a .parquet file
                console.note(f"{name}: not checked against {training} ({error}; the launcher's python lacks it)")
            except DataError as error:
                raise SettingError(f"{name}: {error}") from None


def _check_rows(task: TaskSpec, path: Path, name: str, console: Console) -> None:
    try:
        rows = iter(read_rows(path))
        start = next(rows, (str(path), {}))
        task.data.check_columns(start[1], str(path))
        for where, row in [start, *rows]:
            task.data.check_row(row, where)
    except ImportError as error:  # pyarrow for a .parquet file
        console.note(f"{name}: rows not checked ({error}; the launcher's python lacks it)")
    except DataError as error:
        raise SettingError(f"{name}: {error}; fix the file, or point the setting at {task.name} data") from None
