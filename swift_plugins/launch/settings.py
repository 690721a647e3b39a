"""The launcher's settings: the environment, read once into a validated, frozen :class:`Settings`.

Every setting is checked here, before anything starts or is written; a bad one raises
:class:`~swift_plugins.core.errors.SettingError`, whose one-line message names the setting and the fix. What a
recipe reads is the rows of :mod:`.layouts`: its GPU settings, its ports, its task's preset.

>>> s = Settings.from_env("countdown_1gpu", {"OUTPUT_DIR": "/runs/a", "GPU": "1", "DRY_RUN": "yes"}, Path("/repo"))
>>> s.train_gpus, s.dry_run, s.model
(('1',), True, 'Qwen/Qwen2.5-3B-Instruct')
>>> Settings.from_env("countdown_1gpu", {"DRY_RUN": "y"}, Path("/repo"))  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
swift_plugins.core.errors.SettingError: DRY_RUN='y' is not a yes/no value: use 1, true or yes (on), ...
"""

from __future__ import annotations

import socket
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ..core.errors import SettingError
from ..core.fields import read_settings
from ..core.files import held_out_path
from ..core.objective import Objective
from ..core.settings import parse_bool, parse_gpus, positive_int, split_words
from ..core.task import TaskSpec
from ..selection.band import Band
from ..tasks import task_named
from ..watch.live import watch_mode, watch_thresholds
from ..watch.rules import Thresholds
from .catalog import default_of, foreign
from .layouts import LAYOUTS, GpuSetting, Layout, Recipe, recipe_named
from .script import script_name

__all__ = ["Settings"]


def _gpus(setting: GpuSetting | None, env: Mapping[str, str]) -> tuple[str, ...]:
    if setting is None:
        return ()
    value = env.get(setting.name) or setting.default
    if setting.single is not None and "," in value:
        raise SettingError(f"{setting.name}={value!r} must be a single GPU{setting.single}")
    return parse_gpus(setting.name, value, env.get("CUDA_VISIBLE_DEVICES"))


