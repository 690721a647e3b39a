"""Every setting a recipe reads, in one table: what ``--help`` of each recipe lists, and what a recipe refuses when
the environment sets a setting of another recipe (``TASK`` on a single-task script: it would be silently ignored).

A row says what the setting means, its default (the recipe's task and layout fill it in), the values it takes, and
which recipes read it (:attr:`Entry.reads`, a test on the recipe and one of its layouts). The GPU and port settings
come from the layouts' own rows (:mod:`.layouts`).

>>> [entry.name for entry in entries("countdown_1gpu")][:4]
['MODEL', 'DATASET', 'VAL_DATASET', 'OUTPUT_DIR']
>>> foreign("countdown_3gpu", {"TASK": "gym:chain_sum"})
'TASK is not a setting of countdown_3gpu (its task is countdown): unset it (it is read by countdown_multinode, ...'
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from ..core.fields import SettingHelp, setting_fields, settings_section, shown
from ..core.objective import Objective
from ..tasks import FAMILIES, NAMES, task_named, task_names
from .layouts import LAYOUTS, RECIPES, SUFFIXES, Layout, Recipe, recipe_named

__all__ = [
    "ALL", "GYM_SCORE_LIMITS", "Entry", "default_of", "entries", "foreign", "recipe_names", "refusal", "settings_help",
]  # fmt: skip

GPUS = "GPU indices or GPU-/MIG- ids, comma-separated; under an inherited CUDA_VISIBLE_DEVICES, positions in it"
YES_NO = "1/true/yes or 0/false/no"
# swift_plugins.gym.bounded's limits (a test holds them equal): importing the gym package here would need its
# dependencies, and a DRY_RUN needs the standard library only.
GYM_SCORE_LIMITS = {"DEFAULT_TIMEOUT": 1.0, "MAX_TIMEOUT": 600.0, "MAX_WORKERS": 64}
# Layout -> default: a fixed text, or what the recipe's task (None: any of its family's) and layout make of it.
Default = Callable[[Recipe, Layout], str]


@dataclass(frozen=True)
class Entry:
    """One setting: name, meaning, default, the values it takes, and which recipes (and layouts) read it."""

    name: str
    meaning: str
    default: Default
    allowed: str = ""
    reads: Callable[[Recipe, Layout], bool] = lambda recipe, layout: True
    value: Any = None  # the default :mod:`.settings` reads it with, where one value serves every recipe


def _fixed(text: str) -> Default:
    return lambda recipe, layout: text


def _valued(name: str, meaning: str, value: Any, allowed: str = "", reads: Callable[[Recipe, Layout], bool] = (
        lambda recipe, layout: True), shown: str = "") -> Entry:  # fmt: skip
    """A setting whose default is one ``value`` (``shown`` so in ``--help``, else as it is)."""
    return Entry(name, meaning, _fixed(shown or str(value)), allowed, reads, value)


def default_of(name: str) -> Any:
    """The default value of the setting ``name``, the one place it is written.

    >>> default_of("ROLLOUT_TIMEOUT")
    900
    """
    return next(entry.value for entry in ALL if entry.name == name)


def _preset(field: str) -> Default:
    def default(recipe: Recipe, layout: Layout) -> str:
        if recipe.family:
            return "the task's preset"
        return str(getattr(task_named(recipe.task or "countdown").preset, field))

    return default


def _output_dir(recipe: Recipe, layout: Layout) -> str:
    return "output/<recipe>" if recipe.shared_output else "output/<recipe>-<YYYYmmdd-HHMMSS>"


def _serves(recipe: Recipe, layout: Layout) -> bool:
    return layout.rollout_gpus is not None


def _trains(recipe: Recipe, layout: Layout) -> bool:
    return layout.trainer is not None


def _runs_vllm(recipe: Recipe, layout: Layout) -> bool:
    return layout.rollout_gpus is not None or layout.trainer in ("colocate", "cpu")


def _on_gpu_vllm(recipe: Recipe, layout: Layout) -> bool:
    return layout.rollout_gpus is not None or layout.trainer == "colocate"


def _any_task(recipe: Recipe, layout: Layout) -> bool:
    return recipe.task is None


def _node(recipe: Recipe, layout: Layout) -> bool:
    return layout.node


def _scores_gym(recipe: Recipe, layout: Layout) -> bool:  # the rewards in the trainer read them
    return _any_task(recipe, layout) and _trains(recipe, layout)


TABLE = (
    Entry("MODEL", "the model to train: a hub id or a local folder", _preset("model"), "",
          lambda recipe, layout: not recipe.smoke),  # a smoke recipe trains its tiny model
    Entry("DATASET", "training rows: a hub id (#N: N rows) or a local .jsonl/.json/.parquet file", _preset("dataset")),
    Entry("VAL_DATASET", "held-out rows evaluated every eval_steps",
          _fixed("DATASET's <name>.test.<ext> if local, else 1% of DATASET"), "a dataset as DATASET, or none"),
    Entry("OUTPUT_DIR", "the run's folder: logs, commands.sh, ms-swift's v*/ run folders", _output_dir),
    Entry("TASK", "the task (the same on every host)",
          lambda recipe, layout: f"required: {recipe.family}:<name>" if recipe.family else "countdown",
          task_names(), _any_task),
    Entry("ROLE", "what this host runs", _fixed("required"), "rollout (the server) or train (a training node)",
          lambda recipe, layout: len(recipe.layouts) > 1),
    Entry("ROLLOUT_HOST", "host name or address of the ROLE=rollout server", _fixed("required"), "", _node),
    _valued("ROLLOUT_BIND_HOST", "address the server binds (unauthenticated: a private network only)", "0.0.0.0",
            "", lambda recipe, layout: _serves(recipe, layout) and not _trains(recipe, layout)),
    _valued("NNODES", "training nodes", 1, "a positive integer", _node),
    _valued("NODE_RANK", "this training node's rank", 0, "0 to NNODES-1", _node),
    Entry("MASTER_ADDR", "address of the NODE_RANK=0 training node", _fixed("required if NNODES > 1"), "", _node),
    Entry("VLLM_MAX_MODEL_LEN", "tokens vLLM holds: a prompt of --max_length plus --max_completion_length",
          _preset("vllm_max_model_len"), "a positive integer",
          lambda recipe, layout: _runs_vllm(recipe, layout) and not recipe.smoke),  # a smoke run: 1024
    Entry("VLLM_GPU_MEMORY_UTILIZATION", "share of the card vLLM takes",
          lambda recipe, layout: layout.vllm_memory, "a fraction in (0, 1]", _on_gpu_vllm),
    Entry("ROLLOUT_ARGS", "extra `swift rollout` flags, shell-quoted", _fixed('""'), "not --port or --host", _serves),
    _valued("ROLLOUT_TIMEOUT", "seconds for the rollout server to become healthy", 900, "a positive integer",
          lambda recipe, layout: _serves(recipe, layout) or layout.node),
    _valued("REPORT_TO", "ms-swift's logger", "tensorboard", "tensorboard, wandb, swanlab, none, ...",
          lambda recipe, layout: _trains(recipe, layout) and not recipe.smoke),  # a smoke run: none
    Entry("RESUME", "continue from the newest complete checkpoint in OUTPUT_DIR", _fixed('""'), "auto", _trains),
    Entry("SMOKE", "the tiny model, 4 short steps on this box, the same launcher path",
          lambda recipe, layout: "1 (always)" if recipe.smoke else "0", YES_NO),
    Entry("DRY_RUN", "check everything and print the commands; start nothing", _fixed("0"), YES_NO),
    Entry("WATCH", "the watch over logging.jsonl (docs/watch.md): on a fatal verdict stop the run, or warn",
          _fixed("stop"), "stop, warn or off", _trains),
    Entry("WATCH_SET", "the watch's thresholds", _fixed("-"), "NAME=VALUE ... (stall_seconds=3600)", _trains),
    _valued("SELECT_SAMPLES", "first answer each row of a local DATASET this many times; train on the rows solved "
            "sometimes", 0, "0, or an integer >= 2", shown="0 (no selection)"),
    Entry("SELECT_BAND", "right answers (of SELECT_SAMPLES) a kept row has", _fixed("1-(SELECT_SAMPLES-1)"),
          "LEAST-MOST"),
    _valued("DYNAMIC_SAMPLE", "ms-swift's dynamic sampling: resample groups whose answers are all right or all "
            "wrong, up to this many times a step (judged on the accuracy reward alone)", 0, "a non-negative integer",
            _trains, shown="0 (off)"),
    *(Entry(meta.env, meta.meaning, _fixed(shown(item.default)), meta.check.allowed, _trains)
      for item, meta in setting_fields(Objective)),
    Entry("GYM_SCORE_WORKERS", "processes scoring reasoning-gym answers (TASK=gym:<name>)", _fixed("up to 4 CPUs"),
          f"1 to {GYM_SCORE_LIMITS['MAX_WORKERS']}", _scores_gym),
    Entry("GYM_SCORE_TIMEOUT", "CPU seconds a reasoning-gym answer may take to score (TASK=gym:<name>)",
          _fixed(f"{GYM_SCORE_LIMITS['DEFAULT_TIMEOUT']:g}"), f"above 0, at most {GYM_SCORE_LIMITS['MAX_TIMEOUT']:g}",
          _scores_gym),
    _valued("STOP_GRACE_SECONDS", "seconds between SIGTERM and SIGKILL when stopping", 10,
          "a non-negative integer"),
    _valued("LOG_TAIL_LINES", "lines of a failed process's log shown", 40, "a non-negative integer"),
)  # fmt: skip
GPU_MEANINGS = {
    "ROLLOUT_GPU": "the GPU of the vLLM server",
    "ROLLOUT_GPUS": "the GPUs of the vLLM server (--vllm_data_parallel_size: their count)",
    "TRAIN_GPUS": "the trainer's GPUs (NPROC_PER_NODE: their count)",
    "GPU": "the card of the trainer and its colocated vLLM",
}
PORT_MEANINGS = {
    "ROLLOUT_PORT": "the rollout server's HTTP port (was VLLM_PORT)",
    "ROLLOUT_GROUP_PORT": "the NCCL weight-sync port on the rollout host (was VLLM_GROUP_PORT)",
    "MASTER_PORT": "torchrun's rendezvous port (node rank 0)",
}


def _layout_entries() -> Iterator[Entry]:
    """The GPU and port settings, from the layouts' rows: each layout reads its own."""
    seen: set[str] = set()
    for layout in LAYOUTS.values():
        for gpu in (layout.rollout_gpus, layout.train_gpus):
            if gpu is not None and gpu.name not in seen:
                seen.add(gpu.name)
                yield Entry(gpu.name, GPU_MEANINGS[gpu.name], lambda recipe, layout, name=gpu.name: _gpu_default(
                    layout, name), GPUS if gpu.single is None else "one GPU index or id", _reads_gpu(gpu.name))
        for port in layout.ports:
            if port.name not in seen:
                seen.add(port.name)
                yield Entry(port.name, PORT_MEANINGS[port.name], _fixed(str(port.default)), "1-65535",
                            _reads_port(port.name))  # fmt: skip


