#!/usr/bin/env bash
# countdown_3gpu.sh: GRPO on Countdown with ms-swift 4.x on one node with 3 GPUs.
#
# Layout (defaults):
#   GPU 2    swift rollout: vLLM server on 127.0.0.1:$VLLM_PORT (generation)
#   GPU 0,1  swift rlhf --rlhf_type grpo: full fine-tune, DeepSpeed ZeRO-3,
#            asks the server for completions and pushes updated weights to it
#            (NCCL on $VLLM_GROUP_PORT)
#
# Usage:
#   shell/countdown_3gpu.sh [extra swift rlhf flags...]
#   DRY_RUN=1 shell/countdown_3gpu.sh       print both commands, start nothing
#   shell/countdown_3gpu.sh --help          this text
# Extra flags are appended to `swift rlhf`; argparse keeps the last value of a
# repeated flag, so they override the defaults (e.g. --save_steps 50 --max_steps 200).
#
# Environment (default):
#   MODEL           Qwen/Qwen2.5-3B-Instruct
#   DATASET         zouxuhong/Countdown-Tasks-3to4#50000
#   OUTPUT_DIR      <repo>/output/countdown_3gpu-<YYYYmmdd-HHMMSS>
#                   (rollout.log, train.log, commands.sh; checkpoints in v0-*/)
#   ROLLOUT_GPU     2            GPU of the vLLM server
#   TRAIN_GPUS      0,1          GPUs of the trainer; NPROC_PER_NODE = their count
#   VLLM_PORT       8000         HTTP port of the server (loopback only)
#   VLLM_GROUP_PORT 51216        NCCL weight-sync port
#   MASTER_PORT     29500        torchrun rendezvous port
#   VLLM_MAX_MODEL_LEN 4096      prompt + 1024 completion tokens must fit
#   VLLM_GPU_MEMORY_UTILIZATION 0.9
#   ROLLOUT_ARGS    ""           extra `swift rollout` flags (split on blanks)
#   ROLLOUT_TIMEOUT 900          seconds for the server to become healthy
#   REPORT_TO       tensorboard  or wandb, swanlab
#   STOP_GRACE_SECONDS 10        SIGTERM -> SIGKILL delay when stopping
#   DRY_RUN         0
#
# Stop: Ctrl-C, or `kill <launcher pid>`: either stops the server and the
# trainer (and only them). The launcher exits with the trainer's status.
set -euo pipefail

# shellcheck source-path=SCRIPTDIR
# shellcheck source=lib/launch.sh
source "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/lib/launch.sh"