@dataclass(frozen=True)
class Settings:
    """What one launcher run uses, checked."""

    recipe: str  # countdown_3gpu, gym_1gpu, ...
    script: str  # the entry script's name (a recipe without one: its own), for messages
    repo: Path
    layout: Layout
    task: TaskSpec
    model: str
    dataset: str
    val_dataset: str  # "": the default held-out part; "none": no evaluation
    output_dir: Path
    report_to: str
    vllm_max_model_len: int
    vllm_gpu_memory_utilization: str
    rollout_args: tuple[str, ...] = ()
    rollout_gpus: tuple[str, ...] = ()
    train_gpus: tuple[str, ...] = ()
    rollout_host: str = "127.0.0.1"  # where the trainer finds the server; ROLE=rollout: the bind address
    ports: tuple[tuple[str, int], ...] = ()  # (setting, port) of the layout's ports
    master_addr: str = "127.0.0.1"
    nnodes: int = default_of("NNODES")
    node_rank: int = default_of("NODE_RANK")
    rollout_timeout: int = default_of("ROLLOUT_TIMEOUT")
    stop_grace: int = default_of("STOP_GRACE_SECONDS")
    log_tail_lines: int = default_of("LOG_TAIL_LINES")
    resume: bool = False
    watch: str = "stop"  # WATCH: what the watch over the trainer's log does on a fatal verdict (stop, warn) or off
    thresholds: Thresholds = field(default_factory=Thresholds)  # WATCH_SET: the watch's thresholds
    smoke: bool = False
    dry_run: bool = False
    no_proxy: str = ""  # the caller's no_proxy and NO_PROXY, merged
    vllm_port: str | None = None  # an inherited VLLM_PORT: vLLM's own variable, kept from the children
    smoke_dir: Path | None = None
    selection: Band | None = None  # SELECT_SAMPLES, SELECT_BAND: train on the rows the model solves sometimes
    dynamic_sample: int = default_of("DYNAMIC_SAMPLE")  # DYNAMIC_SAMPLE: resample groups without spread, N tries
    objective: Objective = field(default_factory=Objective)  # LOSS_TYPE, ..., ROLLOUT_CORRECTION: what GRPO optimises

    @property
    def selected(self) -> Path:
        """Where the selection writes the rows the trainer trains on (``OUTPUT_DIR``: every host of a run sees it)."""
        return self.output_dir / "selected.jsonl"

    def port(self, name: str) -> int:
        """The value of the port setting ``name`` (ROLLOUT_PORT, ROLLOUT_GROUP_PORT, MASTER_PORT)."""
        return dict(self.ports)[name]

    @property
    def world_size(self) -> int:
        """Training processes over all nodes (a trainer on the CPU is one)."""
        return max(len(self.train_gpus), 1) * self.nnodes

    @property
    def record(self) -> str:
        return self.layout.record.format(rank=self.node_rank)

    @property
    def health_url(self) -> str:
        """Where the rollout server answers ``/health/``; a wildcard bind answers on loopback."""
        host = "127.0.0.1" if self.rollout_host in ("0.0.0.0", "::") else self.rollout_host
        return f"http://{f'[{host}]' if ':' in host else host}:{self.port('ROLLOUT_PORT')}/health/"

    @classmethod
    def from_env(cls, recipe_name: str, env: Mapping[str, str], repo: Path) -> Settings:
        """The settings of the recipe ``recipe_name`` from ``env``, or :class:`SettingError`."""
        recipe = recipe_named(recipe_name)
        refused = foreign(recipe_name, env)
        if refused:
            raise SettingError(refused)
        flags = {name: parse_bool(name, env.get(name, "")) for name in ("DRY_RUN", "SMOKE")}
        resume = env.get("RESUME", "")
        if resume != "auto" and resume.strip().lower() not in ("", "0", "false", "no"):
            raise SettingError(f"RESUME={resume!r} is not understood: RESUME=auto continues the run in OUTPUT_DIR")
        layout = _layout(recipe, env)
        task = task_named(_task_name(recipe_name, recipe, env))
        smoke = flags["SMOKE"] or recipe.smoke
        if any(port.name == "ROLLOUT_PORT" for port in layout.ports):
            _check_renamed_ports(env)
        if "VLLM_GROUP_PORT" in env:
            raise SettingError(
                f"VLLM_GROUP_PORT is now ROLLOUT_GROUP_PORT; use ROLLOUT_GROUP_PORT={env['VLLM_GROUP_PORT']}"
            )
        output_dir = _output_dir(recipe_name, recipe, env, repo, smoke, resume == "auto")
        rollout_gpus, train_gpus = _gpus(layout.rollout_gpus, env), _gpus(layout.train_gpus, env)
        shared = [gpu for gpu in rollout_gpus if gpu in train_gpus]
        if shared:
            raise SettingError(
                f"{layout.rollout_gpus.name}={','.join(rollout_gpus)} and {layout.train_gpus.name}="
                f"{','.join(train_gpus)} share GPU {shared[0]}: vLLM and the trainer cannot share a card in this layout"
            )
        values = dict(
            recipe=recipe_name,
            script=script_name(recipe_name),
            repo=repo,
            layout=layout,
            task=task,
            model=env.get("MODEL") or task.preset.model,
            dataset=env.get("DATASET") or task.preset.dataset,
            val_dataset=env.get("VAL_DATASET", ""),
            output_dir=output_dir,
            report_to=env.get("REPORT_TO") or default_of("REPORT_TO"),
            vllm_max_model_len=positive_int(env, "VLLM_MAX_MODEL_LEN", task.preset.vllm_max_model_len),
            vllm_gpu_memory_utilization=_fraction(env, layout.vllm_memory),
            rollout_args=_rollout_args(env, layout) if layout.rollout_gpus else (),
            rollout_gpus=rollout_gpus,
            train_gpus=train_gpus,
            ports=_ports(layout, env),
            rollout_timeout=positive_int(env, "ROLLOUT_TIMEOUT", default_of("ROLLOUT_TIMEOUT")),
            stop_grace=positive_int(env, "STOP_GRACE_SECONDS", default_of("STOP_GRACE_SECONDS"), 0),
            log_tail_lines=positive_int(env, "LOG_TAIL_LINES", default_of("LOG_TAIL_LINES"), 0),
            resume=resume == "auto",
            watch=watch_mode(env),
            thresholds=watch_thresholds(env, plumbing=smoke),
            smoke=smoke,
            dry_run=flags["DRY_RUN"],
            no_proxy=_no_proxy(env),
            vllm_port=env.get("VLLM_PORT"),
        )
        if layout.rollout_gpus and not layout.trainer:
            values["rollout_host"] = env.get("ROLLOUT_BIND_HOST") or default_of("ROLLOUT_BIND_HOST")
        if layout.node:
            values.update(_node(env))
        if smoke:
            values.update(_smoke(task, output_dir, recipe.shared_output, values["val_dataset"], env.get("DATASET")))
        values["selection"] = _selection(env, str(values["dataset"]), values.get("smoke_dir"))
        values["dynamic_sample"] = positive_int(env, "DYNAMIC_SAMPLE", default_of("DYNAMIC_SAMPLE"), minimum=0)
        values["objective"] = read_settings(Objective, env)
        return cls(**values)