def _gpu_default(layout: Layout, name: str) -> str:
    return next(gpu.default for gpu in (layout.rollout_gpus, layout.train_gpus) if gpu is not None and gpu.name == name)


def _reads_gpu(name: str) -> Callable[[Recipe, Layout], bool]:
    return lambda recipe, layout: any(gpu is not None and gpu.name == name
                                      for gpu in (layout.rollout_gpus, layout.train_gpus))  # fmt: skip


def _reads_port(name: str) -> Callable[[Recipe, Layout], bool]:
    return lambda recipe, layout: any(port.name == name for port in layout.ports)


ALL = (*TABLE[4:6], *TABLE[:4], *_layout_entries(), *TABLE[6:])  # TASK and ROLE first


def _layouts(recipe: Recipe) -> list[Layout]:
    return [LAYOUTS[name] for name in recipe.layouts]


def entries(recipe_name: str) -> list[Entry]:
    """The settings the recipe ``recipe_name`` reads (any of its layouts), in the table's order."""
    recipe = recipe_named(recipe_name)
    return [entry for entry in ALL if any(entry.reads(recipe, layout) for layout in _layouts(recipe))]


def recipe_names() -> list[str]:
    """Every recipe: the fixed ones, ``<task>_<3gpu|1gpu>`` for every task, ``<family>_<kind>`` for every family."""
    tasks = [f"{task}_{suffix}" for task in NAMES for suffix in SUFFIXES]
    families = [f"{family}_{kind}" for family in FAMILIES for kind in (*SUFFIXES, "cpu_smoke")]
    return [*RECIPES, *tasks, *families]


