"""Countdown: given 3-4 numbers and a target, an equation using each number once; exact rewards, data tools.

The modules: :mod:`.expression` (the answer grammar, exact arithmetic), :mod:`.rewards`, :mod:`.solver`,
:mod:`.generator`, :mod:`.audit`, :mod:`.cold_start`, :mod:`.data`, :mod:`.scoring`, :mod:`.cli`; the ms-swift
adapter is :mod:`.swift_adapter`. ``SPEC`` is the task as the registry (:mod:`swift_plugins.tasks`) gives it.
"""

from ..tasks import Preset, TaskSpec
from .data import COUNTDOWN, SYSTEM_PROMPT

__all__ = ["SPEC"]

# ms-swift's Countdown GRPO example (docs: BestPractices/GRPO.md, "Complete GRPO Experimental Workflow"), in 4.x
# flags: 2 GPUs x 8 x 8 = 128 completions (16 prompts of 8) per step, 3125 steps on 50000 rows.
PRESET = Preset(
    model="Qwen/Qwen2.5-3B-Instruct",
    dataset="zouxuhong/Countdown-Tasks-3to4#50000",
    args=(
        "--reward_funcs", "external_countdown", "think_answer_format",
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
    # LoRA updates a small low-rank delta, so it takes a larger learning rate than the full fine-tune. Micro-batches
    # of 4 keep the 150k-vocabulary logits small: 4 x 16 = 64 completions (8 prompts of 8) per step. With eval on,
    # the eval batch x processes must be a multiple of num_generations (swift/rlhf_trainers/args_mixin.py,
    # RolloutTrainerArgumentsMixin): 8, not 4.
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
    smoke_data=("swift_plugins.countdown", "generate", "--num", "64", "--test-size", "16", "--seed", "0",
                "--jobs", "1", "--quiet"),
    # ms-swift's Countdown run oscillated around step 200 with lr 1e-6 and beta 0.04
    collapse=("1e-6", "0.04"),
)  # fmt: skip

SPEC = TaskSpec(
    name="countdown",
    data=COUNTDOWN,
    scoring="swift_plugins.countdown.scoring",
    adapter="swift_plugins.countdown.swift_adapter",
    preset=PRESET,
    system_prompt=SYSTEM_PROMPT,
    held_out_hint="held-out puzzles, e.g. python -m swift_plugins.countdown generate --num 1000 --seed 1 "
    "--out held-out.jsonl",
)
