"""Preflight: what would fail only minutes later, inside ms-swift or vLLM, fails here in one line.

:func:`check_plan` checks the commands themselves (DRY_RUN included): paths, the rows of local data, batch
arithmetic, lengths, the logger. :func:`check_host` checks this host just before anything starts (skipped by
DRY_RUN): the GPUs, ms-swift's interpreter, the stack it holds and the modules the run imports (all through
:mod:`swift_plugins.launch.host`), free ports.

>>> from ..core.flags import Flags
>>> check_batches(Flags(["--per_device_train_batch_size", "8", "--gradient_accumulation_steps", "8",
...                      "--num_generations", "7", "--eval_strategy", "no"]), 2)
Traceback (most recent call last):
...
swift_plugins.core.errors.SettingError: --num_generations 7 does not divide the 128 completions of a generation ...
>>> port_is_free(0, reuse=False)  # port 0: the kernel picks a free one
True
"""

from __future__ import annotations

import re
import socket
from pathlib import Path

from ..core.console import Console
from ..core.errors import DataError, SettingError
from ..core.files import read_rows
from ..core.flags import Flags
from ..core.settings import parse_int
from .commands import Plan
from .host import check_gpus, check_stack, check_swift, swift_interpreter
from .settings import Settings

__all__ = ["REPORT_TO_VALUES", "check_batches", "check_host", "check_plan", "check_port", "port_is_free"]

# transformers' INTEGRATION_TO_CALLBACK (transformers/integrations/integration_utils.py; "... is not supported"
# otherwise) plus its "all" and "none"; ms-swift passes --report_to through to TrainingArguments.
REPORT_TO_VALUES = (
    "azure_ml", "clearml", "codecarbon", "comet_ml", "dagshub", "dvclive", "flyte", "kubeflow", "mlflow",
    "neptune", "swanlab", "tensorboard", "trackio", "wandb", "all", "none",
)  # fmt: skip
LOCAL_PREFIXES = ("/", "./", "../", "~")
DATA_SUFFIXES = (".jsonl", ".json", ".parquet", ".csv")


def check_plan(plan: Plan, console: Console) -> None:
    """Every check that needs no GPU, no port and no ms-swift."""
    plugin = plan.settings.repo / "swift_plugins" / "plugin.py"
    if not plugin.is_file():
        raise SettingError(f"plugin not found: {plugin} (incomplete checkout?)")
    if plan.trainer is None:
        return
    for value in plan.flags.values("report_to") or []:
        if value not in REPORT_TO_VALUES:
            raise SettingError(
                f"{plan.origin('report_to', value, 'REPORT_TO')} is not a logger ms-swift accepts (transformers "
                f"refuses it at start-up): use one of {', '.join(REPORT_TO_VALUES)}"
            )
    check_batches(plan.flags, plan.settings.world_size)
    _check_reward_weights(plan.flags)
    _check_paths(plan, console)
    _check_lengths(plan)


def _int(flags: Flags, name: str, default: int | None = None) -> int | None:
    value = flags.value(name)
    return default if value is None else parse_int(f"--{name}", value)


