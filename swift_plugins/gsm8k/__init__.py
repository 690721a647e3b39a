"""GSM8K: grade-school math word problems with exact final-number rewards.

The modules: :mod:`.answer` (final-number extraction, exact rationals), :mod:`.rewards`, :mod:`.data`,
:mod:`.scoring` (with lm-evaluation-harness's metrics), :mod:`.cli`. The reference data is ``openai/gsm8k``
(``modelscope/gsm8k``), config ``main``. ``SPEC`` is the task as the registry (:mod:`swift_plugins.tasks`) gives
it. No CPU demo: a 135M model cannot learn grade-school math word problems in minutes.
"""

from ..core.task import Preset, Reward, TaskSpec
from .data import GSM8K

__all__ = ["SPEC"]

# The run of aburkov/theLMbook "GRPO_From_Scratch_Multi_GPU_DataParallel_Qwen_2_5_1_5B_Instruct": Qwen2.5-1.5B-Instruct,
# full fine-tune, 500 steps of 7 prompts x 12 generations, completions of 400 tokens, lr 5e-6, beta 0.04, clip
# epsilon 0.1. 2 GPUs x 6 x 7 = 84 = 7 x 12 completions per step.
PRESET = Preset(
    model="Qwen/Qwen2.5-1.5B-Instruct",
    dataset="modelscope/gsm8k",
    args=(
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
    # One GPU, LoRA with vLLM colocated, as the 1-GPU Countdown recipe: the same 84 completions per step as 6 x 14.
    # LoRA's best learning rate is about 10x the full fine-tune's (Schulman et al., "LoRA Without Regret", 2025).
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
)  # fmt: skip

REWARDS = (
    Reward("gsm8k_accuracy", "swift_plugins.gsm8k.rewards:gsm8k_accuracy_reward", "Gsm8kAccuracy", accuracy=True),
    Reward("reasoning_answer_format", "swift_plugins.gsm8k.rewards:reasoning_answer_format_reward",
           "ReasoningAnswerFormat"),
)  # fmt: skip

SPEC = TaskSpec(
    name="gsm8k",
    data=GSM8K,
    rewards=REWARDS,
    scoring="swift_plugins.gsm8k.scoring",
    preset=PRESET,
    system_prompt=None,  # each row carries its format instruction as a system message
    held_out_hint="a local copy of GSM8K's test split (question/answer rows, see the README)",
    cli="swift_plugins.gsm8k.cli",
    folder_subset="swift_plugins.gsm8k.data:folder_subset",
)
