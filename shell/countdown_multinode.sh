#!/usr/bin/env bash
# countdown_multinode.sh: GRPO with ms-swift 4.x across several nodes (TASK=countdown by default).
#
# Layout: one host runs the vLLM server (ROLE=rollout); NNODES training nodes
# (ROLE=train) run `swift rlhf` (full fine-tune, DeepSpeed ZeRO-3) through
# torchrun and send generation requests / weight updates to that server.
#
# Step by step (example: rollout on host "gen0", trainers on "node0", "node1"):
#   0. Same repo checkout, same ms-swift 4.x + [gpu] extra and the model reachable
#      on every host; OUTPUT_DIR ideally on a shared filesystem (same path everywhere).
#      Network (see the README, "Multi-node network"): trainers -> gen0 on
#      ROLLOUT_PORT (HTTP) and ROLLOUT_GROUP_PORT (NCCL weight sync), trainers ->
#      node0 on MASTER_PORT, and NCCL's own ephemeral ports between all of them
#      (NCCL_SOCKET_IFNAME picks the interface).
#   1. On gen0:    ROLE=rollout ROLLOUT_GPUS=0 shell/countdown_multinode.sh
#      It prints "ready" once http://gen0:$ROLLOUT_PORT/health/ answers; leave it running.
#   2. On node0:   ROLE=train ROLLOUT_HOST=gen0 NNODES=2 NODE_RANK=0 MASTER_ADDR=node0 \
#                  TRAIN_GPUS=0,1,2,3,4,5,6,7 shell/countdown_multinode.sh
#   3. On node1:   the same with NODE_RANK=1.
#      Each training node first waits (ROLLOUT_TIMEOUT) for the server's health
#      check, then torchrun waits for all NNODES nodes.
#   4. Stop: Ctrl-C (or kill <launcher pid>) on each host; a launcher stops
#      only the processes it started. Stop the trainers before the server.
#   DRY_RUN=1 with the same variables prints the command a host would run.
#   SMOKE=1 on every host: the tiny model of make smoke, 4 short steps.
#   RESUME=auto on every training node: continue from the newest complete checkpoint.
#
# Usage:
#   ROLE=rollout|train shell/countdown_multinode.sh [extra swift rlhf flags...]
# Extra flags (ROLE=train) are appended to `swift rlhf`; the last value of a
# repeated flag wins.  Extra `swift rollout` flags go in ROLLOUT_ARGS.
# More training processes than the reference's 2 multiply the completions per
# step (2 x 8 GPUs: 1024, 391 steps): the launcher warns and names the
# --gradient_accumulation_steps that keeps the reference's 128.
#
# Environment (default):
#   ROLE            (required)   rollout | train
#   TASK            countdown    or gsm8k (shell/lib/tasks.sh): the same on every host
#   MODEL           the task's (Qwen/Qwen2.5-3B-Instruct), the same on every host
#   ROLLOUT_PORT    8000         HTTP port of the server (was VLLM_PORT)
#   ROLLOUT_GROUP_PORT 51216     NCCL weight-sync port on the rollout host (was VLLM_GROUP_PORT)
#   OUTPUT_DIR      <repo>/output/countdown_multinode
#                   (rollout.log, train-node<NODE_RANK>.log, commands-*.sh; earlier ones kept as *.1)
#   STOP_GRACE_SECONDS 10        DRY_RUN 0   SMOKE 0
#   GPU settings are indices or GPU-/MIG- ids; under an inherited CUDA_VISIBLE_DEVICES
#   indices are positions in it.
#  ROLE=rollout:
#   ROLLOUT_GPUS    0            --vllm_data_parallel_size = their count
#   ROLLOUT_BIND_HOST 0.0.0.0    the server is unauthenticated: private network only
#   VLLM_MAX_MODEL_LEN 4096      VLLM_GPU_MEMORY_UTILIZATION 0.9
#   ROLLOUT_ARGS    ""           extra `swift rollout` flags, shell-quoted (not --port/--host)
#   ROLLOUT_TIMEOUT 900          seconds to become healthy
#  ROLE=train:
#   ROLLOUT_HOST    (required)   host name / address of the rollout server
#   NNODES 1  NODE_RANK 0  MASTER_ADDR (required if NNODES > 1)  MASTER_PORT 29500
#   TRAIN_GPUS      0,1,2,3,4,5,6,7   per node; NPROC_PER_NODE = their count
#   DATASET         the task's (zouxuhong/Countdown-Tasks-3to4#50000)   VAL_DATASET as in countdown_3gpu.sh
#   REPORT_TO       tensorboard  or wandb, swanlab
#   RESUME          ""           auto: continue from the newest complete checkpoint in OUTPUT_DIR
#   ROLLOUT_TIMEOUT 900          seconds to wait for the server's health check
set -euo pipefail

