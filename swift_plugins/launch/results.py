"""The smoke run's model and data, what a finished run reports, and how to evaluate its final checkpoint.

>>> from .flags import Flags
>>> command = evaluation_command("gsm8k", Flags(["--system", "Be brief."]), Path("/r/v0/checkpoint-9"), Path("/r"))
>>> command.split(" --out")[0]
"python -m swift_plugins evaluate /r/v0/checkpoint-9 --task gsm8k --data '<held-out.jsonl>'"
"""

from __future__ import annotations

import shlex
import subprocess
from pathlib import Path

from .console import Console
from .flags import Flags
from .processes import LaunchError
from .runs import newest_checkpoint
from .settings import Settings

__all__ = ["HELD_OUT", "build_smoke", "evaluation_command", "report_success", "smoke_builds"]

TINY_MODEL = ("swift_plugins", "tiny-model")  # make smoke's tiny random Qwen2.5-shaped model
HELD_OUT = "<held-out.jsonl>"  # printed when the run had no local held-out file (see the README)
HELD_OUT_HINTS = {
    "countdown": "held-out puzzles, e.g. "
    "python -m swift_plugins.countdown generate --num 1000 --seed 1 --out held-out.jsonl",
    "gsm8k": "a local copy of GSM8K's test split (question/answer rows, see the README)",
}


def smoke_builds(settings: Settings, python: str) -> list[list[str]]:
    """The commands that build the smoke run's tiny model (unless a rerun finds it built: it is seeded, and
    written under a temporary name first) and, for Countdown, its data, with ``python``."""
    reuse = (Path(settings.model) / "config.json").is_file()
    commands = [] if reuse else [[python, "-m", *TINY_MODEL, settings.model]]
    if settings.smoke_dir is not None and settings.dataset.startswith(str(settings.smoke_dir)):
        commands.append(
            [python, "-m", "swift_plugins.countdown", "generate", "--num", "64", "--test-size", "16", "--seed", "0",
             "--out", settings.dataset, "--jobs", "1", "--quiet"]
        )  # fmt: skip
    return commands


def build_smoke(settings: Settings, python: str, console: Console) -> None:
    """Run :func:`smoke_builds`, saying what it does."""
    if (Path(settings.model) / "config.json").is_file():
        console.note(f"SMOKE: reusing the tiny model in {settings.model}")
    builds = smoke_builds(settings, python)
    if builds:
        console.note(f"SMOKE: building the {' and '.join(argv[3] for argv in builds)} under {settings.smoke_dir}")
    for argv in builds:
        if subprocess.run(argv, stdout=subprocess.DEVNULL).returncode:
            raise LaunchError(
                f"SMOKE: {shlex.join(argv[1:4])} failed "
                f"(this package and its [gpu] extra must be installed for {python})"
            )


def evaluation_command(task: str, flags: Flags, checkpoint: Path, output_dir: Path) -> str:
    """``python -m swift_plugins evaluate`` of ``checkpoint`` on the run's local held-out file (else
    :data:`HELD_OUT`), with the run's system prompt."""
    val = flags.value("val_dataset") or ""
    argv = ["python", "-m", "swift_plugins", "evaluate", str(checkpoint), "--task", task]
    argv += ["--data", val if Path(val).is_file() else HELD_OUT, "--out", str(output_dir / "eval-final")]
    if flags.value("system"):
        argv += ["--system", flags.value("system")]
    return shlex.join(argv)


def report_success(settings: Settings, flags: Flags, proof: list[str], seconds: float, console: Console) -> None:
    """After the trainer succeeded: the smoke run's proof (and its checkpoint, required), the evaluation command."""
    console.note(f"training finished; outputs in {settings.output_dir}")
    checkpoint = newest_checkpoint(settings.output_dir)
    if settings.smoke:
        if checkpoint is None:
            raise LaunchError(
                f"SMOKE: the trainer finished but left no complete checkpoint in {settings.output_dir}/v*/"
            )
        console.note(f"SMOKE passed in {seconds:.0f}s. It showed that:")
        for line in [
            *proof,
            "the trainer ran 4 GRPO steps with this package's plugin and rewards, evaluated on the held-out split "
            f"and saved {checkpoint}",
            "it did not show that the real model fits in memory at full length: watch the first steps of the real run",
        ]:
            console.note(f"  - {line}")
    if checkpoint is not None:
        command = evaluation_command(settings.task, flags, checkpoint, settings.output_dir)
        hint = f" ({HELD_OUT}: {HELD_OUT_HINTS[settings.task]})" if HELD_OUT in command else ""
        console.note(f"evaluate the final checkpoint with{hint}:")
        print(command, flush=True)
