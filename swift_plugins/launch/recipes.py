"""One launch, start to end: the settings, the plan, its checks, then DRY_RUN's printout or the processes.

Every layout goes through the same steps; what differs is data (:mod:`.layouts`): a host may run a rollout
server (started first, then waited for), a trainer (followed to its end), or both. A smoke run (``SMOKE=1``, and
the CPU smoke recipe) builds the tiny model and its data first and, once the trainer is done, checks for a
checkpoint, plots the run and says what it proved.
"""

from __future__ import annotations

import os
import shlex
import socket
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path

from ..core.commands import Command
from ..core.console import Console
from ..core.errors import LaunchError, SettingError
from ..core.files import keep_previous
from ..core.flags import Flags
from ..core.processes import Children
from ..preflight.host import check_swift_flags
from ..watch.checkpoints import newest_checkpoint
from ..watch.live import FATAL_STATUS, WATCH_LOG, WatchStopped, task_advice, watcher
from ..watch.log import describe_fallbacks, describe_zero_spread, latest_log, read_steps, zero_spread_share
from .checks import advise, check_host, check_plan
from .commands import ROLLOUT_LOG, Plan, rollout_command, selection_command, trainer_command, trainer_flags
from .follow import follow_trainer, serve_until_stopped, show_tail, wait_for_health
from .runs import resume_flags, write_record
from .script import entry_words
from .settings import Settings

__all__ = ["HELD_OUT", "build_plan", "evaluation_command", "launch", "smoke_builds"]

TINY_MODEL = ("swift_plugins", "tiny-model")  # the tiny random Qwen2.5-shaped model of smoke runs
HELD_OUT = "<held-out.jsonl>"  # printed when the run had no local held-out file (see the README)


def build_plan(settings: Settings, extra: Sequence[str], console: Console) -> Plan:
    """The commands of this host, the trainer's flags parsed once (with RESUME=auto's flags added)."""
    if settings.layout.trainer is None and extra:
        raise SettingError("ROLE=rollout takes no arguments (extra swift rollout flags go in ROLLOUT_ARGS)")
    user = frozenset(Flags(extra, "the extra arguments").names())
    rollout = rollout_command(settings) if settings.layout.rollout_gpus else None
    flags = trainer_flags(settings, extra)
    # The host with the server selects (a training node finds the rows in the shared OUTPUT_DIR), else the trainer's.
    selects = settings.selection is not None and (rollout is not None or not settings.layout.node)
    selection = selection_command(settings, flags) if selects else None
    if settings.layout.trainer is None:
        return Plan(settings, rollout, None, Flags(), user, selection)
    if settings.resume:
        flags.update(resume_flags(settings, trainer_command(settings, flags), console))
    return Plan(settings, rollout, trainer_command(settings, flags), flags, user, selection)


def launch(recipe: str, extra: Sequence[str], env: Mapping[str, str], repo: Path, children: Children) -> int:
    """Run ``recipe`` with the user's ``extra`` swift rlhf flags, starting processes in ``children``; return
    the exit status."""
    started, console = time.monotonic(), children.console
    settings = Settings.from_env(recipe, env, repo)
    children.grace = settings.stop_grace
    if settings.vllm_port is not None:
        console.note(
            f"VLLM_PORT={settings.vllm_port!r} in the environment is vLLM's own setting: it is removed from the "
            "environment of what this launcher starts"
        )
    plan = build_plan(settings, extra, console)
    check_plan(plan, console)
    if plan.trainer is not None:
        advise(plan, console)
    commands = [command for command in (plan.selection, plan.rollout, plan.trainer) if command is not None]
    if settings.dry_run:
        check_swift_flags(commands, settings.repo, console)
        console.note("DRY_RUN: nothing started; GPU, port, vLLM and DeepSpeed checks skipped")
        if settings.smoke:
            builds = "\n".join(shlex.join(argv) for argv in smoke_builds(settings, "python"))
            print(f"# SMOKE: tiny model and data (python: the interpreter of swift)\n{builds}\n")
        for command in commands:
            print(f"# {command.title}, log: {command.log}\n{command.shell()}\n")
        return 0
    python = check_host(plan, console)
    check_swift_flags(commands, settings.repo, console)
    write_record(settings.output_dir, settings.record, settings.script, commands, console)
    if settings.smoke:
        _build_smoke(settings, python, console)
    if plan.selection is not None:
        _select(plan, python, children)
    try:
        status = _run(plan, children)
    except WatchStopped as stop:
        children.stop()
        _report_stop(plan, extra, stop, console)
        return FATAL_STATUS
    if status == 0:
        _report_success(plan, python, time.monotonic() - started, console)
    return status


