"""The launcher's settings: the environment, read once into a validated, frozen :class:`Settings`.

Every setting is checked here, before anything starts or is written; a bad one raises
:class:`SettingError`, whose one-line message names the setting and the fix.

>>> s = Settings.from_env("countdown_1gpu", {"OUTPUT_DIR": "/runs/a", "GPU": "1", "DRY_RUN": "yes"}, Path("/repo"))
>>> s.train_gpus, s.dry_run, s.model
(('1',), True, 'Qwen/Qwen2.5-3B-Instruct')
>>> Settings.from_env("countdown_1gpu", {"DRY_RUN": "y"}, Path("/repo"))  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
swift_plugins.launch.settings.SettingError: DRY_RUN='y' is not a yes/no value: use 1, true or yes (on), ...
"""

from __future__ import annotations

import re
import shlex
import socket
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from ..core.errors import PluginError

__all__ = ["RECIPES", "SettingError", "Settings", "parse_bool", "parse_gpus", "split_words"]

# recipe -> (task, layout); the multi-node recipe takes TASK and ROLE from the environment.
RECIPES = {
    "countdown_3gpu": ("countdown", "server"),
    "countdown_1gpu": ("countdown", "colocate"),
    "gsm8k_3gpu": ("gsm8k", "server"),
    "gsm8k_1gpu": ("gsm8k", "colocate"),
    "countdown_multinode": (None, "multinode"),
}
BOOLEANS = {"1": True, "true": True, "yes": True, "0": False, "false": False, "no": False}
# A GPU is an index or an id as CUDA_VISIBLE_DEVICES takes it: GPU-<uuid> (or a prefix), MIG-<uuid>,
# MIG-GPU-<uuid>/<gi>/<ci>.
GPU_ITEM = re.compile(r"0|[1-9][0-9]*|(GPU|MIG)-[A-Za-z0-9][A-Za-z0-9/_-]*")


class SettingError(PluginError):
    """A setting the launcher refuses; the message names it and the fix."""


def parse_bool(name: str, value: str) -> bool:
    """``value`` of the yes/no setting ``name``; empty is no.

    >>> parse_bool("SMOKE", "TRUE"), parse_bool("SMOKE", "")
    (True, False)
    """
    word = value.strip().lower()
    if word and word not in BOOLEANS:
        raise SettingError(f"{name}={value!r} is not a yes/no value: use 1, true or yes (on), 0, false or no (off)")
    return BOOLEANS.get(word, False)


def _int(env: Mapping[str, str], name: str, default: int, minimum: int, maximum: int | None = None) -> int:
    value = env.get(name) or str(default)
    if not value.isdigit() or int(value) < minimum or (maximum is not None and int(value) > maximum):
        what = {0: "a non-negative integer", 1: "a positive integer"}.get(minimum, f"an integer >= {minimum}")
        if maximum == 65535:
            what = "a TCP port (1-65535)"
        raise SettingError(f"{name} must be {what}, got {value!r}")
    return int(value)


def parse_gpus(name: str, value: str, inherited: str | None) -> tuple[str, ...]:
    """The CUDA_VISIBLE_DEVICES entries the setting ``name=value`` means.

    Under an inherited CUDA_VISIBLE_DEVICES (a scheduler's assignment) an index is a position in it and
    an id must be one of its entries: a recipe never reaches for GPUs outside what it was given.

    >>> parse_gpus("TRAIN_GPUS", "0,1", None), parse_gpus("TRAIN_GPUS", "0,1", "5,6,7")
    (('0', '1'), ('5', '6'))
    """
    items = _gpu_list(name, value)
    if inherited is None:
        return items
    if not inherited:
        raise SettingError(
            "CUDA_VISIBLE_DEVICES is set but empty (no GPU visible): unset it, or set it to the GPUs this job may use"
        )
    given = _gpu_list("CUDA_VISIBLE_DEVICES", inherited)
    resolved = []
    for item in items:
        if item.isdigit():
            if int(item) >= len(given):
                raise SettingError(
                    f"{name}={value}: position {item} is beyond the inherited CUDA_VISIBLE_DEVICES={inherited} "
                    f"({len(given)} GPU(s)); {name} indexes into that list"
                )
            item = given[int(item)]
        elif item not in given:
            raise SettingError(f"{name}={value}: {item} is not in the inherited CUDA_VISIBLE_DEVICES={inherited}")
        resolved.append(item)
    return tuple(resolved)


