"""One launch, start to end: settings, commands, checks, then DRY_RUN's printout or the processes.

The layouts share everything but their commands: ``server`` (rollout server + trainer on one node),
``colocate`` (one GPU), and the multi-node ``rollout`` host and ``train`` nodes, which run the one-node
server's own rollout command and health wait.
"""

from __future__ import annotations

import dataclasses
import os
import shlex
import socket
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from .advice import advise
from .commands import Command, colocate_commands, rollout_command, server_commands, train_node_command
from .console import Console
from .flags import Flags
from .host_checks import check_gpus, check_ports, check_swift
from .plan_checks import check_plan
from .processes import Children, follow_trainer, serve_until_stopped, wait_for_health
from .results import build_smoke, report_success, smoke_builds
from .runs import keep_previous, resume_flags, write_record
from .settings import SettingError, Settings

__all__ = ["launch"]

REUSED_PORT = (
    "the rollout server's HTTP port; after a previous run it may linger ~60s in TIME_WAIT, "
    "and ms-swift would then silently switch ports"
)


def _commands(settings: Settings, extra: Sequence[str]) -> tuple[Command | None, Command | None]:
    if settings.layout == "server":
        return server_commands(settings, extra)
    if settings.layout == "colocate":
        return None, colocate_commands(settings, extra)[0]
    if settings.layout == "rollout":
        if extra:
            raise SettingError("ROLE=rollout takes no arguments (extra swift rollout flags go in ROLLOUT_ARGS)")
        return rollout_command(settings), None
    return None, train_node_command(settings, extra)


def _record_name(settings: Settings) -> str:
    return {"rollout": "commands-rollout", "train": f"commands-train-node{settings.node_rank}"}.get(
        settings.layout, "commands"
    )


def _with_resume(settings: Settings, trainer: Command, console: Console) -> Command:
    flags = Flags(trainer.argv[2:])
    flags.update(resume_flags(settings, settings.output_dir / f"{_record_name(settings)}.json", trainer, console))
    return dataclasses.replace(trainer, argv=(*trainer.argv[:2], *flags.argv()))


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
    rollout, trainer = _commands(settings, extra)
    user = set(Flags(extra, "the extra arguments").names())
    if trainer is not None and settings.resume:
        trainer = _with_resume(settings, trainer, console)
    flags = Flags(trainer.argv[2:]) if trainer else Flags()
    check_plan(settings, trainer, rollout, user, console)
    if trainer is not None:
        advise(flags, settings.world_size, settings.task, user, settings.smoke, settings.layout != "colocate", console)
    commands = [command for command in (rollout, trainer) if command is not None]
    if settings.dry_run:
        _print_dry_run(settings, commands, console)
        return 0

    modules = ["vllm"] if rollout or (flags.value("use_vllm") or "").lower() in ("true", "1") else []
    modules += ["deepspeed"] if flags.value("deepspeed") else []
    extras = {name: f"REPORT_TO={name}" for name in ("wandb", "swanlab") if name in (flags.values("report_to") or [])}
    check_gpus(_gpu_settings(settings))
    python = check_swift([*modules, *extras], extras, repo, console)
    check_ports(_ports(settings))
    write_record(settings.output_dir, _record_name(settings), settings.script, commands, console)
    if settings.smoke:
        build_smoke(settings, python, console)
    status = _run(settings, rollout, trainer, python, children)
    if status == 0:
        report_success(settings, flags, _smoke_proof(settings, python), time.monotonic() - started, console)
    return status


def _run(settings: Settings, rollout: Command | None, trainer: Command | None, python: str, children: Children) -> int:
    """Start the server (and wait for its health), then the trainer; return the trainer's status."""
    console = children.console

    def start(command: Command, what: str):
        console.note(f"starting {what} (log: {command.log})")
        note = keep_previous(Path(command.log))
        if note:
            console.note(note)
        return children.start_process(command.argv, command.environment(os.environ), Path(command.log))

    lines = settings.log_tail_lines
    server = None
    if rollout is not None:
        server = start(
            rollout,
            f"rollout server on GPU{'s' if len(settings.rollout_gpus) > 1 else ''} {','.join(settings.rollout_gpus)}",
        )
        wait_for_health(_health_url(settings), settings.rollout_timeout, server, Path(rollout.log), lines, console)
    if trainer is None:
        console.note(
            f"ready: on each training node run ROLE=train ROLLOUT_HOST={socket.gethostname()} "
            f"ROLLOUT_PORT={settings.rollout_port} ROLLOUT_GROUP_PORT={settings.group_port} ... "
            f"{settings.repo / 'shell' / settings.script}"
        )
        console.note("Ctrl-C stops the server")
        serve_until_stopped(server, Path(rollout.log), lines, console)
    if settings.layout == "train":
        wait_for_health(_health_url(settings), settings.rollout_timeout, None, Path(), lines, console)
    process = start(trainer, _trainer_title(settings))
    status = follow_trainer(process, Path(trainer.log), server, Path(rollout.log if rollout else ""), lines, console)
    if status:
        console.note(f"trainer exited with status {status}; see {trainer.log}")
    return status