# shellcheck source-path=SCRIPTDIR
# shellcheck source=lib/launch.sh
source "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/lib/launch.sh"

# SMOKE=1: each host builds the tiny model (seeded: the same weights) in a
# folder of its own, so hosts sharing OUTPUT_DIR do not race.
smoke_on_this_host() {
    smoke_setup "$OUT_DIR" "$OUT_DIR/smoke-${HOSTNAME:-host}"
    MODEL_NAME=$LAUNCH_SMOKE_MODEL
}

run_rollout() {
    local gpus=${ROLLOUT_GPUS:-0} bind_host=${ROLLOUT_BIND_HOST:-0.0.0.0}
    local max_model_len=${VLLM_MAX_MODEL_LEN:-$TASK_VLLM_MAX_MODEL_LEN}
    resolve_gpus ROLLOUT_GPUS "$gpus"
    gpus=$LAUNCH_GPUS
    split_words ROLLOUT_ARGS "${ROLLOUT_ARGS:-}"
    local -a rollout_extra=("${LAUNCH_WORDS[@]}") smoke_model_args=()
    check_rollout_args "${rollout_extra[@]}"
    if is_true "${SMOKE:-0}"; then
        smoke_on_this_host
        max_model_len=1024
        smoke_model_args=(--model_type qwen2 --template qwen2_5)
    fi

    local dp no_proxy_hosts health_host=$bind_host
    dp=$(gpu_count "$gpus")
    no_proxy_hosts=$(no_proxy_value 127.0.0.1 localhost)
    # A wildcard bind answers on loopback; check health there.
    [[ $bind_host == 0.0.0.0 || $bind_host == :: ]] && health_host=127.0.0.1

    local -a rollout_env=(CUDA_VISIBLE_DEVICES="$gpus" no_proxy="$no_proxy_hosts" NO_PROXY="$no_proxy_hosts")
    local -a rollout_cmd=(
        swift rollout
        --model "$MODEL_NAME"
        "${smoke_model_args[@]}"
        --torch_dtype bfloat16
        --host "$bind_host"
        --port "$PORT"
        --vllm_data_parallel_size "$dp"
        --vllm_max_model_len "$max_model_len"
        --vllm_gpu_memory_utilization "${VLLM_GPU_MEMORY_UTILIZATION:-0.9}"
        "${rollout_extra[@]}"
    )
    local log=$OUT_DIR/rollout.log

    if is_true "${DRY_RUN:-0}"; then
        note "DRY_RUN: nothing started; GPU, port, ms-swift and vLLM checks skipped"
        if is_true "${SMOKE:-0}"; then
            print_smoke_build
        fi
        print_command "rollout server (GPUs $gpus), log: $log" "${rollout_env[@]}" -- "${rollout_cmd[@]}"
        exit 0
    fi

    require_command setsid "util-linux is needed to stop children reliably"
    require_gpus ROLLOUT_GPUS="$gpus"
    require_swift_4
    require_gpu_libraries vllm
    require_free_port ROLLOUT_PORT "$PORT" 0 \
        "the rollout server's HTTP port; after a previous run it may linger ~60s in TIME_WAIT, and ms-swift would then silently switch ports"
    require_free_port ROLLOUT_GROUP_PORT "$GROUP_PORT" 1 "the NCCL weight-sync port the trainers connect to"

    prepare_output_dir "$OUT_DIR" commands-rollout.sh
    record_command "rollout server" "${rollout_env[@]}" -- "${rollout_cmd[@]}"
    install_cleanup_traps
    if is_true "${SMOKE:-0}"; then
        smoke_build
    fi

    note "starting rollout server on GPUs $gpus (log: $log)"
    start_in_new_session "$log" "${rollout_env[@]}" -- "${rollout_cmd[@]}"
    local rollout_pid=$LAUNCH_LAST_PID
    wait_for_health "http://$(url_host "$health_host"):$PORT/health/" "$TIMEOUT" "$rollout_pid" "$log"
    note "ready: on each training node run ROLE=train ROLLOUT_HOST=${HOSTNAME:-<this host>} ROLLOUT_PORT=$PORT ROLLOUT_GROUP_PORT=$GROUP_PORT ... $0"
    note "Ctrl-C stops the server"
    wait_for_server "$rollout_pid" "$log"
}

