"""The task presets: what each task trains with, so a task is one value here, not a copy of the recipes.

  countdown  the ms-swift Countdown GRPO example (3B, full fine-tune, lr 5e-7)
  gsm8k      the public "GRPO From Scratch" GSM8K run (1.5B, lr 5e-6, beta 0.04)

>>> PRESETS["gsm8k"].reference_completions
84
>>> COUNTDOWN.args[:3]
('--reward_funcs', 'external_countdown', 'think_answer_format')
"""

from __future__ import annotations

from dataclasses import dataclass

from .settings import SettingError

__all__ = ["COUNTDOWN", "COUNTDOWN_SYSTEM", "GSM8K", "PRESETS", "Preset", "preset_named"]

# The ms-swift Countdown example's system prompt (also shell/lib/launch.sh's, for the CPU scripts).
COUNTDOWN_SYSTEM = (
    "You are a helpful assistant. You first thinks about the reasoning process in the mind and then provides "
    "the user with the answer."
)


@dataclass(frozen=True)
class Preset:
    """One task's defaults; ``*_args`` are ``swift rlhf`` words, every flag once."""

    name: str  # countdown | gsm8k
    model: str  # default MODEL
    dataset: str  # default DATASET
    args: tuple[str, ...]  # rewards, prompt, lengths, generations, run length
    server_args: tuple[str, ...]  # batch, lr, beta: full fine-tune against a rollout server
    colocate_args: tuple[str, ...]  # batch, lr, beta: LoRA with vLLM colocated on one GPU
    reference_completions: int  # completions per optimizer step of the reference run
    eval_steps: int
    vllm_max_model_len: int  # prompt + completion must fit
    smoke_data: str  # "generated": made offline by the launcher; else a small hub sample


# ms-swift's Countdown GRPO example (docs: GRPO/GetStarted, "Countdown"), in 4.x flags:
# 2 GPUs x 8 x 8 = 128 completions (16 prompts of 8) per step, 3125 steps on 50000 rows.
COUNTDOWN = Preset(
    name="countdown",
    model="Qwen/Qwen2.5-3B-Instruct",
    dataset="zouxuhong/Countdown-Tasks-3to4#50000",
    args=(
        "--reward_funcs", "external_countdown", "think_answer_format",
        "--system", COUNTDOWN_SYSTEM,
        "--max_length", "2048",
        "--max_completion_length", "1024",
        "--num_generations", "8",
        "--num_train_epochs", "1",
    ),
    server_args=(
        "--per_device_train_batch_size", "8",
        "--per_device_eval_batch_size", "8",
        "--gradient_accumulation_steps", "8",
        "--learning_rate", "5e-7",
        "--beta", "0.001",
    ),
    # LoRA updates a small low-rank delta, so it takes a larger learning rate
    # than the full fine-tune.  Micro-batches of 4 keep the 150k-vocabulary
    # logits small: 4 x 16 = 64 completions (8 prompts of 8) per step.  With
    # eval on, the eval batch x processes must be a multiple of num_generations
    # (swift/rlhf_trainers/args_mixin.py, RolloutTrainerArgumentsMixin): 8, not 4.
    colocate_args=(
        "--per_device_train_batch_size", "4",
        "--per_device_eval_batch_size", "8",
        "--gradient_accumulation_steps", "16",
        "--learning_rate", "1e-5",
        "--beta", "0.001",
    ),
    reference_completions=128,
    eval_steps=500,  # the ms-swift doc evaluated every 500 steps
    vllm_max_model_len=4096,
    smoke_data="generated",
)

# The run of aburkov/theLMbook "GRPO_From_Scratch_Multi_GPU_DataParallel_Qwen_2_5_1_5B_Instruct":
# Qwen2.5-1.5B-Instruct, full fine-tune,
# 500 steps of 7 prompts x 12 generations, completions of 400 tokens, lr 5e-6,
# beta 0.04, clip epsilon 0.1.  2 GPUs x 6 x 7 = 84 = 7 x 12 completions per step.
# The GSM8K preprocessor puts the format instruction into each row: no --system.
GSM8K = Preset(
    name="gsm8k",
    model="Qwen/Qwen2.5-1.5B-Instruct",
    dataset="modelscope/gsm8k",
    args=(
        "--reward_funcs", "gsm8k_accuracy", "reasoning_answer_format",
        "--max_length", "1024",
        "--max_completion_length", "400",
        "--num_generations", "12",
        "--max_steps", "500",
        "--epsilon", "0.1",
    ),
    server_args=(
        "--per_device_train_batch_size", "6",
        "--per_device_eval_batch_size", "6",
        "--gradient_accumulation_steps", "7",
        "--learning_rate", "5e-6",
        "--beta", "0.04",
    ),
    # One GPU, LoRA with vLLM colocated, as the 1-GPU Countdown recipe: the same 84
    # completions per step as 6 x 14.  LoRA's best learning rate is about 10x
    # the full fine-tune's (Schulman et al., "LoRA Without Regret", 2025): 5e-5.
    colocate_args=(
        "--per_device_train_batch_size", "6",
        "--per_device_eval_batch_size", "12",
        "--gradient_accumulation_steps", "14",
        "--learning_rate", "5e-5",
        "--beta", "0.04",
    ),
    reference_completions=84,
    eval_steps=100,
    vllm_max_model_len=2048,
    smoke_data="modelscope/gsm8k#64",
)

PRESETS = {preset.name: preset for preset in (COUNTDOWN, GSM8K)}


def preset_named(name: str) -> Preset:
    """The preset of TASK ``name``, or :class:`SettingError` naming the tasks there are.

    >>> preset_named("chess")
    Traceback (most recent call last):
    ...
    swift_plugins.launch.settings.SettingError: TASK='chess' is not a task of these recipes: use countdown or gsm8k
    """
    if name not in PRESETS:
        raise SettingError(f"TASK={name!r} is not a task of these recipes: use {' or '.join(PRESETS)}")
    return PRESETS[name]