main() {
    handle_help "$@"

    local model=${MODEL:-$COUNTDOWN_MODEL} dataset=${DATASET:-$COUNTDOWN_DATASET}
    local output_dir
    output_dir=$(absolute_path "${OUTPUT_DIR:-$LAUNCH_REPO_ROOT/output/countdown_3gpu-$(date +%Y%m%d-%H%M%S)}")
    local rollout_gpu=${ROLLOUT_GPU:-2} train_gpus=${TRAIN_GPUS:-0,1}
    local port=${VLLM_PORT:-8000} group_port=${VLLM_GROUP_PORT:-51216} master_port=${MASTER_PORT:-29500}
    local timeout=${ROLLOUT_TIMEOUT:-900} report_to=${REPORT_TO:-tensorboard}
    local -a rollout_extra=()
    read -r -a rollout_extra <<<"${ROLLOUT_ARGS:-}"

    # Settings first: these need no GPU, so DRY_RUN checks them too.
    require_gpu_list ROLLOUT_GPU "$rollout_gpu"
    [[ $(gpu_count "$rollout_gpu") == 1 ]] || die "ROLLOUT_GPU='$rollout_gpu' must be a single GPU index"
    require_gpu_list TRAIN_GPUS "$train_gpus"
    require_disjoint_gpus ROLLOUT_GPU "$rollout_gpu" TRAIN_GPUS "$train_gpus"
    require_port VLLM_PORT "$port"
    require_port VLLM_GROUP_PORT "$group_port"
    require_port MASTER_PORT "$master_port"
    require_distinct_ports "VLLM_PORT=$port" "VLLM_GROUP_PORT=$group_port" "MASTER_PORT=$master_port"
    require_positive_int ROLLOUT_TIMEOUT "$timeout"
    require_uint STOP_GRACE_SECONDS "$LAUNCH_STOP_GRACE"
    require_plugin

    local nproc no_proxy_hosts
    nproc=$(gpu_count "$train_gpus")
    no_proxy_hosts=$(no_proxy_value 127.0.0.1 localhost)

    local -a rollout_env=(CUDA_VISIBLE_DEVICES="$rollout_gpu" no_proxy="$no_proxy_hosts" NO_PROXY="$no_proxy_hosts")
    local -a rollout_cmd=(
        swift rollout
        --model "$model"
        --torch_dtype bfloat16
        --host 127.0.0.1
        --port "$port"
        --vllm_max_model_len "${VLLM_MAX_MODEL_LEN:-4096}"
        --vllm_gpu_memory_utilization "${VLLM_GPU_MEMORY_UTILIZATION:-0.9}"
        "${rollout_extra[@]}"
    )
    local -a train_env=(
        CUDA_VISIBLE_DEVICES="$train_gpus" NPROC_PER_NODE="$nproc" MASTER_PORT="$master_port"
        no_proxy="$no_proxy_hosts" NO_PROXY="$no_proxy_hosts"
    )
    local -a RLHF_ARGS=(--rlhf_type grpo)
    add_countdown_task_args "$model" "$dataset" "$output_dir" "$report_to"
    add_server_mode_full_args 127.0.0.1 "$port" "$group_port"
    check_extra_args "$@"
    RLHF_ARGS+=("$@")
    local -a train_cmd=(swift rlhf "${RLHF_ARGS[@]}")

    warn_about_schedule "$nproc" "${RLHF_ARGS[@]}"

    if is_true "${DRY_RUN:-0}"; then
        note "DRY_RUN: nothing started; GPU, port and ms-swift checks skipped"
        print_command "rollout server (GPU $rollout_gpu), log: $output_dir/rollout.log" \
            "${rollout_env[@]}" -- "${rollout_cmd[@]}"
        print_command "trainer (GPUs $train_gpus), log: $output_dir/train.log" \
            "${train_env[@]}" -- "${train_cmd[@]}"
        exit 0
    fi

    # Host checks, still before anything starts.
    require_command setsid "util-linux is needed to stop children reliably"
    require_gpus ROLLOUT_GPU="$rollout_gpu" TRAIN_GPUS="$train_gpus"
    require_swift_4
    require_free_port VLLM_PORT "$port" 0 \
        "the rollout server's HTTP port; after a previous run it may linger ~60s in TIME_WAIT, and ms-swift would then silently switch ports"
    require_free_port VLLM_GROUP_PORT "$group_port" 1 "the NCCL weight-sync port"
    require_free_port MASTER_PORT "$master_port" 1 "torchrun's rendezvous port"

    prepare_output_dir "$output_dir"
    record_command "rollout server" "${rollout_env[@]}" -- "${rollout_cmd[@]}"
    record_command "trainer" "${train_env[@]}" -- "${train_cmd[@]}"
    install_cleanup_traps

    note "starting rollout server on GPU $rollout_gpu (log: $output_dir/rollout.log)"
    start_in_new_session "$output_dir/rollout.log" "${rollout_env[@]}" -- "${rollout_cmd[@]}"
    local rollout_pid=$LAUNCH_LAST_PID
    wait_for_health "http://127.0.0.1:$port/health/" "$timeout" "$rollout_pid" "$output_dir/rollout.log"

    note "starting trainer on GPUs $train_gpus, NPROC_PER_NODE=$nproc (log: $output_dir/train.log)"
    start_in_new_session "$output_dir/train.log" "${train_env[@]}" -- "${train_cmd[@]}"
    finish_with_trainer "$output_dir/train.log" "$LAUNCH_LAST_PID" "$rollout_pid" "$output_dir/rollout.log"
}

main "$@"