run_train() {
    local rollout_host=${ROLLOUT_HOST:-}
    local nnodes=${NNODES:-1} node_rank=${NODE_RANK:-0} master_port=${MASTER_PORT:-29500}
    local master_addr=${MASTER_ADDR:-}
    local gpus=${TRAIN_GPUS:-0,1,2,3,4,5,6,7}
    local dataset=${DATASET:-$TASK_DATASET} report_to=${REPORT_TO:-tensorboard}

    [[ -n $rollout_host ]] || die "ROLE=train needs ROLLOUT_HOST (the host running ROLE=rollout)"
    require_positive_int NNODES "$nnodes"
    require_uint NODE_RANK "$node_rank"
    ((node_rank < nnodes)) || die "NODE_RANK=$node_rank must be below NNODES=$nnodes"
    if [[ -z $master_addr ]]; then
        ((nnodes == 1)) || die "NNODES=$nnodes needs MASTER_ADDR (the address of the NODE_RANK=0 training node)"
        master_addr=127.0.0.1
    fi
    require_port MASTER_PORT "$master_port"
    resolve_gpus TRAIN_GPUS "$gpus"
    gpus=$LAUNCH_GPUS
    require_plugin
    if is_true "${SMOKE:-0}"; then
        smoke_on_this_host
        dataset=$LAUNCH_SMOKE_DATASET report_to=none
    fi

    local nproc world no_proxy_hosts
    nproc=$(gpu_count "$gpus")
    world=$((nproc * nnodes))
    no_proxy_hosts=$(no_proxy_value 127.0.0.1 localhost "$rollout_host" "$master_addr")

    local -a train_env=(
        CUDA_VISIBLE_DEVICES="$gpus" NPROC_PER_NODE="$nproc"
        NNODES="$nnodes" NODE_RANK="$node_rank" MASTER_ADDR="$master_addr" MASTER_PORT="$master_port"
        no_proxy="$no_proxy_hosts" NO_PROXY="$no_proxy_hosts"
    )
    local -a RLHF_ARGS=(--rlhf_type grpo)
    add_task_args "$MODEL_NAME" "$dataset" "$OUT_DIR" "$report_to"
    add_server_mode_full_args "$rollout_host" "$PORT" "$GROUP_PORT"
    if is_true "${SMOKE:-0}"; then
        add_smoke_args
    fi
    check_extra_args "$@"
    RLHF_ARGS+=("$@")
    resolve_resume "$OUT_DIR" "commands-train-node$node_rank.sh" "${train_env[@]}" -- "${RLHF_ARGS[@]}"
    RLHF_ARGS+=("${LAUNCH_RESUME_ARGS[@]}")
    local -a train_cmd=(swift rlhf "${RLHF_ARGS[@]}")
    local log=$OUT_DIR/train-node$node_rank.log

    warn_about_schedule "$world" "${RLHF_ARGS[@]}"
    is_true "${SMOKE:-0}" || warn_about_global_batch "$world" "${RLHF_ARGS[@]}"

    if is_true "${DRY_RUN:-0}"; then
        note "DRY_RUN: nothing started; GPU, port, ms-swift, vLLM, DeepSpeed and server checks skipped"
        if is_true "${SMOKE:-0}"; then
            print_smoke_build
        fi
        print_command "trainer node $node_rank/$nnodes (GPUs $gpus), log: $log" "${train_env[@]}" -- "${train_cmd[@]}"
        exit 0
    fi

    require_command setsid "util-linux is needed to stop children reliably"
    require_gpus TRAIN_GPUS="$gpus"
    require_swift_4
    # shellcheck disable=SC2046 # one module per word
    require_gpu_libraries $(gpu_libraries_for "${RLHF_ARGS[@]}")
    # Only rank 0 hosts torchrun's rendezvous store.
    if ((node_rank == 0)); then
        require_free_port MASTER_PORT "$master_port" 1 "torchrun's rendezvous port"
    fi

    prepare_output_dir "$OUT_DIR" "commands-train-node$node_rank.sh"
    record_command "trainer node $node_rank" "${train_env[@]}" -- "${train_cmd[@]}"
    install_cleanup_traps
    if is_true "${SMOKE:-0}"; then
        smoke_build
        # shellcheck disable=SC2034 # read by smoke_report
        LAUNCH_SMOKE_PROOF=(
            "vLLM and DeepSpeed import with $LAUNCH_PYTHON"
            "the rollout server at $rollout_host:$PORT answered /health/ from this node"
            "the trainer ran on $nnodes node(s) x GPUs $gpus (DeepSpeed ZeRO-3), took completions from the server and pushed weights to it over NCCL (ROLLOUT_GROUP_PORT $GROUP_PORT)"
        )
        # shellcheck disable=SC2034 # read by finish_with_trainer
        LAUNCH_ON_SUCCESS=smoke_report
    fi

    wait_for_health "http://$(url_host "$rollout_host"):$PORT/health/" "$TIMEOUT"
    note "starting trainer node $node_rank/$nnodes on GPUs $gpus, NPROC_PER_NODE=$nproc (log: $log)"
    start_in_new_session "$log" "${train_env[@]}" -- "${train_cmd[@]}"
    finish_with_trainer "$log" "$LAUNCH_LAST_PID"
}