def _gpu_list(name: str, value: str) -> tuple[str, ...]:
    items = tuple(value.split(","))
    if not all(GPU_ITEM.fullmatch(item) for item in items):
        raise SettingError(
            f"{name}={value!r} is not a comma-separated list of GPU indices or ids such as 0,1 or GPU-<uuid>"
        )
    twice = [item for item in items if items.count(item) > 1]
    if twice:
        raise SettingError(f"{name}={value!r} lists GPU {twice[0]} twice")
    return items


def split_words(name: str, value: str) -> tuple[str, ...]:
    """Split ``value`` into words as a shell does (quotes, backslashes; no expansion).

    >>> split_words("ROLLOUT_ARGS", "--a '{\\"b\\": 1}'")
    ('--a', '{"b": 1}')
    """
    try:
        return tuple(shlex.split(value))
    except ValueError as error:
        raise SettingError(f"{name}: cannot split into arguments: unmatched quote ({error})") from None


def _single_gpu(name: str, value: str, inherited: str | None, hint: str) -> tuple[str, ...]:
    if "," in value:
        raise SettingError(f"{name}={value!r} must be a single GPU{hint}")
    return parse_gpus(name, value, inherited)


def _no_proxy(env: Mapping[str, str]) -> str:
    hosts = [host for host in env.get("no_proxy", "").split(",") if host]
    hosts += [host for host in env.get("NO_PROXY", "").split(",") if host and host not in hosts]
    return ",".join(hosts)


@dataclass(frozen=True)
class Settings:
    """What one launcher run uses, checked.  ``layout`` is server | colocate | rollout | train."""

    script: str  # the entry script's name, for messages
    repo: Path
    layout: str
    task: str
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
    rollout_port: int = 8000
    group_port: int = 51216
    master_port: int = 29500
    master_addr: str = "127.0.0.1"
    nnodes: int = 1
    node_rank: int = 0
    rollout_timeout: int = 900
    stop_grace: int = 10
    log_tail_lines: int = 40
    resume: bool = False
    smoke: bool = False
    dry_run: bool = False
    no_proxy: str = ""  # the caller's no_proxy and NO_PROXY, merged
    vllm_port: str | None = None  # an inherited VLLM_PORT: vLLM's own variable, kept from the children
    smoke_dir: Path | None = None

    @property
    def world_size(self) -> int:
        """Training processes over all nodes."""
        return len(self.train_gpus) * self.nnodes

    @classmethod
    def from_env(cls, recipe: str, env: Mapping[str, str], repo: Path) -> Settings:
        """The settings of ``recipe`` (a key of :data:`RECIPES`) from ``env``, or :class:`SettingError`."""
        from .presets import preset_named

        task, layout = RECIPES[recipe]
        flags = {name: parse_bool(name, env.get(name, "")) for name in ("DRY_RUN", "SMOKE")}
        resume = env.get("RESUME", "")
        if resume != "auto" and resume.strip().lower() not in ("", "0", "false", "no"):
            raise SettingError(f"RESUME={resume!r} is not understood: RESUME=auto continues the run in OUTPUT_DIR")
        if layout == "multinode":
            layout = env.get("ROLE", "")
            if layout not in ("rollout", "train"):
                raise SettingError(
                    "set ROLE=rollout (on the rollout host) or ROLE=train (on each training node); see --help"
                    if not layout
                    else f"ROLE={layout!r} is neither rollout nor train"
                )
        preset = preset_named(task or env.get("TASK") or "countdown")
        _check_renamed_ports(env, layout)
        values = dict(
            script=f"{recipe}.sh",
            repo=repo,
            layout=layout,
            task=preset.name,
            model=env.get("MODEL") or preset.model,
            dataset=env.get("DATASET") or preset.dataset,
            val_dataset=env.get("VAL_DATASET", ""),
            output_dir=_output_dir(recipe, env, repo, flags["SMOKE"], resume == "auto"),
            report_to=env.get("REPORT_TO") or "tensorboard",
            vllm_max_model_len=_int(env, "VLLM_MAX_MODEL_LEN", preset.vllm_max_model_len, 1),
            vllm_gpu_memory_utilization=_fraction(env, "0.45" if layout == "colocate" else "0.9"),
            rollout_timeout=_int(env, "ROLLOUT_TIMEOUT", 900, 1),
            stop_grace=_int(env, "STOP_GRACE_SECONDS", 10, 0),
            log_tail_lines=_int(env, "LOG_TAIL_LINES", 40, 0),
            resume=resume == "auto",
            smoke=flags["SMOKE"],
            dry_run=flags["DRY_RUN"],
            no_proxy=_no_proxy(env),
            vllm_port=env.get("VLLM_PORT"),
        )
        values.update(_layout_values(layout, env))
        if values["smoke"]:
            values.update(_smoke_values(preset.smoke_data, values["output_dir"], recipe, values["val_dataset"]))
        return cls(**values)


