"""The demo's run: the hardware it finds, DRY_RUN's printout, and the stages run one after another.

Each stage's commands run with their output in a log of their own; the GRPO stage is followed as the launcher
follows a trainer (:func:`swift_plugins.launch.follow.follow_trainer`), judged by the watch as it goes.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path

from ..core.console import Console
from ..core.errors import LaunchError, SettingError
from ..core.files import keep_previous, write_text
from ..core.processes import Children, Interrupted, children_cpu_seconds
from ..integration.vllm_cpu import installed_vllm
from ..launch.follow import follow_trainer
from ..launch.script import usage
from ..preflight.host import check_swift_flags
from ..preflight.paths import check_output_dir
from ..selection.select import Selection
from ..watch.checkpoints import is_complete, newest_checkpoint
from ..watch.live import FATAL_STATUS, WATCH_LOG, WatchStopped, task_advice, watcher
from ..watch.log import describe_zero_spread, find_log, read_steps
from .plan import DemoPlan, Stage, stages
from .settings import read_demo_settings, settings_help

__all__ = ["STAGES_FILE", "demo", "demo_help", "detect_hardware"]

STAGES_FILE = "stages.json"  # each finished stage's title, seconds and CPU-seconds, written as it ends


def detect_hardware() -> tuple[str | None, str | None, str, str]:
    """(CUDA device 0's name or None, the installed vLLM's version or None, a hint when a GPU is unused, torch's CPU
    capability); a torch that does not import is a :class:`SettingError` line."""
    try:
        import torch
    except ImportError as error:
        raise SettingError(f"torch does not import with {sys.executable} ({error}); the demo needs the package's "
                           "environment (make install)") from None  # fmt: skip

    cuda_device = torch.cuda.get_device_name(0) if torch.cuda.is_available() else None
    hint = ""
    if cuda_device is None and torch.version.cuda is None and shutil.which("nvidia-smi"):
        # make install puts the CPU build of torch in the venv: on a GPU box the demo would quietly run on the CPU
        hint = (f"; nvidia-smi is on PATH but torch {torch.__version__} is a CPU build: for GPU scale, "
                "make clean && make demo TORCH_SPEC=torch==2.8.0 EXTRAS=test,gpu (or your CUDA build)")  # fmt: skip
    return cuda_device, installed_vllm()[0], hint, torch.backends.cpu.get_cpu_capability()


def demo_help(script: str) -> str:
    """``--help``: the script's usage text, then every setting the demo reads (:mod:`.settings`)."""
    return f"{usage(script).rstrip()}\n\n{settings_help()}"


def demo(recipe: str, extra: Sequence[str], env: Mapping[str, str], repo: Path, children: Children) -> int:
    """The ``countdown_demo`` recipe: DRY_RUN prints the plan, else the stages run; ``extra``: swift rlhf flags for
    the GRPO stage, parsed by ms-swift's own arguments before anything runs (every swift flag of a run is)."""
    try:
        cuda_device, vllm_version, hint, cpu = detect_hardware()
    except SettingError as no_torch:
        if not read_demo_settings(env).dry_run:
            raise
        cuda_device, vllm_version, cpu = None, installed_vllm()[0], "AVX512"  # the measured CPU's plan
        hint = f"; {no_torch}: planned for a CPU host"
    plan = DemoPlan.for_hardware(env, repo, cuda_device=cuda_device, vllm_version=vllm_version, cpu_capability=cpu,
                                 extra=extra)  # fmt: skip
    plan = replace(plan, reason=plan.reason + hint)
    check_output_dir(plan.output_dir)  # DRY_RUN too: a folder the run could not make fails it at its first stage
    if plan.scale.name == "gpu" and cuda_device is None and not plan.dry_run:
        raise SettingError("DEMO_SCALE=gpu, but torch sees no CUDA device: unset DEMO_SCALE for the CPU run")
    if extra or not plan.dry_run:  # DRY_RUN prints the demo's own flags, which the tests parse with ms-swift's classes
        check_swift_flags([command for stage in stages(plan) for command in stage.commands], repo, children.console)
    if plan.dry_run:
        _print_plan(plan, children.console)
        return 0
    return _run_demo(plan, children)


def _print_plan(plan: DemoPlan, console: Console) -> None:
    """DRY_RUN: the plan line and every stage's commands, as the GPU recipes print theirs; nothing runs."""
    console.note(f"DRY_RUN: {plan.scale.name} scale: {plan.reason}; nothing started")
    planned = stages(plan)
    for number, stage in enumerate(planned, 1):
        print(f"# {number}/{len(planned)} {stage.title}")
        for command in stage.commands:
            print(f"# {command.title}, log: {command.log}\n{command.shell()}\n")