main() {
    handle_help "$@"
    load_task "${TASK:-countdown}"
    check_renamed_settings server

    MODEL_NAME=${MODEL:-$TASK_MODEL}
    OUT_DIR=$(absolute_path "${OUTPUT_DIR:-$LAUNCH_REPO_ROOT/output/countdown_multinode}")
    PORT=${ROLLOUT_PORT:-8000}
    GROUP_PORT=${ROLLOUT_GROUP_PORT:-51216}
    TIMEOUT=${ROLLOUT_TIMEOUT:-900}
    require_port ROLLOUT_PORT "$PORT"
    require_port ROLLOUT_GROUP_PORT "$GROUP_PORT"
    require_distinct_ports "ROLLOUT_PORT=$PORT" "ROLLOUT_GROUP_PORT=$GROUP_PORT"
    require_positive_int ROLLOUT_TIMEOUT "$TIMEOUT"
    require_uint STOP_GRACE_SECONDS "$LAUNCH_STOP_GRACE"

    case ${ROLE:-} in
        rollout)
            (($# == 0)) || die "ROLE=rollout takes no arguments (extra swift rollout flags go in ROLLOUT_ARGS)"
            run_rollout
            ;;
        train) run_train "$@" ;;
        "") die "set ROLE=rollout (on the rollout host) or ROLE=train (on each training node); see --help" ;;
        *) die "ROLE='$ROLE' is neither rollout nor train" ;;
    esac
}

main "$@"