def _start(command: Command, children: Children):
    """Start ``command`` with its log (an earlier log of the same name kept), saying so."""
    children.console.note(f"starting {command.title} (log: {command.log})")
    note = keep_previous(Path(command.log))
    if note:
        children.console.note(note)
    return children.start_process(command.argv, command.environment(os.environ), Path(command.log))


def _select(plan: Plan, python: str, children: Children) -> None:
    """Run the selection with swift's interpreter, unless a resumed run finds the rows it trained on."""
    settings, console = plan.settings, children.console
    if settings.resume and settings.selected.is_file():
        console.note(f"RESUME=auto: training on the rows selected before, {settings.selected}")
        return
    command = replace(plan.selection, argv=(python, *plan.selection.argv[1:]))
    status = _start(command, children).wait()
    if status != 0:
        show_tail(Path(command.log), "the selection", settings.log_tail_lines, console)
        raise LaunchError(f"the selection of the training rows failed (status {status}); see {command.log}")
    console.note(f"training on the selected rows: {settings.selected} ({settings.selected.name}.selection.json)")


def _run(plan: Plan, children: Children) -> int:
    """Start the server (and wait for its health), then the trainer; return the trainer's status."""
    settings, console, lines = plan.settings, children.console, plan.settings.log_tail_lines
    server = None
    if plan.rollout is not None:
        server = _start(plan.rollout, children)
        wait_for_health(settings.health_url, settings.rollout_timeout, server, Path(plan.rollout.log), lines, console)
    if plan.trainer is None:
        console.note(
            f"ready: on each training node run ROLE=train ROLLOUT_HOST={socket.gethostname()} "
            f"ROLLOUT_PORT={settings.port('ROLLOUT_PORT')} ROLLOUT_GROUP_PORT={settings.port('ROLLOUT_GROUP_PORT')} "
            f"... {shlex.join(entry_words(settings.recipe))}"
        )
        console.note("Ctrl-C stops the server")
        serve_until_stopped(server, Path(plan.rollout.log), lines, console)
    if settings.layout.node:  # the server of another host
        wait_for_health(settings.health_url, settings.rollout_timeout, None, Path(), lines, console)
        if settings.selection is not None and not settings.selected.is_file():
            raise LaunchError(f"SELECT_SAMPLES: no {settings.selected} from the rollout host, which selects before "
                              "its server starts: share OUTPUT_DIR between the hosts (docs/recipes.md)")  # fmt: skip
    mode = settings.watch if settings.node_rank == 0 else "off"  # rank 0 writes the log
    server_log = Path(plan.rollout.log) if plan.rollout else None
    # A training node reads the rollout host's log where they share OUTPUT_DIR (docs/recipes.md); elsewhere it never
    # appears. What it held before this run is not judged (watch/server.py).
    served_log = server_log or (settings.output_dir / ROLLOUT_LOG if settings.layout.node else None)
    watch = watcher(_swift_output(plan), mode, settings.thresholds, settings.output_dir / WATCH_LOG, console,
                    served_log, task_advice(settings.task))  # fmt: skip
    process = _start(plan.trainer, children)
    status = follow_trainer(process, Path(plan.trainer.log), server, server_log, lines, console, watch)
    if status:
        console.note(f"trainer exited with status {status}; see {plan.trainer.log}")
    return status


def _swift_output(plan: Plan) -> Path:
    """The trainer's ``--output_dir`` (OUTPUT_DIR unless an extra flag moved it): where its run folders go."""
    return Path(plan.flags.value("output_dir") or plan.settings.output_dir)


def _report_stop(plan: Plan, extra: Sequence[str], stop: WatchStopped, console: Console) -> None:
    """After the watch stopped the run: the rule, the checkpoint to go on from and the command that does."""
    settings, verdict = plan.settings, stop.verdict
    console.error(f"the watch stopped the run: {verdict.line()}")
    console.note(f"verdicts so far: {settings.output_dir / WATCH_LOG}")
    checkpoint = newest_checkpoint(_swift_output(plan))
    if checkpoint is None:
        console.note(f"no complete checkpoint was saved before step {verdict.since}: start again with the setting "
                     f"changed ({verdict.advice})")  # fmt: skip
        return
    console.note(f"newest complete checkpoint saved before the failure began (step {verdict.since}): {checkpoint}")
    console.note(f"what to change: {verdict.advice}; then, with this run's other settings, go on from it with:")
    words = ["RESUME=auto", f"OUTPUT_DIR={settings.output_dir}", *entry_words(settings.recipe)]
    print(f"\n{shlex.join(words + list(extra))}", flush=True)  # on a line of its own after the trainer's log


