# shellcheck shell=bash
#
# shell/lib/recipes.sh: the one-node recipes, for every task. Sourced by launch.sh.
#   run_server_recipe    `swift rollout` (vLLM) on one GPU, full fine-tune with ZeRO-3 on others
#   run_colocate_recipe  one GPU: LoRA with vLLM colocated in the trainer
# The entry scripts (countdown_3gpu.sh, gsm8k_1gpu.sh, ...) hold the usage
# text and call one of these with their task.

# OUTPUT_DIR, or <repo>/output/<script>[-smoke]-<time>.  RESUME=auto needs the
# folder of the run to continue.
recipe_output_dir() {
    local smoke=""
    is_true "${SMOKE:-0}" && smoke=-smoke
    if [[ -z ${OUTPUT_DIR:-} && ${RESUME:-} == auto ]]; then
        die "RESUME=auto needs OUTPUT_DIR: the folder of the run to continue"
    fi
    absolute_path "${OUTPUT_DIR:-$LAUNCH_REPO_ROOT/output/${LAUNCH_NAME%.sh}$smoke-$(date +%Y%m%d-%H%M%S)}"
}

run_server_recipe() { # TASK ARGS...
    load_task "$1"
    shift
    check_renamed_settings server
    local output_dir
    output_dir=$(recipe_output_dir) || exit 1
    local model=${MODEL:-$TASK_MODEL} dataset=${DATASET:-$TASK_DATASET}
    local rollout_gpu=${ROLLOUT_GPU:-2} train_gpus=${TRAIN_GPUS:-0,1}
    local port=${ROLLOUT_PORT:-8000} group_port=${ROLLOUT_GROUP_PORT:-51216} master_port=${MASTER_PORT:-29500}
    local timeout=${ROLLOUT_TIMEOUT:-900} report_to=${REPORT_TO:-tensorboard}
    local max_model_len=${VLLM_MAX_MODEL_LEN:-$TASK_VLLM_MAX_MODEL_LEN}

    # Settings first: these need no GPU, so DRY_RUN checks them too.
    [[ $(gpu_count "$rollout_gpu") == 1 ]] || die "ROLLOUT_GPU='$rollout_gpu' must be a single GPU"
    resolve_gpus ROLLOUT_GPU "$rollout_gpu"
    rollout_gpu=$LAUNCH_GPUS
    resolve_gpus TRAIN_GPUS "$train_gpus"
    train_gpus=$LAUNCH_GPUS
    require_disjoint_gpus ROLLOUT_GPU "$rollout_gpu" TRAIN_GPUS "$train_gpus"
    require_port ROLLOUT_PORT "$port"
    require_port ROLLOUT_GROUP_PORT "$group_port"
    require_port MASTER_PORT "$master_port"
    require_distinct_ports "ROLLOUT_PORT=$port" "ROLLOUT_GROUP_PORT=$group_port" "MASTER_PORT=$master_port"
    require_positive_int ROLLOUT_TIMEOUT "$timeout"
    require_uint STOP_GRACE_SECONDS "$LAUNCH_STOP_GRACE"
    require_plugin
    split_words ROLLOUT_ARGS "${ROLLOUT_ARGS:-}"
    local -a rollout_extra=("${LAUNCH_WORDS[@]}")
    check_rollout_args "${rollout_extra[@]}"

    local -a smoke_model_args=()
    if is_true "${SMOKE:-0}"; then
        smoke_setup "$output_dir" "$output_dir/smoke"
        model=$LAUNCH_SMOKE_MODEL dataset=$LAUNCH_SMOKE_DATASET max_model_len=1024 report_to=none
        smoke_model_args=(--model_type qwen2 --template qwen2_5)
    fi

    local nproc no_proxy_hosts
    nproc=$(gpu_count "$train_gpus")
    no_proxy_hosts=$(no_proxy_value 127.0.0.1 localhost)

    local -a rollout_env=(CUDA_VISIBLE_DEVICES="$rollout_gpu" no_proxy="$no_proxy_hosts" NO_PROXY="$no_proxy_hosts")
    local -a rollout_cmd=(
        swift rollout
        --model "$model"
        "${smoke_model_args[@]}"
        --torch_dtype bfloat16
        --host 127.0.0.1
        --port "$port"
        --vllm_max_model_len "$max_model_len"
        --vllm_gpu_memory_utilization "${VLLM_GPU_MEMORY_UTILIZATION:-0.9}"
        "${rollout_extra[@]}"
    )
    local -a train_env=(
        CUDA_VISIBLE_DEVICES="$train_gpus" NPROC_PER_NODE="$nproc" MASTER_PORT="$master_port"
        no_proxy="$no_proxy_hosts" NO_PROXY="$no_proxy_hosts"
    )
    local -a RLHF_ARGS=(--rlhf_type grpo)
    add_task_args "$model" "$dataset" "$output_dir" "$report_to"
    add_server_mode_full_args 127.0.0.1 "$port" "$group_port"
    if is_true "${SMOKE:-0}"; then
        add_smoke_args
    fi
    check_extra_args "$@"
    RLHF_ARGS+=("$@")
    resolve_resume "$output_dir" commands.sh "${train_env[@]}" -- "${RLHF_ARGS[@]}"
    RLHF_ARGS+=("${LAUNCH_RESUME_ARGS[@]}")
    local -a train_cmd=(swift rlhf "${RLHF_ARGS[@]}")

    warn_about_schedule "$nproc" "${RLHF_ARGS[@]}"
    is_true "${SMOKE:-0}" || warn_about_global_batch "$nproc" "${RLHF_ARGS[@]}"

    if is_true "${DRY_RUN:-0}"; then
        note "DRY_RUN: nothing started; GPU, port, ms-swift, vLLM and DeepSpeed checks skipped"
        if is_true "${SMOKE:-0}"; then
            print_smoke_build
        fi
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
    # shellcheck disable=SC2046 # one module per word
    require_gpu_libraries $(gpu_libraries_for "${RLHF_ARGS[@]}")
    require_free_port ROLLOUT_PORT "$port" 0 \
        "the rollout server's HTTP port; after a previous run it may linger ~60s in TIME_WAIT, and ms-swift would then silently switch ports"
    require_free_port ROLLOUT_GROUP_PORT "$group_port" 1 "the NCCL weight-sync port"
    require_free_port MASTER_PORT "$master_port" 1 "torchrun's rendezvous port"

    prepare_output_dir "$output_dir"
    record_command "rollout server" "${rollout_env[@]}" -- "${rollout_cmd[@]}"
    record_command "trainer" "${train_env[@]}" -- "${train_cmd[@]}"
    install_cleanup_traps
    if is_true "${SMOKE:-0}"; then
        smoke_build
        # shellcheck disable=SC2034 # read by smoke_report
        LAUNCH_SMOKE_PROOF=(
            "vLLM and DeepSpeed import with $LAUNCH_PYTHON"
            "swift rollout started vLLM on GPU $rollout_gpu and answered http://127.0.0.1:$port/health/"
            "the trainer ran on GPUs $train_gpus ($nproc processes, DeepSpeed ZeRO-3), took its completions from the server and pushed its weights to it over NCCL (ROLLOUT_GROUP_PORT $group_port)"
        )
        # shellcheck disable=SC2034 # read by finish_with_trainer
        LAUNCH_ON_SUCCESS=smoke_report
    fi

    note "starting rollout server on GPU $rollout_gpu (log: $output_dir/rollout.log)"
    start_in_new_session "$output_dir/rollout.log" "${rollout_env[@]}" -- "${rollout_cmd[@]}"
    local rollout_pid=$LAUNCH_LAST_PID
    wait_for_health "http://127.0.0.1:$port/health/" "$timeout" "$rollout_pid" "$output_dir/rollout.log"

    note "starting trainer on GPUs $train_gpus, NPROC_PER_NODE=$nproc (log: $output_dir/train.log)"
    start_in_new_session "$output_dir/train.log" "${train_env[@]}" -- "${train_cmd[@]}"
    finish_with_trainer "$output_dir/train.log" "$LAUNCH_LAST_PID" "$rollout_pid" "$output_dir/rollout.log"
}