def _task_name(recipe_name: str, recipe: Recipe, env: Mapping[str, str]) -> str:
    """The recipe's task, else ``TASK`` (default countdown); a family's recipe needs ``TASK=<family>:<name>``."""
    name = recipe.task or env.get("TASK") or ("" if recipe.family else "countdown")
    if recipe.family and not name.startswith(f"{recipe.family}:"):
        raise SettingError(
            f"{recipe_name} needs TASK={recipe.family}:<name>, got TASK={name!r} "
            f"(python -m swift_plugins {recipe.family} list names them)"
        )
    return name


def _layout(recipe: Recipe, env: Mapping[str, str]) -> Layout:
    if len(recipe.layouts) == 1:
        return LAYOUTS[recipe.layouts[0]]
    role = env.get("ROLE", "")
    if role not in recipe.layouts:
        raise SettingError(
            "set ROLE=rollout (on the rollout host) or ROLE=train (on each training node); see --help"
            if not role
            else f"ROLE={role!r} is neither rollout nor train"
        )
    return LAYOUTS[role]


def _fraction(env: Mapping[str, str], default: str) -> str:
    value = env.get("VLLM_GPU_MEMORY_UTILIZATION") or default
    try:
        ok = 0 < float(value) <= 1
    except ValueError:
        ok = False
    if not ok:
        raise SettingError(f"VLLM_GPU_MEMORY_UTILIZATION must be a fraction of the card in (0, 1], got {value!r}")
    return value


def _check_renamed_ports(env: Mapping[str, str]) -> None:
    # VLLM_PORT was these recipes' name for ROLLOUT_PORT.  It is also vLLM's own variable: an old habit must not
    # silently keep working half-way.  Beside a ROLLOUT_PORT it is someone else's (Kubernetes sets it for a service
    # named vllm): it is only kept from the children.
    if "VLLM_PORT" in env and not env.get("ROLLOUT_PORT"):
        raise SettingError(
            f"VLLM_PORT is set ({env['VLLM_PORT']!r}): the rollout HTTP port is now ROLLOUT_PORT (vLLM reads "
            "VLLM_PORT as the base of its internal ports, which breaks the server); "
            "use ROLLOUT_PORT=... and unset VLLM_PORT"
        )


def _no_proxy(env: Mapping[str, str]) -> str:
    hosts = [host for host in env.get("no_proxy", "").split(",") if host]
    hosts += [host for host in env.get("NO_PROXY", "").split(",") if host and host not in hosts]
    return ",".join(hosts)


def _selection(env: Mapping[str, str], dataset: str, smoke_dir: Path | None) -> Band | None:
    """``SELECT_SAMPLES`` (answers a candidate row, 0: no selection) and ``SELECT_BAND`` (``LEAST-MOST`` right
    answers a kept row has; default 1 to SELECT_SAMPLES-1), checked before anything starts."""
    samples = positive_int(env, "SELECT_SAMPLES", default_of("SELECT_SAMPLES"), minimum=0)
    if not samples:
        if env.get("SELECT_BAND"):
            raise SettingError("SELECT_BAND without SELECT_SAMPLES: set SELECT_SAMPLES, the answers drawn a row")
        return None
    local = Path(dataset).is_file() or (smoke_dir is not None and Path(dataset).is_relative_to(smoke_dir))
    if not local:
        raise SettingError(f"SELECT_SAMPLES needs DATASET to be a local file of candidate rows, got {dataset!r}")
    band = env.get("SELECT_BAND") or None
    try:
        return Band.parse(samples, band)
    except SettingError as error:
        raise SettingError(f"SELECT_SAMPLES={samples}{f' SELECT_BAND={band}' if band else ''}: {error}") from None