def check_batches(flags: Flags, world: int) -> None:
    """The batch arithmetic ms-swift checks only after the model is loaded (and the rollout server is up).

    Mirrors swift/rlhf_trainers/args_mixin.py, RolloutTrainerArgumentsMixin._init_generation_batch_params: the
    generation batch (per device x processes x steps_per_generation, which defaults to the accumulation) and,
    with eval on, the global eval batch (per device x processes) must be multiples of num_generations.
    """
    per_device = _int(flags, "per_device_train_batch_size", 1)
    global_batch = per_device * world
    batch = _int(flags, "generation_batch_size")
    steps = _int(flags, "steps_per_generation")
    if batch is not None and steps is not None and batch != global_batch * steps:
        raise SettingError(
            f"--generation_batch_size {batch} must equal per_device_train_batch_size x processes x "
            f"steps_per_generation = {global_batch * steps}; pass only one of the two"
        )
    if batch is not None and batch % global_batch:
        raise SettingError(f"--generation_batch_size {batch} must be a multiple of the global batch {global_batch}")
    steps = steps or (batch // global_batch if batch else _int(flags, "gradient_accumulation_steps", 1))
    batch = global_batch * steps
    generations = _int(flags, "num_generations", 8)  # ms-swift's default
    if generations > 1 and batch % generations:
        divisors = ", ".join(str(n) for n in range(2, batch + 1) if batch % n == 0)
        raise SettingError(
            f"--num_generations {generations} does not divide the {batch} completions of a generation batch "
            f"({world} training processes x {per_device} per device x {steps} steps per generation); ms-swift "
            "refuses this only after loading the model (swift/rlhf_trainers/args_mixin.py, "
            f"_init_generation_batch_params): use --num_generations {divisors.split(', ')[-1]} or another divisor "
            f"of {batch} ({divisors}), or change --per_device_train_batch_size / --gradient_accumulation_steps"
        )
    ratio = float(flags.value("split_dataset_ratio") or 0)
    evaluates = flags.value("eval_strategy") != "no" and (flags.value("val_dataset") or ratio > 0)
    eval_generations = _int(flags, "num_generations_eval") or generations
    eval_batch = _int(flags, "per_device_eval_batch_size", 1) * world
    if generations > 1 and evaluates and eval_batch % eval_generations:
        raise SettingError(
            f"the global eval batch {world} x --per_device_eval_batch_size {eval_batch // world} = {eval_batch} is "
            f"not a multiple of {eval_generations} generations; ms-swift refuses this at start-up (swift/rlhf_trainers/"
            "args_mixin.py): choose a --per_device_eval_batch_size that makes it one, or VAL_DATASET=none"
        )


def _check_reward_weights(flags: Flags) -> None:
    # ms-swift compares the counts only once the model is loaded (swift/rlhf_trainers/grpo_trainer.py).
    rewards, weights = flags.values("reward_funcs") or [], flags.values("reward_weights")
    if weights is not None and len(weights) != len(rewards):
        raise SettingError(
            f"--reward_weights {' '.join(weights)} gives {len(weights)} weight(s) to the {len(rewards)} rewards of "
            f"--reward_funcs {' '.join(rewards)}: one weight a reward, in that order"
        )


def _check_lengths(plan: Plan) -> None:
    # vLLM must hold a whole sequence: a prompt (ms-swift keeps prompts within --max_length, resampling or
    # truncating longer ones: swift/rlhf_trainers/rollout_mixin.py) plus --max_completion_length.
    engine = Flags(plan.rollout.argv[2:]) if plan.rollout else plan.flags
    model_len = _int(engine, "vllm_max_model_len")
    prompt, completion = _int(plan.flags, "max_length"), _int(plan.flags, "max_completion_length", 512)
    if model_len is None or prompt is None or model_len >= prompt + completion:
        return
    setting = plan.settings.vllm_max_model_len
    name = f"VLLM_MAX_MODEL_LEN={model_len}" if model_len == setting else f"--vllm_max_model_len {model_len}"
    raise SettingError(
        f"{name} is shorter than a prompt of up to --max_length {prompt} plus --max_completion_length {completion} "
        f"({prompt + completion} tokens); set VLLM_MAX_MODEL_LEN={prompt + completion} or more, or lower those flags"
    )


def _is_local(value: str) -> bool:
    return value.startswith(LOCAL_PREFIXES) or value.endswith(DATA_SUFFIXES)


def _check_paths(plan: Plan, console: Console) -> None:
    # Local models and data files must exist, and every row of a local data file must be one the task's
    # preprocessor accepts (the same check_row), or the run would fail after loading the model.
    settings = plan.settings
    if settings.smoke:  # the launcher builds them
        return
    model = plan.flags.value("model") or ""
    if _is_local(model) and not Path(model).expanduser().exists():
        raise SettingError(
            f"{plan.origin('model', model, 'MODEL')}: no such folder; point MODEL at a model folder or a hub id "
            f"such as {settings.task.preset.model}"
        )
    for flag, setting in (("dataset", "DATASET"), ("val_dataset", "VAL_DATASET")):
        for value in plan.flags.values(flag) or []:
            if settings.selection is not None and value == str(settings.selected):  # written by the selection
                value = settings.dataset
            path = Path(re.sub(r"#\d+$", "", value)).expanduser()
            if not _is_local(str(path)):
                continue
            name = plan.origin(flag, value, setting)
            if not path.exists():
                raise SettingError(
                    f"{name}: no such file; point {setting} at a local .jsonl/.json/.parquet file or a hub dataset id"
                )
            if path.is_file():
                _check_rows(settings, path, name, console)


def _check_rows(settings: Settings, path: Path, name: str, console: Console) -> None:
    task = settings.task.data
    try:
        rows = iter(read_rows(path))
        start = next(rows, (str(path), {}))
        task.check_columns(start[1], str(path))
        for where, row in [start, *rows]:
            task.check_row(row, where)
    except ImportError as error:  # pyarrow for a .parquet file
        console.note(f"{name}: rows not checked ({error}; the launcher's python lacks it)")
    except DataError as error:
        raise SettingError(
            f"{name}: {error}; fix the file, or point the setting at {settings.task.name} data"
        ) from None


def check_host(plan: Plan, console: Console) -> str:
    """The GPUs, the imports of swift's interpreter (returned) and the ports of this host."""
    settings = plan.settings
    gpus = {setting.name: values for setting, values in ((settings.layout.rollout_gpus, settings.rollout_gpus),
                                                          (settings.layout.train_gpus, settings.train_gpus)) if setting}
    check_gpus(gpus)
    use_vllm = plan.rollout is not None or (plan.flags.value("use_vllm") or "").lower() in ("true", "1")
    modules = ["vllm"] * use_vllm + ["deepspeed"] * bool(plan.flags.value("deepspeed"))
    loggers = {name: f"REPORT_TO={name}" for name in ("wandb", "swanlab") if name in (plan.flags.values("report_to")
                                                                                     or [])}  # fmt: skip
    check_stack(swift_interpreter()[1], settings.repo, {"swift", "torch", *modules, *["cuda"] * bool(gpus)})
    python = check_swift([*modules, *loggers], loggers, settings.repo, console)
    for port in settings.layout.ports:
        # Only node rank 0 hosts torchrun's rendezvous store.
        if port.bound and (port.name != "MASTER_PORT" or settings.node_rank == 0):
            check_port(port.name, settings.port(port.name), port.reuse, port.what)
    return python


def port_is_free(port: int, reuse: bool) -> bool:
    """Whether ``port`` is bindable on all interfaces.

    ``reuse=False`` binds like ms-swift's find_free_port (no SO_REUSEADDR): `swift rollout` calls it on --port
    and silently moves to another port when the bind fails, even for sockets in TIME_WAIT, and the trainer
    would then talk to the wrong port.  ``reuse=True`` is for listeners that set SO_REUSEADDR (torch's
    TCPStore: the NCCL group, torchrun).
    """
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        if reuse:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("", port))
        except OSError:
            return False
    return True


def check_port(name: str, port: int, reuse: bool, what: str) -> None:
    """The port setting ``name`` must be free."""
    if not port_is_free(port, reuse):
        raise SettingError(f"{name}={port} is already in use on this host ({what}); free it or choose another {name}")