def foreign(recipe_name: str, env: Mapping[str, str]) -> str | None:
    """The refusal of the first setting in ``env`` that another recipe reads and ``recipe_name`` does not (it would
    be ignored without a word), or None."""
    own = {entry.name for entry in entries(recipe_name)}
    return refusal(recipe_name, own, env, recipe_named(recipe_name).task)


def refusal(script: str, own: Collection[str], env: Mapping[str, str], task: str | None = None) -> str | None:
    """The refusal of the first setting in ``env`` that a recipe reads and ``script``, which reads ``own``, does not
    (the demo's script shares the recipes' settings); ``task``: the script's own task, named when TASK is refused."""
    given = {name for name, value in env.items() if value}
    for entry in ALL:
        if entry.name in given and entry.name not in own:
            readers = [name for name in recipe_names() if entry.name in {e.name for e in entries(name)}]
            mine = f" (its task is {task})" if entry.name == "TASK" and task else ""
            shown = ", ".join(readers[:3]) + (", ..." if len(readers) > 3 else "")
            return f"{entry.name} is not a setting of {script}{mine}: unset it (it is read by {shown})"
    return None


def settings_help(recipe_name: str) -> str:
    """The ``Settings`` part of ``--help`` of ``recipe_name``: each setting it reads, its default and its values."""
    recipe = recipe_named(recipe_name)
    layouts = _layouts(recipe)
    rows = []
    for entry in entries(recipe_name):
        readers = [layout for layout in layouts if entry.reads(recipe, layout)]
        defaults = tuple(dict.fromkeys(entry.default(recipe, layout) for layout in readers))
        roles = f" (ROLE={readers[0].name})" if len(readers) < len(layouts) else ""
        rows.append(SettingHelp(entry.name, f"{entry.meaning}{roles}", defaults, entry.allowed))
    return settings_section(rows)