def _output_dir(name: str, recipe: Recipe, env: Mapping[str, str], repo: Path, smoke: bool, resume: bool) -> Path:
    if env.get("OUTPUT_DIR"):
        return Path.cwd() / Path(env["OUTPUT_DIR"]).expanduser()
    if resume:
        raise SettingError("RESUME=auto needs OUTPUT_DIR: the folder of the run to continue")
    if recipe.shared_output:  # the same on every host
        return repo / "output" / name
    suffix = "-smoke" if smoke and not recipe.smoke else ""
    return repo / "output" / f"{name}{suffix}-{time.strftime('%Y%m%d-%H%M%S')}"


def _ports(layout: Layout, env: Mapping[str, str]) -> tuple[tuple[str, int], ...]:
    ports = tuple((port.name, positive_int(env, port.name, port.default, 1, 65535)) for port in layout.ports)
    # Ports on one host must differ: those bound here, and (on a training node) the two of the rollout host.
    for group in ([p for p in layout.ports if p.bound], [p for p in layout.ports if not p.bound]):
        names = {port.name for port in group}
        seen: dict[int, str] = {}
        for name, value in ((name, value) for name, value in ports if name in names):
            if value in seen:
                listed = ", ".join(f"{key}={number}" for key, number in ports if key in names)
                raise SettingError(f"{name}={value} clashes with {seen[value]} ({listed}): each needs its own port")
            seen[value] = name
    return ports


def _rollout_args(env: Mapping[str, str], layout: Layout) -> tuple[str, ...]:
    words = split_words("ROLLOUT_ARGS", env.get("ROLLOUT_ARGS", ""))
    for word in words:
        if word.split("=", 1)[0] in ("--port", "--host"):
            where = "ROLLOUT_PORT and ROLLOUT_BIND_HOST" if not layout.trainer else "ROLLOUT_PORT"
            raise SettingError(
                f"{word.split('=', 1)[0]} in ROLLOUT_ARGS would move the server away from where the launcher checks "
                f"it and the trainer connects; set {where} instead"
            )
    return words


def _node(env: Mapping[str, str]) -> dict:
    host = env.get("ROLLOUT_HOST", "")
    if not host:
        raise SettingError("ROLE=train needs ROLLOUT_HOST (the host running ROLE=rollout)")
    nnodes = positive_int(env, "NNODES", default_of("NNODES"))
    rank = positive_int(env, "NODE_RANK", default_of("NODE_RANK"), 0)
    if rank >= nnodes:
        raise SettingError(f"NODE_RANK={rank} must be below NNODES={nnodes}")
    master_addr = env.get("MASTER_ADDR", "")
    if not master_addr and nnodes > 1:
        raise SettingError(f"NNODES={nnodes} needs MASTER_ADDR (the address of the NODE_RANK=0 training node)")
    return dict(rollout_host=host, nnodes=nnodes, node_rank=rank, master_addr=master_addr or "127.0.0.1")


def _smoke(task: TaskSpec, output_dir: Path, shared_output: bool, val_dataset: str, dataset: str | None) -> dict:
    # Hosts sharing one OUTPUT_DIR each build the (seeded, identical) tiny model in a folder of their own.
    smoke_dir = output_dir / (f"smoke-{socket.gethostname()}" if shared_output else "smoke")
    values = dict(smoke_dir=smoke_dir, model=str(smoke_dir / "model"), vllm_max_model_len=1024, report_to="none")
    if dataset:  # the user's rows, e.g. a local copy of the hub data on a box that cannot reach the hub
        return values
    generated, data = not isinstance(task.preset.smoke_data, str), smoke_dir / "data" / "train.jsonl"
    return values | dict(
        dataset=str(data) if generated else task.preset.smoke_data,
        val_dataset=str(held_out_path(data)) if generated else val_dataset,
    )