def _print_dry_run(settings: Settings, commands: list[Command], console: Console) -> None:
    console.note("DRY_RUN: nothing started; GPU, port, ms-swift, vLLM and DeepSpeed checks skipped")
    if settings.smoke:
        builds = "\n".join(shlex.join(argv) for argv in smoke_builds(settings, "python"))
        print(f"# SMOKE: tiny model and data (python: the interpreter of swift)\n{builds}\n")
    for command in commands:
        print(f"# {command.title}, log: {command.log}\n{command.shell()}\n")


def _gpu_settings(settings: Settings) -> dict[str, tuple[str, ...]]:
    return {
        "server": {"ROLLOUT_GPU": settings.rollout_gpus, "TRAIN_GPUS": settings.train_gpus},
        "colocate": {"GPU": settings.train_gpus},
        "rollout": {"ROLLOUT_GPUS": settings.rollout_gpus},
        "train": {"TRAIN_GPUS": settings.train_gpus},
    }[settings.layout]


def _ports(settings: Settings) -> list[tuple[str, int, bool, str]]:
    ports = []
    if settings.layout in ("server", "rollout"):
        ports += [
            ("ROLLOUT_PORT", settings.rollout_port, False, REUSED_PORT),
            ("ROLLOUT_GROUP_PORT", settings.group_port, True, "the NCCL weight-sync port"),
        ]
    if settings.layout != "rollout" and settings.node_rank == 0:  # only rank 0 hosts torchrun's rendezvous store
        ports.append(("MASTER_PORT", settings.master_port, True, "torchrun's rendezvous port"))
    return ports


def _health_url(settings: Settings) -> str:
    host = settings.rollout_host
    if settings.layout != "train" and host in ("0.0.0.0", "::"):  # a wildcard bind answers on loopback
        host = "127.0.0.1"
    return f"http://{f'[{host}]' if ':' in host else host}:{settings.rollout_port}/health/"


def _trainer_title(settings: Settings) -> str:
    gpus = ",".join(settings.train_gpus)
    if settings.layout == "colocate":
        return f"trainer with colocated vLLM on GPU {gpus}"
    node = f" node {settings.node_rank}/{settings.nnodes}" if settings.layout == "train" else ""
    return f"trainer{node} on GPUs {gpus}, NPROC_PER_NODE={len(settings.train_gpus)}"


def _smoke_proof(settings: Settings, python: str) -> list[str]:
    gpus = ",".join(settings.train_gpus)
    sync = f"pushed its weights to it over NCCL (ROLLOUT_GROUP_PORT {settings.group_port})"
    if settings.layout == "colocate":
        return [
            f"vLLM imports with {python}",
            f"vLLM ran inside the trainer on GPU {gpus} (colocate): it generated, slept during each update and took "
            "the new LoRA weights",
        ]
    if settings.layout == "train":
        where = (
            f"the rollout server at {settings.rollout_host}:{settings.rollout_port} answered /health/ from this node"
        )
        ran = f"the trainer ran on {settings.nnodes} node(s) x GPUs {gpus} (DeepSpeed ZeRO-3)"
    else:
        where = f"swift rollout started vLLM on GPU {settings.rollout_gpus[0]} and answered {_health_url(settings)}"
        ran = f"the trainer ran on GPUs {gpus} ({len(settings.train_gpus)} processes, DeepSpeed ZeRO-3)"
    return [
        f"vLLM and DeepSpeed import with {python}",
        where,
        f"{ran}, took its completions from the server and {sync}",
    ]
