#!/usr/bin/env bash
# countdown_1gpu.sh: GRPO on Countdown with ms-swift 4.x on a single GPU (24-80 GB).
#
# Layout: one process on GPU $GPU holds both the trainer (LoRA) and vLLM
# (--vllm_mode colocate).  vLLM takes ~45% of the card while generating and
# sleeps (--sleep_level 1) during the update; model and optimizer are offloaded
# to CPU while vLLM generates.  No server, no extra port.
#
# Usage:
#   shell/countdown_1gpu.sh [extra swift rlhf flags...]
#   DRY_RUN=1 shell/countdown_1gpu.sh       print the command, start nothing
#   shell/countdown_1gpu.sh --help          this text
# Extra flags are appended to `swift rlhf`; argparse keeps the last value of a
# repeated flag, so they override the defaults (e.g. --lora_rank 16).
#
# Environment (default):
#   MODEL           Qwen/Qwen2.5-3B-Instruct
#   DATASET         zouxuhong/Countdown-Tasks-3to4#50000
#   OUTPUT_DIR      <repo>/output/countdown_1gpu-<YYYYmmdd-HHMMSS>
#                   (train.log, commands.sh; checkpoints in v0-*/)
#   GPU             0            the card to use
#   MASTER_PORT     29500        torchrun rendezvous port
#   VLLM_MAX_MODEL_LEN 4096
#   VLLM_GPU_MEMORY_UTILIZATION 0.45   lower it on a 24 GB card if training OOMs
#   REPORT_TO       tensorboard  or wandb, swanlab
#   STOP_GRACE_SECONDS 10        SIGTERM -> SIGKILL delay when stopping
#   DRY_RUN         0
#
# Stop: Ctrl-C, or `kill <launcher pid>`: either stops the trainer (and only it).
# The launcher exits with the trainer's status.
set -euo pipefail

# shellcheck source-path=SCRIPTDIR
# shellcheck source=lib/launch.sh
source "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/lib/launch.sh"

main() {
    handle_help "$@"

    local model=${MODEL:-$COUNTDOWN_MODEL} dataset=${DATASET:-$COUNTDOWN_DATASET}
    local output_dir
    output_dir=$(absolute_path "${OUTPUT_DIR:-$LAUNCH_REPO_ROOT/output/countdown_1gpu-$(date +%Y%m%d-%H%M%S)}")
    local gpu=${GPU:-0} master_port=${MASTER_PORT:-29500} report_to=${REPORT_TO:-tensorboard}

    require_gpu_list GPU "$gpu"
    [[ $(gpu_count "$gpu") == 1 ]] || die "GPU='$gpu' must be a single GPU index (use countdown_3gpu.sh for more)"
    require_port MASTER_PORT "$master_port"
    require_uint STOP_GRACE_SECONDS "$LAUNCH_STOP_GRACE"
    require_plugin

    # NPROC_PER_NODE=1 makes swift launch through torchrun, which sets the
    # RANK/WORLD_SIZE that vLLM's colocated (external_launcher) engine expects.
    local -a train_env=(CUDA_VISIBLE_DEVICES="$gpu" NPROC_PER_NODE=1 MASTER_PORT="$master_port")
    local -a RLHF_ARGS=(--rlhf_type grpo)
    add_countdown_task_args "$model" "$dataset" "$output_dir" "$report_to"
    # LoRA: the full model plus optimizer states of a 3B model do not fit next
    # to vLLM on one card.  LoRA updates a small low-rank delta, so it takes a
    # larger learning rate than the full fine-tune's 5e-7.  Micro-batches of
    # 4 keep the 150k-vocabulary logits small; 4 x 16 = 64 completions
    # (8 prompts of 8 generations) per optimizer step.
    RLHF_ARGS+=(
        --tuner_type lora
        --lora_rank 32
        --lora_alpha 64
        --target_modules all-linear
        --per_device_train_batch_size 4
        --per_device_eval_batch_size 4
        --gradient_accumulation_steps 16
        --learning_rate 1e-5
        --beta 0.001
        --num_iterations 1
        --gradient_checkpointing true
        --use_vllm true
        --vllm_mode colocate
        --vllm_gpu_memory_utilization "${VLLM_GPU_MEMORY_UTILIZATION:-0.45}"
        --vllm_max_model_len "${VLLM_MAX_MODEL_LEN:-4096}"
        --sleep_level 1
        --offload_model true
        --offload_optimizer true
        "$@"
    )
    check_extra_args "$@"
    local -a train_cmd=(swift rlhf "${RLHF_ARGS[@]}")

    warn_about_schedule 1 "${RLHF_ARGS[@]}"

    if is_true "${DRY_RUN:-0}"; then
        note "DRY_RUN: nothing started; GPU, port and ms-swift checks skipped"
        print_command "trainer with colocated vLLM (GPU $gpu), log: $output_dir/train.log" \
            "${train_env[@]}" -- "${train_cmd[@]}"
        exit 0
    fi

    require_command setsid "util-linux is needed to stop children reliably"
    require_gpus GPU="$gpu"
    require_swift_4
    require_free_port MASTER_PORT "$master_port" 1 "torchrun's rendezvous port"

    prepare_output_dir "$output_dir"
    record_command "trainer with colocated vLLM" "${train_env[@]}" -- "${train_cmd[@]}"
    install_cleanup_traps

    note "starting trainer with colocated vLLM on GPU $gpu (log: $output_dir/train.log)"
    start_in_new_session "$output_dir/train.log" "${train_env[@]}" -- "${train_cmd[@]}"
    finish_with_trainer "$output_dir/train.log" "$LAUNCH_LAST_PID"
}

main "$@"
