"""The launcher as data: one frozen row per layout, one per recipe. Settings, commands, checks and the run read
these rows instead of branching on names.

A **layout** is what one host runs: ``server`` (a ``swift rollout`` server and the trainer on one node),
``colocate`` (one GPU, vLLM inside the trainer), the multi-node ``rollout`` host and ``train`` nodes, and ``cpu``
(the trainer and vLLM's CPU build in one process). A **recipe** is an entry script of ``shell/``: a task and a
layout (the multi-node recipe: its ``ROLE`` picks one of two, its ``TASK`` the task).

>>> recipe_named("countdown_1gpu").layouts, recipe_named("countdown_multinode").task
(('colocate',), None)
>>> LAYOUTS["server"].record.format(rank=0), LAYOUTS["train"].record.format(rank=1)
('commands', 'commands-train-node1')
"""

from __future__ import annotations

from dataclasses import dataclass

from ..core.errors import SettingError
from ..tasks import FAMILIES, NAMES

__all__ = ["LAYOUTS", "RECIPES", "GpuSetting", "Layout", "Port", "Recipe", "recipe_named"]


@dataclass(frozen=True)
class GpuSetting:
    """A GPU setting: its name and default; ``single`` is the refusal's hint when it takes one GPU only."""

    name: str
    default: str
    single: str | None = None


@dataclass(frozen=True)
class Port:
    """A port setting; ``bound`` here (checked free, distinct from the others bound here) or reached elsewhere."""

    name: str
    default: int
    what: str  # in the refusal when it is busy
    reuse: bool = True  # bound with SO_REUSEADDR (torch's TCPStore) or not (swift rollout's HTTP port)
    bound: bool = True


ROLLOUT_PORT = Port("ROLLOUT_PORT", 8000, "the rollout server's HTTP port; after a previous run it may linger ~60s in "
                    "TIME_WAIT, and ms-swift would then silently switch ports", reuse=False)  # fmt: skip
GROUP_PORT = Port("ROLLOUT_GROUP_PORT", 51216, "the NCCL weight-sync port")
# torchrun's, and the process group of vLLM colocated in the trainer; bound by node rank 0 only
MASTER_PORT = Port("MASTER_PORT", 29500, "torchrun's rendezvous port")


@dataclass(frozen=True)
class Layout:
    """One layout: its GPUs, ports, trainer, record and titles, and what its smoke run proves."""

    name: str
    rollout_gpus: GpuSetting | None  # swift rollout's GPUs; None: no server on this host
    train_gpus: GpuSetting | None  # the trainer's GPUs; None: no trainer here, or one on the CPU
    ports: tuple[Port, ...]
    trainer: str | None  # the trainer's flags (commands.TRAINER_WORDS); None: no trainer
    trainer_title: str  # {gpus} {count} {rank} {nnodes}
    record: str  # commands record name; {rank}: the node rank
    log: str  # the trainer's log
    vllm_memory: str  # VLLM_GPU_MEMORY_UTILIZATION default
    fix_server_flags: str  # what to do instead of --vllm_server_* extra flags
    proof: tuple[str, ...]  # what a smoke run showed; {python} {gpus} {rollout_gpu} {health} {host} {port} ...
    node: bool = False  # a training node of several: NNODES, NODE_RANK, MASTER_ADDR, ROLLOUT_HOST
    reference_batch: bool = True  # warn when a step's completions differ from the task's reference run