def _fraction(env: Mapping[str, str], default: str) -> str:
    value = env.get("VLLM_GPU_MEMORY_UTILIZATION") or default
    try:
        ok = 0 < float(value) <= 1
    except ValueError:
        ok = False
    if not ok:
        raise SettingError(f"VLLM_GPU_MEMORY_UTILIZATION must be a fraction of the card in (0, 1], got {value!r}")
    return value


def _check_renamed_ports(env: Mapping[str, str], layout: str) -> None:
    # VLLM_PORT and VLLM_GROUP_PORT were these recipes' names for ROLLOUT_PORT and ROLLOUT_GROUP_PORT.
    # VLLM_PORT is also vLLM's own variable: an old habit must not silently keep working half-way.  Beside a
    # ROLLOUT_PORT, or in a recipe without a rollout port, it is someone else's (Kubernetes sets it for a
    # service named vllm): it is only kept from the children.
    if layout in ("server", "rollout", "train") and "VLLM_PORT" in env and not env.get("ROLLOUT_PORT"):
        raise SettingError(
            f"VLLM_PORT is set ({env['VLLM_PORT']!r}): the rollout HTTP port is now ROLLOUT_PORT (vLLM reads "
            "VLLM_PORT as the base of its internal ports, which breaks the server); "
            "use ROLLOUT_PORT=... and unset VLLM_PORT"
        )
    if "VLLM_GROUP_PORT" in env:
        raise SettingError(
            f"VLLM_GROUP_PORT is now ROLLOUT_GROUP_PORT; use ROLLOUT_GROUP_PORT={env['VLLM_GROUP_PORT']}"
        )


def _output_dir(recipe: str, env: Mapping[str, str], repo: Path, smoke: bool, resume: bool) -> Path:
    if env.get("OUTPUT_DIR"):
        return Path.cwd() / Path(env["OUTPUT_DIR"]).expanduser()
    if resume:
        raise SettingError("RESUME=auto needs OUTPUT_DIR: the folder of the run to continue")
    if recipe == "countdown_multinode":  # the same on every host
        return repo / "output" / recipe
    return repo / "output" / f"{recipe}{'-smoke' if smoke else ''}-{time.strftime('%Y%m%d-%H%M%S')}"