def smoke_builds(settings: Settings, python: str) -> list[list[str]]:
    """The commands that build a smoke run's tiny model (unless a rerun finds it built: it is seeded, and
    written under a temporary name first) and, when the task generates its smoke data and ``DATASET`` names no
    other, that data (in the smoke folder), with ``python``."""
    reuse = (Path(settings.model) / "config.json").is_file()
    commands = [] if reuse else [[python, "-m", *TINY_MODEL, settings.model]]
    generate = settings.task.preset.smoke_data
    if not isinstance(generate, str) and Path(settings.dataset).is_relative_to(settings.smoke_dir):
        commands.append([python, "-m", *generate, "--out", settings.dataset])
    return commands


def _build_smoke(settings: Settings, python: str, console: Console) -> None:
    """Run :func:`smoke_builds`, saying what it does."""
    if (Path(settings.model) / "config.json").is_file():
        console.note(f"SMOKE: reusing the tiny model in {settings.model}")
    builds = smoke_builds(settings, python)
    if builds:
        what = " and ".join("model" if argv[3] == TINY_MODEL[1] else "data" for argv in builds)
        console.note(f"SMOKE: building the {what} under {settings.smoke_dir}")
    for argv in builds:
        if subprocess.run(argv, stdout=subprocess.DEVNULL).returncode:
            raise LaunchError(
                f"SMOKE: {shlex.join(argv[1:4])} failed "
                f"(this package and its [gpu] extra must be installed for {python})"
            )


def evaluation_command(plan: Plan, checkpoint: Path) -> str:
    """``python -m swift_plugins evaluate`` of ``checkpoint`` on the run's local held-out file (else
    :data:`HELD_OUT`), with the run's system prompt."""
    val = plan.flags.value("val_dataset") or ""
    argv = ["python", "-m", "swift_plugins", "evaluate", str(checkpoint), "--task", plan.settings.task.name]
    argv += ["--data", val if Path(val).is_file() else HELD_OUT, "--out", str(plan.settings.output_dir / "eval-final")]
    if plan.flags.value("system"):
        argv += ["--system", plan.flags.value("system")]
    return shlex.join(argv)


def _report_success(plan: Plan, python: str, seconds: float, console: Console) -> None:
    """After the trainer succeeded: a smoke run's checkpoint (required), curves and proof; the evaluation command."""
    settings = plan.settings
    console.note(f"training finished; outputs in {settings.output_dir}")
    checkpoint = newest_checkpoint(settings.output_dir)
    log = latest_log(settings.output_dir)
    steps = read_steps(log) if log is not None and log.is_file() else []
    spread = describe_zero_spread(steps)
    if spread is not None:
        console.note(spread)
    if settings.dynamic_sample and Path(plan.trainer.log).is_file():
        trained = (zero_spread_share(steps) or (0.0, 0))[1]
        console.note(describe_fallbacks(Path(plan.trainer.log), trained, settings.dynamic_sample))
    if settings.smoke:
        if checkpoint is None:
            raise LaunchError(
                f"SMOKE: the trainer finished but left no complete checkpoint in {settings.output_dir}/v*/"
            )
        curves = checkpoint.parent / "curves.png"
        subprocess.run([python, "-m", "swift_plugins", "plot", str(checkpoint.parent), "--out", str(curves)])
        ports = dict(settings.ports)
        values = dict(python=python, gpus=",".join(settings.train_gpus), count=len(settings.train_gpus),
                      rollout_gpu=(settings.rollout_gpus or ("",))[0], host=settings.rollout_host,
                      health=settings.health_url if "ROLLOUT_PORT" in ports else "",
                      port=ports.get("ROLLOUT_PORT"), group=ports.get("ROLLOUT_GROUP_PORT"),
                      nnodes=settings.nnodes)  # fmt: skip
        console.note(f"SMOKE passed in {seconds:.0f}s. It showed that:")
        for line in [
            *(line.format(**values) for line in settings.layout.proof),
            f"the trainer ran {plan.flags.value('max_steps')} GRPO steps with this package's plugin and rewards, "
            "evaluated on the held-out split "
            f"and saved {checkpoint}; its curves: {curves}",
            "it did not show that the real model fits in memory at full length: watch the first steps of the real run",
        ]:
            console.note(f"  - {line}")
    if checkpoint is not None:
        command = evaluation_command(plan, checkpoint)
        hint = f" ({HELD_OUT}: {settings.task.held_out_hint})" if HELD_OUT in command else ""
        console.note(f"evaluate the final checkpoint with{hint}:")
        print(command, flush=True)
