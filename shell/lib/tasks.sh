# shellcheck shell=bash disable=SC2034 # the TASK_* globals are read by the other files
#
# shell/lib/tasks.sh: the task presets. Sourced by launch.sh.
# load_task NAME fills the TASK_* globals; every recipe builds its flags from
# them, so a task is one case here, not a copy of the recipes.
#
#   countdown  the ms-swift Countdown GRPO example (3B, full fine-tune, lr 5e-7)
#   gsm8k      the public "GRPO From Scratch" GSM8K run (1.5B, lr 5e-6, beta 0.04)

TASK_NAME=""                  # countdown | gsm8k
TASK_MODEL=""                 # default MODEL
TASK_DATASET=""               # default DATASET
TASK_ARGS=()                  # rewards, prompt, lengths, generations, run length
TASK_SERVER_ARGS=()           # batch, lr, beta: full fine-tune against a rollout server
TASK_COLOCATE_ARGS=()         # batch, lr, beta: LoRA with vLLM colocated on one GPU
TASK_REFERENCE_COMPLETIONS=0  # completions per optimizer step of the reference run
TASK_EVAL_STEPS=0
TASK_VLLM_MAX_MODEL_LEN=0     # prompt + completion must fit
TASK_SMOKE_DATA=""            # countdown: generated offline; else a small hub sample

load_task() { # NAME
    case $1 in
        countdown)
            # ms-swift's Countdown GRPO example (docs: GRPO/GetStarted, "Countdown"), in 4.x flags:
            # 2 GPUs x 8 x 8 = 128 completions (16 prompts of 8) per step, 3125 steps on 50000 rows.
            TASK_MODEL=$COUNTDOWN_MODEL
            TASK_DATASET=$COUNTDOWN_DATASET
            TASK_ARGS=(
                --reward_funcs external_countdown think_answer_format
                --system "$COUNTDOWN_SYSTEM"
                --max_length 2048
                --max_completion_length 1024
                --num_generations 8
                --num_train_epochs 1
            )
            TASK_SERVER_ARGS=(
                --per_device_train_batch_size 8
                --per_device_eval_batch_size 8
                --gradient_accumulation_steps 8
                --learning_rate 5e-7
                --beta 0.001
            )
            # LoRA updates a small low-rank delta, so it takes a larger learning rate
            # than the full fine-tune.  Micro-batches of 4 keep the 150k-vocabulary
            # logits small: 4 x 16 = 64 completions (8 prompts of 8) per step.  With
            # eval on, the eval batch x processes must be a multiple of num_generations
            # (swift/rlhf_trainers/args_mixin.py, RolloutTrainerArgumentsMixin): 8, not 4.
            TASK_COLOCATE_ARGS=(
                --per_device_train_batch_size 4
                --per_device_eval_batch_size 8
                --gradient_accumulation_steps 16
                --learning_rate 1e-5
                --beta 0.001
            )
            TASK_REFERENCE_COMPLETIONS=128
            TASK_EVAL_STEPS=500 # the ms-swift doc evaluated every 500 steps
            TASK_VLLM_MAX_MODEL_LEN=4096
            TASK_SMOKE_DATA=generated
            ;;
        gsm8k)
            # The run of aburkov/theLMbook "GRPO_From_Scratch_Multi_GPU_DataParallel_Qwen_2_5_1_5B_Instruct"
            # (the code the seed document annotates): Qwen2.5-1.5B-Instruct, full fine-tune,
            # 500 steps of 7 prompts x 12 generations, completions of 400 tokens, lr 5e-6,
            # beta 0.04, clip epsilon 0.1.  2 GPUs x 6 x 7 = 84 = 7 x 12 completions per step.
            # The GSM8K preprocessor puts the format instruction into each row: no --system.
            TASK_MODEL=Qwen/Qwen2.5-1.5B-Instruct
            TASK_DATASET=modelscope/gsm8k
            TASK_ARGS=(
                --reward_funcs gsm8k_accuracy reasoning_answer_format
                --max_length 1024
                --max_completion_length 400
                --num_generations 12
                --max_steps 500
                --epsilon 0.1
            )
            TASK_SERVER_ARGS=(
                --per_device_train_batch_size 6
                --per_device_eval_batch_size 6
                --gradient_accumulation_steps 7
                --learning_rate 5e-6
                --beta 0.04
            )
            # One GPU, LoRA (the seed document trained GSM8K with LoRA): the same 84
            # completions per step as 6 x 14.  LoRA's best learning rate is about 10x
            # the full fine-tune's (Schulman et al., "LoRA Without Regret", 2025): 5e-5.
            TASK_COLOCATE_ARGS=(
                --per_device_train_batch_size 6
                --per_device_eval_batch_size 12
                --gradient_accumulation_steps 14
                --learning_rate 5e-5
                --beta 0.04
            )
            TASK_REFERENCE_COMPLETIONS=84
            TASK_EVAL_STEPS=100
            TASK_VLLM_MAX_MODEL_LEN=2048
            TASK_SMOKE_DATA='modelscope/gsm8k#64'
            ;;
        *) die "TASK='$1' is not a task of these recipes (countdown, gsm8k)" ;;
    esac
    TASK_NAME=$1
}