def _layout_values(layout: str, env: Mapping[str, str]) -> dict:
    inherited = env.get("CUDA_VISIBLE_DEVICES")
    if layout == "colocate":
        gpu = _single_gpu("GPU", env.get("GPU") or "0", inherited, " (the server recipes use more)")
        return dict(train_gpus=gpu, master_port=_int(env, "MASTER_PORT", 29500, 1, 65535))
    ports = dict(
        rollout_port=_int(env, "ROLLOUT_PORT", 8000, 1, 65535),
        group_port=_int(env, "ROLLOUT_GROUP_PORT", 51216, 1, 65535),
    )
    if layout == "server":
        ports["master_port"] = _int(env, "MASTER_PORT", 29500, 1, 65535)
    _distinct_ports({name: ports[key] for name, key in _PORT_NAMES.items() if key in ports})
    values = dict(ports, rollout_args=_rollout_args(env, layout))
    if layout == "server":
        rollout = _single_gpu("ROLLOUT_GPU", env.get("ROLLOUT_GPU") or "2", inherited, "")
        train = parse_gpus("TRAIN_GPUS", env.get("TRAIN_GPUS") or "0,1", inherited)
        shared = [gpu for gpu in rollout if gpu in train]
        if shared:
            raise SettingError(
                f"ROLLOUT_GPU={','.join(rollout)} and TRAIN_GPUS={','.join(train)} share GPU {shared[0]}: vLLM and "
                "the trainer cannot share a card in this layout"
            )
        return dict(values, rollout_gpus=rollout, train_gpus=train)
    if layout == "rollout":
        gpus = parse_gpus("ROLLOUT_GPUS", env.get("ROLLOUT_GPUS") or "0", inherited)
        return dict(values, rollout_gpus=gpus, rollout_host=env.get("ROLLOUT_BIND_HOST") or "0.0.0.0")
    return dict(values, **_train_node(env, inherited))


_PORT_NAMES = {"ROLLOUT_PORT": "rollout_port", "ROLLOUT_GROUP_PORT": "group_port", "MASTER_PORT": "master_port"}


def _distinct_ports(ports: dict[str, int]) -> None:
    seen: dict[int, str] = {}
    for name, port in ports.items():
        if port in seen:
            listed = ", ".join(f"{key}={value}" for key, value in ports.items())
            raise SettingError(f"{name}={port} clashes with {seen[port]} ({listed}): each needs its own port")
        seen[port] = name


def _rollout_args(env: Mapping[str, str], layout: str) -> tuple[str, ...]:
    words = split_words("ROLLOUT_ARGS", env.get("ROLLOUT_ARGS", "")) if layout != "train" else ()
    for word in words:
        if word.split("=", 1)[0] in ("--port", "--host"):
            where = "ROLLOUT_PORT and ROLLOUT_BIND_HOST" if layout == "rollout" else "ROLLOUT_PORT"
            raise SettingError(
                f"{word.split('=', 1)[0]} in ROLLOUT_ARGS would move the server away from where the launcher checks "
                f"it and the trainer connects; set {where} instead"
            )
    return words


def _train_node(env: Mapping[str, str], inherited: str | None) -> dict:
    host = env.get("ROLLOUT_HOST", "")
    if not host:
        raise SettingError("ROLE=train needs ROLLOUT_HOST (the host running ROLE=rollout)")
    nnodes = _int(env, "NNODES", 1, 1)
    rank = _int(env, "NODE_RANK", 0, 0)
    if rank >= nnodes:
        raise SettingError(f"NODE_RANK={rank} must be below NNODES={nnodes}")
    master_addr = env.get("MASTER_ADDR", "")
    if not master_addr and nnodes > 1:
        raise SettingError(f"NNODES={nnodes} needs MASTER_ADDR (the address of the NODE_RANK=0 training node)")
    return dict(
        rollout_host=host,
        nnodes=nnodes,
        node_rank=rank,
        master_addr=master_addr or "127.0.0.1",
        master_port=_int(env, "MASTER_PORT", 29500, 1, 65535),
        train_gpus=parse_gpus("TRAIN_GPUS", env.get("TRAIN_GPUS") or "0,1,2,3,4,5,6,7", inherited),
    )


def _smoke_values(smoke_data: str, output_dir: Path, recipe: str, val_dataset: str) -> dict:
    # Each multi-node host builds the (seeded, identical) tiny model in a folder of its own, so hosts sharing
    # OUTPUT_DIR do not race.
    smoke_dir = output_dir / ("smoke" if recipe != "countdown_multinode" else f"smoke-{socket.gethostname()}")
    generated = smoke_data == "generated"
    return dict(
        smoke_dir=smoke_dir,
        model=str(smoke_dir / "model"),
        dataset=str(smoke_dir / "data" / "train.jsonl") if generated else smoke_data,
        val_dataset=str(smoke_dir / "data" / "train.test.jsonl") if generated else val_dataset,
        vllm_max_model_len=1024,
        report_to="none",
    )