_SERVED = "took its completions from the server and pushed its weights to it over NCCL (ROLLOUT_GROUP_PORT {group})"
LAYOUTS = {
    layout.name: layout
    for layout in (
        Layout(
            "server", GpuSetting("ROLLOUT_GPU", "2", single=""), GpuSetting("TRAIN_GPUS", "0,1"),
            (ROLLOUT_PORT, GROUP_PORT, MASTER_PORT), "server", "trainer on GPUs {gpus}, NPROC_PER_NODE={count}",
            "commands", "train.log", "0.9", "set ROLLOUT_PORT / ROLLOUT_GROUP_PORT instead",
            ("vLLM and DeepSpeed import with {python}",
             "swift rollout started vLLM on GPU {rollout_gpu} and answered {health}",
             "the trainer ran on GPUs {gpus} ({count} processes, DeepSpeed ZeRO-3), " + _SERVED),
        ),
        Layout(
            "colocate", None, GpuSetting("GPU", "0", single=" (the server recipes use more)"), (MASTER_PORT,),
            "colocate", "trainer with colocated vLLM on GPU {gpus}", "commands", "train.log", "0.45",
            "this recipe runs vLLM inside the trainer (colocate); a server needs a 3-GPU recipe",
            ("vLLM imports with {python}",
             "vLLM ran inside the trainer on GPU {gpus} (colocate): it generated, slept during each update and "
             "took the new LoRA weights"),
            reference_batch=False,
        ),
        Layout(
            "rollout", GpuSetting("ROLLOUT_GPUS", "0"), None, (ROLLOUT_PORT, GROUP_PORT), None, "",
            "commands-rollout", "", "0.9", "this host only serves (extra swift rollout flags go in ROLLOUT_ARGS)",
            (),
        ),
        Layout(
            "train", None, GpuSetting("TRAIN_GPUS", "0,1,2,3,4,5,6,7"),
            (Port(ROLLOUT_PORT.name, 8000, "", bound=False), Port(GROUP_PORT.name, 51216, "", bound=False),
             MASTER_PORT),
            "server", "trainer node {rank}/{nnodes} on GPUs {gpus}, NPROC_PER_NODE={count}",
            "commands-train-node{rank}", "train-node{rank}.log", "0.9",
            "set ROLLOUT_HOST / ROLLOUT_PORT / ROLLOUT_GROUP_PORT instead",
            ("vLLM and DeepSpeed import with {python}",
             "the rollout server at {host}:{port} answered /health/ from this node",
             "the trainer ran on {nnodes} node(s) x GPUs {gpus} (DeepSpeed ZeRO-3), " + _SERVED),
            node=True,
        ),
        Layout(
            "cpu", None, None, (MASTER_PORT,), "cpu", "trainer on the CPU with vLLM's CPU build colocated", "commands",
            "train.log", "0.45", "this recipe runs vLLM inside the trainer (colocate) on the CPU",
            ("vLLM's CPU build imports with {python}",
             "vLLM ran inside the trainer on the CPU: it generated every completion and took the trainer's "
             "weights after each update"),
            reference_batch=False,
        ),
    )
}  # fmt: skip


@dataclass(frozen=True)
class Recipe:
    """An entry script: its task (None: ``TASK``, default countdown), its layout (several: ``ROLE`` picks)."""

    task: str | None
    layouts: tuple[str, ...]
    smoke: bool = False  # always a smoke run: the tiny model and a few steps
    shared_output: bool = False  # every host uses the same OUTPUT_DIR (default output/<recipe>)
    family: str | None = None  # TASK must be one of this family's tasks, <family>:<name> (task is None)


RECIPES = {
    "countdown_multinode": Recipe(None, ("rollout", "train"), shared_output=True),
    "countdown_cpu_smoke": Recipe("countdown", ("cpu",), smoke=True),
}
SUFFIXES = {"3gpu": "server", "1gpu": "colocate"}  # <task>_3gpu, <task>_1gpu for every task


def recipe_named(name: str) -> Recipe:
    """The recipe of ``name``: a fixed one, or ``<task>_<3gpu|1gpu>`` for a registered task."""
    if name in RECIPES:
        return RECIPES[name]
    task, _, suffix = name.rpartition("_")
    if task in NAMES and suffix in SUFFIXES:
        return Recipe(task, (SUFFIXES[suffix],))
    family, _, kind = name.partition("_")  # gym_1gpu, gym_3gpu, gym_cpu_smoke: the task is TASK=gym:<name>
    if family in FAMILIES and kind in (*SUFFIXES, "cpu_smoke"):
        layout = SUFFIXES.get(kind, "cpu")
        return Recipe(None, (layout,), smoke=layout == "cpu", family=family)
    known = [*RECIPES, *(f"{task}_{suffix}" for task in NAMES for suffix in SUFFIXES)]
    families = [f"{family}_{kind}" for family in FAMILIES for kind in (*SUFFIXES, "cpu_smoke")]
    raise SettingError(f"{name}: no such recipe; the recipes are {', '.join(known)}, and {', '.join(families)} with "
                       "TASK=gym:<name>")  # fmt: skip
