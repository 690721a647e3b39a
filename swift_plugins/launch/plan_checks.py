"""Checks of the commands themselves, before anything starts (DRY_RUN included): settings that would only
fail minutes later, inside ms-swift or vLLM, fail here in one line.

>>> from .flags import Flags
>>> check_batches(Flags(["--per_device_train_batch_size", "8", "--gradient_accumulation_steps", "8",
...                      "--num_generations", "7", "--eval_strategy", "no"]), 2, set())
Traceback (most recent call last):
...
swift_plugins.launch.settings.SettingError: --num_generations 7 does not divide the 128 completions of a generation ...
"""

from __future__ import annotations

import re
from pathlib import Path

from .commands import Command
from .console import Console
from .flags import Flags
from .presets import PRESETS
from .settings import SettingError, Settings

__all__ = ["REPORT_TO_VALUES", "check_batches", "check_lengths", "check_paths", "check_plan", "check_report_to"]

# transformers' INTEGRATION_TO_CALLBACK (transformers/integrations/integration_utils.py; "... is not supported"
# otherwise) plus its "all" and "none"; ms-swift passes --report_to through to TrainingArguments.
REPORT_TO_VALUES = (
    "azure_ml", "clearml", "codecarbon", "comet_ml", "dagshub", "dvclive", "flyte", "kubeflow", "mlflow",
    "neptune", "swanlab", "tensorboard", "trackio", "wandb", "all", "none",
)  # fmt: skip
LOCAL_PREFIXES = ("/", "./", "../", "~")
DATA_SUFFIXES = (".jsonl", ".json", ".parquet", ".csv")


def check_plan(
    settings: Settings, trainer: Command | None, rollout: Command | None, user: set[str], console: Console
) -> None:
    """Every check that needs no GPU, no port and no ms-swift; ``user`` names the flags the user passed."""
    plugin = settings.repo / "swift_plugins" / "plugin.py"
    if not plugin.is_file():
        raise SettingError(f"plugin not found: {plugin} (incomplete checkout?)")
    flags = Flags(trainer.argv[2:]) if trainer else None
    if flags is not None:
        check_report_to(flags, user)
        check_batches(flags, settings.world_size, user)
        check_paths(settings, flags, user, console)
    model_len = Flags(rollout.argv[2:]) if rollout else flags
    if flags is not None and model_len is not None:
        check_lengths(flags, model_len, settings.vllm_max_model_len)


def _origin(flag: str, value: object, user: set[str], setting: str) -> str:
    return f"--{flag} {value}" if flag in user or not setting else f"{setting}={value}"


def check_report_to(flags: Flags, user: set[str]) -> None:
    """Every --report_to value must be one that transformers' Trainer knows."""
    for value in flags.values("report_to") or []:
        if value not in REPORT_TO_VALUES:
            raise SettingError(
                f"{_origin('report_to', value, user, 'REPORT_TO')} is not a logger ms-swift accepts (transformers "
                f"refuses it at start-up): use one of {', '.join(REPORT_TO_VALUES)}"
            )


def _int(flags: Flags, name: str, default: int | None = None) -> int | None:
    value = flags.value(name)
    if value is None:
        return default
    if not value.isdigit() or int(value) == 0:
        raise SettingError(f"--{name} must be a positive integer, got {value!r}")
    return int(value)


def check_batches(flags: Flags, world: int, user: set[str]) -> None:
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


def check_lengths(trainer: Flags, server: Flags, setting: int) -> None:
    """vLLM must hold a whole sequence: a prompt (ms-swift keeps prompts within --max_length, resampling or
    truncating longer ones: swift/rlhf_trainers/rollout_mixin.py) plus --max_completion_length."""
    model_len = _int(server, "vllm_max_model_len")
    prompt, completion = _int(trainer, "max_length"), _int(trainer, "max_completion_length", 512)
    if model_len is None or prompt is None or model_len >= prompt + completion:
        return
    name = f"VLLM_MAX_MODEL_LEN={model_len}" if model_len == setting else f"--vllm_max_model_len {model_len}"
    raise SettingError(
        f"{name} is shorter than a prompt of up to --max_length {prompt} plus --max_completion_length {completion} "
        f"({prompt + completion} tokens); set VLLM_MAX_MODEL_LEN={prompt + completion} or more, or lower those flags"
    )


def _is_local(value: str) -> bool:
    return value.startswith(LOCAL_PREFIXES) or value.endswith(DATA_SUFFIXES)


def check_paths(settings: Settings, flags: Flags, user: set[str], console: Console) -> None:
    """Local models and data files must exist, and every row of a local data file must be one the task's
    preprocessor accepts (the same check_row), or the run would fail after loading the model."""
    if settings.smoke:  # the launcher builds them
        return
    model = flags.value("model") or ""
    if _is_local(model) and not Path(model).expanduser().exists():
        raise SettingError(
            f"{_origin('model', model, user, 'MODEL')}: no such folder; point MODEL at a model folder or a hub id "
            f"such as {PRESETS[settings.task].model}"
        )
    for flag, setting in (("dataset", "DATASET"), ("val_dataset", "VAL_DATASET")):
        for value in flags.values(flag) or []:
            path = Path(re.sub(r"#\d+$", "", value)).expanduser()
            if not _is_local(str(path)):
                continue
            name = _origin(flag, value, user, setting)
            if not path.exists():
                raise SettingError(
                    f"{name}: no such file; point {setting} at a local .jsonl/.json/.parquet file or a hub dataset id"
                )
            if path.is_file():
                _check_rows(settings.task, path, name, console)


def _check_rows(task: str, path: Path, name: str, console: Console) -> None:
    try:  # lazily: the task layer (NumPy for Countdown's solver) is not needed for a dry run of hub data
        from ..core.errors import DataError
        from ..core.files import read_rows

        if task == "countdown":
            from ..countdown.data import COUNTDOWN as TASK
        else:
            from ..gsm8k.data import GSM8K as TASK
        rows = iter(read_rows(path))
        start = next(rows, (str(path), {}))
        TASK.check_columns(start[1], str(path))
        for where, row in [start, *rows]:
            TASK.check_row(row, where)
    except ImportError as error:
        console.note(f"{name}: rows not checked ({error}; the launcher's python lacks it)")
    except DataError as error:
        raise SettingError(f"{name}: {error}; fix the file, or point the setting at {task} data") from None
