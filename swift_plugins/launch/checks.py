"""The launcher's preflight: each check of :mod:`swift_plugins.preflight` given what of a :class:`Plan` it reads.

:func:`check_plan` checks the commands themselves (DRY_RUN included): paths, the rows of local data, the output
folder, batch arithmetic, lengths, the logger; :func:`advise` warns of settings that waste a run. :func:`check_host`
checks this host just before anything starts (skipped by DRY_RUN): the GPUs, ms-swift's interpreter, the stack it
holds and the modules the run imports, free ports.

>>> import tempfile
>>> from .recipes import build_plan
>>> from .script import REPO
>>> from .settings import Settings
>>> settings = Settings.from_env("countdown_1gpu", {"OUTPUT_DIR": tempfile.mkdtemp(), "MODEL": "/no/model"}, REPO)
>>> check_plan(build_plan(settings, [], Console("x.sh")), Console("x.sh"))
Traceback (most recent call last):
...
swift_plugins.core.errors.SettingError: MODEL=/no/model: no such folder; point MODEL at a model folder or a hub id ...
"""

from __future__ import annotations

from ..core.console import Console
from ..core.flags import Flags
from ..preflight import advice, host, paths, trainer
from .commands import Plan

__all__ = ["advise", "check_host", "check_plan"]


def check_plan(plan: Plan, console: Console) -> None:
    """Every check that needs no GPU, no port and no ms-swift."""
    settings, flags = plan.settings, plan.flags
    paths.check_plugin(settings.repo)
    paths.check_output_dir(settings.output_dir)
    if plan.trainer is None:
        return
    trainer.check_trainer_flags(flags, settings.world_size, plan.origin)
    if not settings.smoke:  # the launcher builds a smoke run's model and data
        selected = {str(settings.selected): settings.dataset} if settings.selection is not None else {}
        paths.check_paths(flags, plan.origin, settings.task, console, selected)
    engine = Flags(plan.rollout.argv[2:]) if plan.rollout else flags
    trainer.check_lengths(flags, engine, settings.vllm_max_model_len)


def advise(plan: Plan, console: Console) -> None:
    """The warnings (and the checkpoint size note) for the trainer of ``plan``."""
    settings = plan.settings
    reference_batch = settings.layout.reference_batch and not settings.smoke
    advice.advise(plan.flags, settings.world_size, settings.task, console, plan.user, bool(settings.dynamic_sample),
                  reference_batch)  # fmt: skip


def check_host(plan: Plan, console: Console) -> str:
    """The GPUs, the imports of swift's interpreter (returned) and the ports of this host."""
    settings = plan.settings
    gpus = {setting.name: values for setting, values in ((settings.layout.rollout_gpus, settings.rollout_gpus),
                                                          (settings.layout.train_gpus, settings.train_gpus)) if setting}
    host.check_gpus(gpus)
    use_vllm = plan.rollout is not None or (plan.flags.value("use_vllm") or "").lower() in ("true", "1")
    modules = ["vllm"] * use_vllm + ["deepspeed"] * bool(plan.flags.value("deepspeed"))
    loggers = {name: f"REPORT_TO={name}" for name in ("wandb", "swanlab") if name in (plan.flags.values("report_to")
                                                                                     or [])}  # fmt: skip
    host.check_stack(host.swift_interpreter()[1], settings.repo, {"swift", "torch", *modules, *["cuda"] * bool(gpus)})
    python = host.check_swift([*modules, *loggers], loggers, settings.repo, console)
    for port in settings.layout.ports:
        # Only node rank 0 hosts torchrun's rendezvous store.
        if port.bound and (port.name != "MASTER_PORT" or settings.node_rank == 0):
            host.check_port(port.name, settings.port(port.name), port.reuse, port.what)
    return python
