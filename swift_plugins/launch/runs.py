"""A run's folder over several launches: kept logs, the command record, RESUME=auto.

The record is ``commands.json`` (what RESUME=auto reads back) beside a readable, pasteable ``commands.sh``.

>>> import tempfile
>>> folder = Path(tempfile.mkdtemp())
>>> (folder / "train.log").write_text("first run")
9
>>> keep_previous(folder / "train.log")
'kept the previous train.log as train.log.1'
>>> newest_checkpoint(folder) is None
True
"""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Sequence
from pathlib import Path

from ..core.console import Console
from ..core.errors import SettingError
from ..core.files import write_text
from ..watch.live import stopped_since
from .commands import Command
from .flags import Flags
from .settings import Settings

__all__ = [
    "RESUME_ENV",
    "RESUME_FLAGS",
    "is_complete",
    "keep_previous",
    "newest_checkpoint",
    "read_trainer",
    "resume_flags",
    "write_record",
]

# What must not change when a run resumes: the model and its tuner, the data and its order, and the shape of
# a step (a ZeRO-3 checkpoint is sharded per process; the data position counts batches).
RESUME_FLAGS = (
    "model", "tuner_type", "lora_rank", "lora_alpha", "target_modules", "dataset", "seed", "deepspeed",
    "per_device_train_batch_size", "gradient_accumulation_steps", "num_generations", "num_train_epochs", "max_steps",
)  # fmt: skip
RESUME_ENV = ("NPROC_PER_NODE", "NNODES")
WEIGHTS = ("model.safetensors", "model.safetensors.index.json", "adapter_model.safetensors", "pytorch_model.bin",
           "pytorch_model.bin.index.json")  # fmt: skip


def keep_previous(path: Path) -> str | None:
    """Rename ``path`` to ``path.N`` (the first free N, so .1 is the oldest); say so, or None if absent."""
    if not path.exists():
        return None
    number = 1
    while path.with_name(f"{path.name}.{number}").exists():
        number += 1
    path.rename(path.with_name(f"{path.name}.{number}"))
    return f"kept the previous {path.name} as {path.name}.{number}"


def write_record(folder: Path, name: str, script: str, commands: Sequence[Command], console: Console) -> None:
    """``folder/name.json`` (read back by RESUME=auto) and ``folder/name.sh``; earlier ones are kept."""
    folder.mkdir(parents=True, exist_ok=True)
    started = f"Started by {script} on {socket.gethostname()} ({time.strftime('%Y-%m-%d %H:%M:%S %z')})"
    for suffix in (".sh", ".json"):
        note = keep_previous(folder / f"{name}{suffix}")
        if note:
            console.note(note)
    text = f"#!/usr/bin/env bash\n# {started}; RESUME=auto reads {name}.json\n"
    write_text(text + "".join(f"\n# {c.title}\n{c.shell()}\n" for c in commands), folder / f"{name}.sh")
    record = {"started": started, "commands": [command.to_json() for command in commands]}
    write_text(json.dumps(record, indent=1) + "\n", folder / f"{name}.json")


def read_trainer(record: Path) -> Command | None:
    """The ``swift rlhf`` command of a record, or None if the record has none."""
    commands = [Command.from_json(item) for item in json.loads(record.read_text(encoding="utf-8"))["commands"]]
    return next((command for command in commands if command.argv[:2] == ("swift", "rlhf")), None)


def is_complete(checkpoint: Path) -> bool:
    """Whether ``checkpoint`` holds weights and the trainer state (written last)."""
    # transformers' Trainer._save_checkpoint writes trainer_state.json after the weights (and optimizer states).
    return (checkpoint / "trainer_state.json").is_file() and any((checkpoint / w).is_file() for w in WEIGHTS)


def newest_checkpoint(folder: Path) -> Path | None:
    """The complete ``checkpoint-N`` with the highest N (the most recent on a tie) in ``folder``'s ms-swift version
    folders (``v*-*/``) or, where swift ran with ``--add_version false``, in ``folder`` itself; None if none.

    A run folder that the watch stopped (:func:`~swift_plugins.watch.live.stopped_since`) offers only the
    checkpoints saved before its failure began.
    """
    found = []
    for path in [*folder.glob("v*-*/checkpoint-*"), *folder.glob("checkpoint-*")]:
        step = path.name.rsplit("-", 1)[1]
        if not (step.isdigit() and path.is_dir() and is_complete(path)):
            continue
        since = stopped_since(path.parent)
        if since is None or int(step) < since:
            found.append((int(step), path.stat().st_mtime, path))
    return max(found, key=lambda item: item[:2])[2] if found else None


def resume_flags(settings: Settings, trainer: Command, console: Console) -> list[str]:
    """The flags that continue the run in OUTPUT_DIR from its newest complete checkpoint, checked against the
    recorded ``trainer`` command of the run.

    A weights-only checkpoint (--save_only_model true) resumes with --resume_only_model true: ms-swift then
    loads the weights and the trainer state (step, data position) but not the optimizer or the scheduler
    (swift/trainers/mixin.py, _load_optimizer_and_scheduler).
    """
    checkpoint, record = newest_checkpoint(settings.output_dir), settings.output_dir / f"{settings.record}.json"
    if checkpoint is None:
        raise SettingError(
            f"RESUME=auto: no complete checkpoint in {settings.output_dir}/v*/checkpoint-* "
            "(set OUTPUT_DIR to the folder of the run to continue)"
        )
    if record.is_file():
        _check_unchanged(record, trainer)
    else:
        console.warn(f"RESUME=auto: no {record} to compare this run's flags with")
    if any(checkpoint.glob("global_step*")) or (checkpoint / "optimizer.pt").is_file():
        console.note(f"RESUME=auto: continuing from {checkpoint} (weights and optimizer states)")
        return ["--resume_from_checkpoint", str(checkpoint)]
    console.note(
        f"RESUME=auto: continuing from {checkpoint} (weights only: the step count and the data position continue; "
        "the optimizer moments and the learning-rate schedule start afresh)"
    )
    return ["--resume_from_checkpoint", str(checkpoint), "--resume_only_model", "true"]


def _check_unchanged(record: Path, trainer: Command) -> None:
    old = read_trainer(record)
    if old is None:
        raise SettingError(f"RESUME=auto: no trainer command in {record}")
    old_flags, new_flags = Flags(old.argv[2:]), Flags(trainer.argv[2:])
    old_env, new_env = dict(old.env), dict(trainer.env)
    changes = [
        f"--{name} '{old_flags.value(name) or ''}' -> '{new_flags.value(name) or ''}'"
        for name in RESUME_FLAGS
        if old_flags.value(name) != new_flags.value(name)
    ]
    changes += [
        f"{name} '{old_env.get(name, '')}' -> '{new_env.get(name, '')}'"
        for name in RESUME_ENV
        if old_env.get(name) != new_env.get(name)
    ]
    if changes:
        raise SettingError(
            f"RESUME=auto: this run differs from {record} in what a resumed run must keep: {'; '.join(changes)}; "
            "use the same settings, or a new OUTPUT_DIR"
        )
