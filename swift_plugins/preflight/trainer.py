"""The trainer's flags, checked as ms-swift and transformers would check them only minutes later: the logger, the
batch arithmetic, the reward weights, the lengths vLLM holds. Pure: flags in, one :class:`SettingError` line out.

>>> check_batches(Flags(["--per_device_train_batch_size", "8", "--gradient_accumulation_steps", "8",
...                      "--num_generations", "7", "--eval_strategy", "no"]), 2)
Traceback (most recent call last):
...
swift_plugins.core.errors.SettingError: --num_generations 7 does not divide the 128 completions of a generation ...
>>> check_lengths(Flags(["--max_length", "512", "--max_completion_length", "512"]), Flags(), 1024)  # no vLLM length
"""

from __future__ import annotations

from collections.abc import Callable

from ..core.errors import SettingError
from ..core.flags import Flags
from ..core.objective import LOSS_TYPES
from ..core.settings import parse_int

__all__ = [
    "REPORT_TO_VALUES", "Origin", "check_batches", "check_lengths", "check_objective", "check_report_to",
    "check_reward_weights", "check_trainer_flags",
]  # fmt: skip

# transformers' INTEGRATION_TO_CALLBACK (transformers/integrations/integration_utils.py; "... is not supported"
# otherwise) plus its "all" and "none"; ms-swift passes --report_to through to TrainingArguments.
REPORT_TO_VALUES = (
    "azure_ml", "clearml", "codecarbon", "comet_ml", "dagshub", "dvclive", "flyte", "kubeflow", "mlflow",
    "neptune", "swanlab", "tensorboard", "trackio", "wandb", "all", "none",
)  # fmt: skip
# (flag, value, setting) -> how the user set ``--flag value``: as that flag, or as ``SETTING=value``
Origin = Callable[[str, object, str], str]


def _int(flags: Flags, name: str, default: int | None = None) -> int | None:
    value = flags.value(name)
    return default if value is None else parse_int(f"--{name}", value)


def check_report_to(flags: Flags, origin: Origin) -> None:
    """Every ``--report_to`` value is a logger transformers knows."""
    for value in flags.values("report_to") or []:
        if value not in REPORT_TO_VALUES:
            raise SettingError(
                f"{origin('report_to', value, 'REPORT_TO')} is not a logger ms-swift accepts (transformers "
                f"refuses it at start-up): use one of {', '.join(REPORT_TO_VALUES)}"
            )


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


def check_reward_weights(flags: Flags) -> None:
    """One ``--reward_weights`` weight a reward of ``--reward_funcs``, which ms-swift compares only once the model is
    loaded (swift/rlhf_trainers/grpo_trainer.py)."""
    rewards, weights = flags.values("reward_funcs") or [], flags.values("reward_weights")
    if weights is not None and len(weights) != len(rewards):
        raise SettingError(
            f"--reward_weights {' '.join(weights)} gives {len(weights)} weight(s) to the {len(rewards)} rewards of "
            f"--reward_funcs {' '.join(rewards)}: one weight a reward, in that order"
        )


def check_objective(flags: Flags, origin: Origin) -> None:
    """GRPO's objective (:class:`~swift_plugins.core.objective.Objective`): a loss ms-swift knows, which it checks
    only at the first loss, after loading the model and sampling; CISPO's cap of a token's weight (ms-swift's
    default 0.2 would make every weight 0.2); a correction of vLLM's sampling where vLLM samples (elsewhere ms-swift
    skips it without a word).

    >>> check_objective(Flags(["--loss_type", "cispo"]), lambda flag, value, setting: f"{setting}={value}")
    Traceback (most recent call last):
    ...
    swift_plugins.core.errors.SettingError: LOSS_TYPE=cispo caps each token's weight at --epsilon_high, unset \
(ms-swift's 0.2): every weight would be that, not 1; set EPSILON_HIGH=5 (ms-swift's docs) or another cap of 1 or more
    """
    loss = flags.value("loss_type") or "grpo"
    if loss not in LOSS_TYPES:
        raise SettingError(f"{origin('loss_type', loss, 'LOSS_TYPE')} is not a loss of ms-swift 4.6, which refuses it "
                           f"only at the first loss, after loading the model: use {', '.join(LOSS_TYPES)}")  # fmt: skip
    cap = flags.value("epsilon_high")
    if loss == "cispo" and (cap is None or _below_one(cap)):
        given = "unset (ms-swift's 0.2)" if cap is None else origin("epsilon_high", cap, "EPSILON_HIGH")
        raise SettingError(f"{origin('loss_type', loss, 'LOSS_TYPE')} caps each token's weight at --epsilon_high, "
                           f"{given}: every weight would be that, not 1; set EPSILON_HIGH=5 (ms-swift's docs) or "
                           "another cap of 1 or more")  # fmt: skip
    mode = flags.value("rollout_importance_sampling_mode")
    if mode is not None and flags.value("use_vllm") != "true":
        raise SettingError(f"{origin('rollout_importance_sampling_mode', mode, 'ROLLOUT_CORRECTION')} corrects "
                           "vLLM's sampling, and vLLM does not sample for this trainer (--use_vllm false): ms-swift "
                           "would skip it without a word; set ROLLOUT_CORRECTION=off")  # fmt: skip


def _below_one(text: str) -> bool:
    try:
        return float(text) < 1
    except ValueError:  # not a number: ms-swift's own parse refuses it (preflight.host.check_swift_flags)
        return False


def check_trainer_flags(flags: Flags, world: int, origin: Origin) -> None:
    """What ms-swift checks of a trainer's flags only once its model is loaded: the logger, the batch arithmetic of
    ``world`` training processes, a weight a reward, GRPO's objective."""
    check_report_to(flags, origin)
    check_batches(flags, world)
    check_reward_weights(flags)
    check_objective(flags, origin)


def check_lengths(flags: Flags, engine: Flags, setting: int) -> None:
    """vLLM (whose flags are ``engine``: the rollout server's, else the trainer's) holds a whole sequence of the
    trainer (``flags``); ``setting`` is VLLM_MAX_MODEL_LEN, named when the length is its value.

    A prompt is up to --max_length (ms-swift resamples or truncates longer ones: swift/rlhf_trainers/rollout_mixin.py)
    plus --max_completion_length.
    """
    model_len = _int(engine, "vllm_max_model_len")
    prompt, completion = _int(flags, "max_length"), _int(flags, "max_completion_length", 512)
    if model_len is None or prompt is None or model_len >= prompt + completion:
        return
    name = f"VLLM_MAX_MODEL_LEN={model_len}" if model_len == setting else f"--vllm_max_model_len {model_len}"
    raise SettingError(
        f"{name} is shorter than a prompt of up to --max_length {prompt} plus --max_completion_length {completion} "
        f"({prompt + completion} tokens); set VLLM_MAX_MODEL_LEN={prompt + completion} or more, or lower those flags"
    )