run_colocate_recipe() { # TASK ARGS...
    load_task "$1"
    shift
    check_renamed_settings colocate
    local output_dir
    output_dir=$(recipe_output_dir) || exit 1
    local model=${MODEL:-$TASK_MODEL} dataset=${DATASET:-$TASK_DATASET}
    local gpu=${GPU:-0} master_port=${MASTER_PORT:-29500} report_to=${REPORT_TO:-tensorboard}
    local max_model_len=${VLLM_MAX_MODEL_LEN:-$TASK_VLLM_MAX_MODEL_LEN}

    [[ $(gpu_count "$gpu") == 1 ]] || die "GPU='$gpu' must be a single GPU (the server recipes use more)"
    resolve_gpus GPU "$gpu"
    gpu=$LAUNCH_GPUS
    require_port MASTER_PORT "$master_port"
    require_uint STOP_GRACE_SECONDS "$LAUNCH_STOP_GRACE"
    require_plugin

    if is_true "${SMOKE:-0}"; then
        smoke_setup "$output_dir" "$output_dir/smoke"
        model=$LAUNCH_SMOKE_MODEL dataset=$LAUNCH_SMOKE_DATASET max_model_len=1024 report_to=none
    fi

    # NPROC_PER_NODE=1 makes swift launch through torchrun, which sets the
    # RANK/WORLD_SIZE that vLLM's colocated (external_launcher) engine expects.
    local -a train_env=(CUDA_VISIBLE_DEVICES="$gpu" NPROC_PER_NODE=1 MASTER_PORT="$master_port")
    local -a RLHF_ARGS=(--rlhf_type grpo)
    add_task_args "$model" "$dataset" "$output_dir" "$report_to"
    add_colocate_lora_args "$max_model_len"
    if is_true "${SMOKE:-0}"; then
        add_smoke_args
    fi
    check_extra_args "$@"
    RLHF_ARGS+=("$@")
    resolve_resume "$output_dir" commands.sh "${train_env[@]}" -- "${RLHF_ARGS[@]}"
    RLHF_ARGS+=("${LAUNCH_RESUME_ARGS[@]}")
    local -a train_cmd=(swift rlhf "${RLHF_ARGS[@]}")

    warn_about_schedule 1 "${RLHF_ARGS[@]}"

    if is_true "${DRY_RUN:-0}"; then
        note "DRY_RUN: nothing started; GPU, port, ms-swift and vLLM checks skipped"
        if is_true "${SMOKE:-0}"; then
            print_smoke_build
        fi
        print_command "trainer with colocated vLLM (GPU $gpu), log: $output_dir/train.log" \
            "${train_env[@]}" -- "${train_cmd[@]}"
        exit 0
    fi

    require_command setsid "util-linux is needed to stop children reliably"
    require_gpus GPU="$gpu"
    require_swift_4
    # shellcheck disable=SC2046 # one module per word
    require_gpu_libraries $(gpu_libraries_for "${RLHF_ARGS[@]}")
    require_free_port MASTER_PORT "$master_port" 1 "torchrun's rendezvous port"

    prepare_output_dir "$output_dir"
    record_command "trainer with colocated vLLM" "${train_env[@]}" -- "${train_cmd[@]}"
    install_cleanup_traps
    if is_true "${SMOKE:-0}"; then
        smoke_build
        # shellcheck disable=SC2034 # read by smoke_report
        LAUNCH_SMOKE_PROOF=(
            "vLLM imports with $LAUNCH_PYTHON"
            "vLLM ran inside the trainer on GPU $gpu (colocate): it generated, slept during each update and took the new LoRA weights"
        )
        # shellcheck disable=SC2034 # read by finish_with_trainer
        LAUNCH_ON_SUCCESS=smoke_report
    fi

    note "starting trainer with colocated vLLM on GPU $gpu (log: $output_dir/train.log)"
    start_in_new_session "$output_dir/train.log" "${train_env[@]}" -- "${train_cmd[@]}"
    finish_with_trainer "$output_dir/train.log" "$LAUNCH_LAST_PID"
}