def _run_demo(plan: DemoPlan, children: Children) -> int:
    """Run the stages in order, each command's output to its log; a failed command names its log."""
    console, started = children.console, time.monotonic()
    console.note(f"{plan.scale.name} scale: {plan.reason}")
    console.note(f"SFT {plan.sft_steps} steps; GRPO {plan.grpo_steps} steps, a checkpoint every {plan.save_steps}"
                 + (f", with {shlex.join(plan.grpo_extra)}" if plan.grpo_extra else "")
                 + f"; {plan.eval_puzzles} held-out {plan.task.unit} -> {plan.output_dir}")  # fmt: skip
    for folder in ("eval", "data"):
        (plan.output_dir / folder).mkdir(parents=True, exist_ok=True)
    planned, costs = stages(plan), []
    for number, stage in enumerate(planned, 1):
        console.show(f"\n==> [{_elapsed(started)}] {number}/{len(planned)} {stage.title}")
        stage_started, cpu_before = time.monotonic(), children_cpu_seconds()
        try:
            _run_stage(stage, children, plan)
        except Interrupted:
            console.note(f"interrupted during stage {number}/{len(planned)}; a rerun starts the stages afresh")
            raise
        except WatchStopped as stop:
            children.stop()
            console.error(f"the watch stopped the GRPO stage: {stop.verdict.line()}")
            checkpoint = newest_checkpoint(stage.watched)
            console.note(f"newest complete GRPO checkpoint saved before step {stop.verdict.since}: {checkpoint}; "
                         f"change the setting ({stop.verdict.advice}) and run the demo again")  # fmt: skip
            return FATAL_STATUS
        seconds, cpu_seconds = time.monotonic() - stage_started, children_cpu_seconds() - cpu_before
        console.show(f"  {_stage_cost(seconds, cpu_seconds)}")
        costs.append({"stage": stage.title, "seconds": round(seconds, 1), "cpu_seconds": round(cpu_seconds, 1)})
        write_text(json.dumps(costs, indent=1) + "\n", plan.output_dir / STAGES_FILE)
    print((plan.output_dir / "comparison.md").read_text())
    console.show(f"{plan.scale.name}-scale learning demo done in {_elapsed(started)}: figure "
                 f"{plan.output_dir / 'curves.png'}, table {plan.output_dir / 'comparison.md'}")  # fmt: skip
    return 0


def _stage_cost(seconds: float, cpu_seconds: float) -> str:
    """A stage's wall time and the CPU time of the commands it ran and of the processes they waited for (the budget
    ``benchmarks/bench_grpo_cpu.py --minutes`` meters a setting by).

    >>> _stage_cost(601.4, 1045.2)
    'done in 10m01s, 1,045 CPU-seconds'
    """
    return f"done in {_clock(seconds)}, {cpu_seconds:,.0f} CPU-seconds"


def _notes(log: Path) -> list[str]:
    """The ``note: …`` lines the commands of a stage wrote to ``log``: shown on the console as the stage ends.

    >>> from tempfile import mkdtemp
    >>> log = Path(mkdtemp()) / "data.log"
    >>> _ = log.write_text("wrote 10 rows\\nnote: 6 of the 10 rows have the gold answer '1'\\n")
    >>> _notes(log)
    ["note: 6 of the 10 rows have the gold answer '1'"]
    """
    return [line for line in log.read_text(errors="replace").splitlines() if line.startswith("note: ")]


def _elapsed(started: float) -> str:
    """Minutes and seconds since ``started`` (a ``time.monotonic()`` reading), as ``12m05s``."""
    return _clock(time.monotonic() - started)


def _clock(seconds: float) -> str:
    minutes, rest = divmod(int(seconds), 60)
    return f"{minutes}m{rest:02d}s"


def _run_stage(stage: Stage, children: Children, plan: DemoPlan) -> None:
    note = keep_previous(stage.fresh) if stage.fresh is not None else None
    if note:
        children.console.note(note)
    for command in stage.commands:
        watch = None
        if stage.watched is not None:
            record = stage.watched.parent / WATCH_LOG
            advice = task_advice(plan.task.spec)
            watch = watcher(stage.watched, plan.watch, plan.thresholds, record, children.console, advice=advice)
        log = Path(command.log)
        process = children.start_process(command.argv, command.environment(os.environ), log)
        status = follow_trainer(process, log, None, None, 0, children.console, watch, echo=False)
        if status != 0:
            raise LaunchError(f"{command.title} failed (status {status}): see {command.log}")
    if stage.checkpoint is not None and not is_complete(stage.checkpoint):
        raise LaunchError(f"{stage.checkpoint} was not written: see {stage.commands[-1].log}")
    if stage.watched is None:  # a trainer's log is long, and the watch speaks for it
        for log in dict.fromkeys(Path(command.log) for command in stage.commands):
            for note in _notes(log):
                children.console.show(f"  {note}")
    for folder in stage.scores:
        report = json.loads((folder / "score.json").read_text())
        children.console.show(f"  {folder.name}: accuracy {report['accuracy']:.1%}, format {report['format_rate']:.1%}")
    if stage.selection is not None:
        children.console.show(f"  {Selection(**json.loads(stage.selection.read_text())).summary()}")
    if stage.watched is not None:
        spread = describe_zero_spread(read_steps(find_log(stage.watched)))
        if spread is not None:
            children.console.show(f"  {spread}")
