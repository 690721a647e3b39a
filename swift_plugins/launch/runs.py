"""A run's folder over several launches: kept logs, the command record, RESUME=auto.

The record is ``commands.json`` (what RESUME=auto reads back) beside a readable, pasteable ``commands.sh``.

>>> Command("t", (), ("swift", "rlhf"), "/l").to_json()["argv"]
['swift', 'rlhf']
"""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Sequence
from pathlib import Path

from ..core.commands import Command
from ..core.console import Console
from ..core.errors import SettingError
from ..core.files import keep_previous, write_text
from ..core.flags import Flags
from ..watch.checkpoints import newest_checkpoint
from .settings import Settings

__all__ = ["RESUME_ENV", "RESUME_FLAGS", "read_trainer", "resume_flags", "write_record"]

# What must not change when a run resumes: the model and its tuner, the data and its order, and the shape of
# a step (a ZeRO-3 checkpoint is sharded per process; the data position counts batches).
RESUME_FLAGS = (
    "model", "tuner_type", "lora_rank", "lora_alpha", "target_modules", "dataset", "seed", "deepspeed",
    "per_device_train_batch_size", "gradient_accumulation_steps", "num_generations", "num_train_epochs", "max_steps",
)  # fmt: skip
RESUME_ENV = ("NPROC_PER_NODE", "NNODES")



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
