# shellcheck shell=bash source-path=SCRIPTDIR
#
# shell/lib/launch.sh: logic shared by the GRPO launch recipes
# (countdown_3gpu.sh, countdown_1gpu.sh, countdown_multinode.sh, gsm8k_1gpu.sh,
# gsm8k_3gpu.sh; the CPU demo and smoke scripts use its messages).
#
# Source it from a recipe; it only defines functions and LAUNCH_* globals.
# Linux only: it relies on setsid, /proc and GNU tail, like the GPU nodes do.
#
# Sections here:
#   messages      one line per problem on stderr, prefixed by the recipe name
#   commands      copy-pastable printing (DRY_RUN, logs) of env + argv
#   recipe flags  the flag sets the recipes share (task presets in tasks.sh)
#   warnings      save_steps vs. run length, lr/beta collapse range, global
#                 batch vs. the reference, checkpoint disk use
#   run helpers   output folder, command record, the trainer's end
# and in the files it sources:
#   tasks.sh      TASK presets: countdown, gsm8k
#   checks.sh     validation, preflight and proxies: refuse before anything starts
#   processes.sh  children in their own sessions, stopped (and only they) on every exit
#   runs.sh       RESUME=auto, SMOKE=1, previous logs kept
#   recipes.sh    the server (3-GPU) and colocate (1-GPU) recipes

if [[ -n ${LAUNCH_SH_LOADED:-} ]]; then
    return 0
fi
LAUNCH_SH_LOADED=1

# Empty arrays under `set -u` and `wait` on reaped children need bash >= 4.4.
if ((BASH_VERSINFO[0] < 4 || (BASH_VERSINFO[0] == 4 && BASH_VERSINFO[1] < 4))); then
    printf '%s: error: bash >= 4.4 is required (this is %s)\n' "${0##*/}" "$BASH_VERSION" >&2
    exit 1
fi

LAUNCH_NAME=${0##*/}
LAUNCH_REPO_ROOT=$(cd -P "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# The ms-swift Countdown example's model, data and system prompt: every recipe's defaults.
# shellcheck disable=SC2034 # used by the recipes that source this file
readonly COUNTDOWN_MODEL=Qwen/Qwen2.5-3B-Instruct COUNTDOWN_DATASET='zouxuhong/Countdown-Tasks-3to4#50000' \
    COUNTDOWN_SYSTEM='You are a helpful assistant. You first thinks about the reasoning process in the mind and then provides the user with the answer.'
LAUNCH_PLUGIN=$LAUNCH_REPO_ROOT/swift_plugins/plugin.py
LAUNCH_RECORD=""          # commands.sh of this run (prepare_output_dir)

# vLLM reads VLLM_PORT as the base of its internal ports (vllm/envs.py; get_open_port
# in vllm/utils), and `swift rollout` takes its data-parallel master port from that
# get_open_port (swift/pipelines/infer/rollout.py, SwiftRolloutDeploy.__init__): an
# inherited VLLM_PORT equal to the HTTP port makes the server unreachable.  No child
# of a recipe sees it.
LAUNCH_UNSET_ENV=(VLLM_PORT)

# shellcheck source=tasks.sh
source "$LAUNCH_REPO_ROOT/shell/lib/tasks.sh"
# shellcheck source=checks.sh
source "$LAUNCH_REPO_ROOT/shell/lib/checks.sh"
# shellcheck source=processes.sh
source "$LAUNCH_REPO_ROOT/shell/lib/processes.sh"
# shellcheck source=runs.sh
source "$LAUNCH_REPO_ROOT/shell/lib/runs.sh"
# shellcheck source=recipes.sh
source "$LAUNCH_REPO_ROOT/shell/lib/recipes.sh"

# ---------------------------------------------------------------- messages

die() {
    printf '%s: error: %s\n' "$LAUNCH_NAME" "$*" >&2
    exit 1
}

warn() {
    printf '%s: warning: %s\n' "$LAUNCH_NAME" "$*" >&2
}

note() {
    printf '%s: %s\n' "$LAUNCH_NAME" "$*" >&2
}

# Prints the comment block at the top of the recipe (its usage text) and
# exits, when the first argument asks for help.
handle_help() {
    case ${1:-} in
        -h | --help)
            awk 'NR == 1 { next } /^#/ { sub(/^# ?/, ""); print; next } { exit }' "$0"
            exit 0
            ;;
    esac
}

is_true() {
    case ${1,,} in
        1 | true | yes | on) return 0 ;;
        *) return 1 ;;
    esac
}

show_log_tail() { # LOG TITLE
    local log=$1 title=$2 lines=${LOG_TAIL_LINES:-40}
    [[ -f $log ]] || return 0
    printf '%s: ---- last %s lines of %s (%s) ----\n' "$LAUNCH_NAME" "$lines" "$title" "$log" >&2
    tail -n "$lines" "$log" >&2
    printf '%s: ---- end of %s ----\n' "$LAUNCH_NAME" "$title" >&2
}

# ---------------------------------------------------------------- commands

shell_quote() { # ARG
    if [[ $1 =~ ^[A-Za-z0-9_@%+=:,./-][A-Za-z0-9_@%+=:,./#-]*$ ]]; then
        printf '%s' "$1"
    else
        printf "'%s'" "${1//\'/\'\\\'\'}"
    fi
}

# Prints "env -u VLLM_PORT ENV... CMD..." as a copy-pastable command, one flag
# per line: what start_in_new_session runs.
format_command() { # ENV... -- CMD...
    local arg name line="env"
    for name in "${LAUNCH_UNSET_ENV[@]}"; do
        line+=" -u $name"
    done
    line+=" "
    while (($#)) && [[ $1 != -- ]]; do
        line+="$(shell_quote "$1") "
        shift
    done
    shift
    for arg in "$@"; do
        if [[ $arg == --* ]]; then
            printf '%s \\\n' "${line% }"
            line="    "
        fi
        line+="$(shell_quote "$arg") "
    done
    printf '%s\n' "${line% }"
}

# ------------------------------------------------------------ recipe flags
# Kept here so the recipes cannot drift apart.  Each function appends to the
# array RLHF_ARGS of the caller; load_task (tasks.sh) has run before.

# What every task and layout shares: model, data, the task preset, sampling,
# evaluation, checkpoints, logging, output.
add_task_args() { # MODEL DATASET OUTPUT_DIR REPORT_TO
    RLHF_ARGS+=(
        --model "$1"
        --torch_dtype bfloat16
        --dataset "$2"
        --external_plugins "$LAUNCH_PLUGIN"
        "${TASK_ARGS[@]}"
        # ms-swift 3.x sampled with top_k 50, top_p 0.9 (the runs its GRPO docs
        # show); 4.x defaults to -1 / 1.0 (swift/rlhf_trainers/args_mixin.py,
        # RolloutTrainerArgumentsMixin).  Pass 3.x's so curves compare.
        --temperature 1.0
        --top_k 50
        --top_p 0.9
        --warmup_ratio 0.01
        --dataloader_num_workers 4
        --save_steps 100
        --save_total_limit 20
        # Weights only: ZeRO-3 optimizer states are ~16 bytes per parameter per
        # checkpoint (~1 TB for 20 checkpoints of a 3B model).  RESUME=auto
        # continues from such a checkpoint (see resume_args).
        --save_only_model true
        --logging_steps 1
        --log_completions true
        --report_to "$4"
        --output_dir "$3"
    )
    add_eval_args "$2"
}

# Held-out evaluation every TASK_EVAL_STEPS steps.  ms-swift 4.x defaults
# split_dataset_ratio to 0 (3.x: 0.01), so without this nothing is evaluated.
# VAL_DATASET: none | a dataset; default: a local DATASET's sibling
# "<name>.test.<ext>" (what `generate --test-size` writes), else 1% of DATASET.
add_eval_args() { # DATASET
    local val=${VAL_DATASET:-} sibling=""
    if [[ -z $val && -f $1 && $1 == *.* ]]; then
        sibling=${1%.*}.test.${1##*.}
        [[ -f $sibling ]] && val=$sibling
    fi
    case $val in
        none) RLHF_ARGS+=(--eval_strategy no) ;;
        "") RLHF_ARGS+=(--split_dataset_ratio 0.01 --eval_steps "$TASK_EVAL_STEPS") ;;
        *) RLHF_ARGS+=(--val_dataset "$val" --eval_steps "$TASK_EVAL_STEPS") ;;
    esac
}

# Full fine-tune with ZeRO-3 against a `swift rollout` server: the layout of
# the 3-GPU and the multi-node recipes.
add_server_mode_full_args() { # HOST PORT GROUP_PORT
    RLHF_ARGS+=(
        --tuner_type full
        --deepspeed zero3
        "${TASK_SERVER_ARGS[@]}"
        --num_iterations 1
        --use_vllm true
        --vllm_mode server
        --vllm_server_host "$1"
        --vllm_server_port "$2"
        --vllm_server_group_port "$3"
    )
}

# LoRA with vLLM in the trainer's process: the 1-GPU layout.  vLLM takes
# VLLM_GPU_MEMORY_UTILIZATION of the card while generating and sleeps
# (--sleep_level 1) during the update; model and optimizer are offloaded to
# CPU while vLLM generates.
add_colocate_lora_args() { # VLLM_MAX_MODEL_LEN
    RLHF_ARGS+=(
        --tuner_type lora
        --lora_rank 32
        --lora_alpha 64
        --target_modules all-linear
        "${TASK_COLOCATE_ARGS[@]}"
        --num_iterations 1
        --gradient_checkpointing true
        --use_vllm true
        --vllm_mode colocate
        --vllm_gpu_memory_utilization "${VLLM_GPU_MEMORY_UTILIZATION:-0.45}"
        --vllm_max_model_len "$1"
        --sleep_level 1
        --offload_model true
        --offload_optimizer true
    )
}

# ---------------------------------------------------------------- warnings

# Extra arguments may override any flag, but a few are derived from the
# launcher's environment: changing them behind its back would point the
# trainer at a server the launcher does not run, or split logs and outputs.
check_extra_args() { # ARGS...
    local arg
    for arg in "$@"; do
        case ${arg%%=*} in
            --vllm_server_host | --vllm_server_port | --vllm_server_group_port | --vllm_server_base_url)
                die "${arg%%=*} in the extra arguments would point the trainer away from the rollout server this launcher checks; set ROLLOUT_HOST / ROLLOUT_PORT / ROLLOUT_GROUP_PORT instead"
                ;;
            --output_dir)
                warn "--output_dir in the extra arguments: checkpoints go there but logs stay in OUTPUT_DIR; prefer OUTPUT_DIR=..."
                ;;
        esac
    done
}

# Prints the value(s) of the last --NAME in ARGS (argparse keeps the last
# one), handling "--NAME V..." and "--NAME=V"; prints nothing if absent.
flag_value() { # NAME ARGS...
    local name=$1 found="" collecting=0 arg
    shift
    for arg in "$@"; do
        if [[ $arg == "--$name" ]]; then
            found="" collecting=1
        elif [[ $arg == "--$name="* ]]; then
            found=${arg#*=} collecting=0
        elif [[ $arg == --* ]]; then
            collecting=0
        elif ((collecting)); then
            found+="${found:+ }$arg"
        fi
    done
    printf '%s' "$found"
}

# Rows the run trains on, from the "#N" sample-count suffixes of --dataset;
# empty when any dataset lacks one (its size is unknown without loading it).
dataset_rows() { # DATASET_VALUES
    local ds total=0
    for ds in $1; do
        [[ $ds =~ \#([0-9]+)$ ]] || return 0
        total=$((total + BASH_REMATCH[1]))
    done
    if ((total > 0)); then
        printf '%s' "$total"
    fi
}

# Optimizer steps of a GRPO run: every step consumes
# per_device_train_batch_size * gradient_accumulation_steps * world_size
# completions, i.e. that / num_generations prompts.  --max_steps wins; a
# --split_dataset_ratio holds ceil(rows * ratio) rows out (datasets'
# train_test_split).  Prints nothing when the inputs are unknown.
total_steps() { # WORLD_SIZE ARGS...
    local world=$1 rows bs ga ng epochs max_steps ratio
    shift
    max_steps=$(flag_value max_steps "$@")
    if [[ $max_steps =~ ^[0-9]+$ ]] && ((max_steps > 0)); then
        printf '%s' "$max_steps"
        return 0
    fi
    rows=$(dataset_rows "$(flag_value dataset "$@")")
    bs=$(flag_value per_device_train_batch_size "$@")
    ga=$(flag_value gradient_accumulation_steps "$@")
    ng=$(flag_value num_generations "$@")
    epochs=$(flag_value num_train_epochs "$@")
    ratio=$(flag_value split_dataset_ratio "$@")
    [[ -n $rows && -n $bs && -n $ga && -n $ng && -n $epochs ]] || return 0
    awk -v rows="$rows" -v bs="$bs" -v ga="$ga" -v ng="$ng" -v ep="$epochs" -v world="$world" \
        -v ratio="${ratio:-0}" 'function ceil(x) { return (x == int(x)) ? x : int(x) + 1 }
    BEGIN {
        prompts = bs * ga * world / ng
        if (prompts <= 0) exit
        printf "%d", ceil(ep * (rows - ceil(rows * ratio)) / prompts)
    }'
}

# Non-fatal warnings about settings that waste a run.
warn_about_schedule() { # WORLD_SIZE ARGS...
    local world=$1 steps save lr beta
    shift
    steps=$(total_steps "$world" "$@")
    save=$(flag_value save_steps "$@")
    if [[ -n $steps && $save =~ ^[0-9]+$ ]] && ((save > steps)); then
        warn "save_steps=$save exceeds the $steps optimizer steps of this run: no intermediate checkpoint will be saved"
    fi
    lr=$(flag_value learning_rate "$@")
    beta=$(flag_value beta "$@")
    beta=${beta:-0.04} # ms-swift's GRPO default
    if [[ $TASK_NAME == countdown && -n $lr ]] &&
        awk -v lr="$lr" -v beta="$beta" 'BEGIN { exit !(lr + 0 >= 1e-6 && beta + 0 >= 0.04) }'; then
        warn "learning_rate=$lr with beta=$beta is in the range known to collapse on Countdown (lr >= 1e-6 with beta >= 0.04); the reference recipe uses lr 5e-7, beta 0.001"
    fi
    warn_about_checkpoints "$@"
}

# More training processes than the reference run multiply the completions of
# each optimizer step, and so divide the number of steps, at a learning rate
# tuned for the reference's batch.  The launcher warns instead of changing
# the batch behind the user's back; the warning names the flag that restores
# the reference's updates.
warn_about_global_batch() { # WORLD_SIZE ARGS...
    local world=$1 bs ga completions reference=$TASK_REFERENCE_COMPLETIONS steps keep
    shift
    bs=$(flag_value per_device_train_batch_size "$@")
    ga=$(flag_value gradient_accumulation_steps "$@")
    [[ $bs =~ ^[0-9]+$ && $ga =~ ^[0-9]+$ ]] || return 0
    completions=$((world * bs * ga))
    ((completions != reference)) || return 0
    steps=$(total_steps "$world" "$@")
    if ((reference % (world * bs) == 0)); then
        keep="pass --gradient_accumulation_steps $((reference / (world * bs))) to keep the reference's updates"
    elif ((reference % world == 0)); then
        keep="to keep the reference's updates choose --per_device_train_batch_size x --gradient_accumulation_steps = $((reference / world))"
    else
        keep="no batch split over $world processes gives $reference: scale --learning_rate by $completions/$reference (linear rule) or use a process count that divides $reference"
    fi
    warn "$world training processes x $bs x $ga = $completions completions per optimizer step, not the reference's $reference${steps:+: $steps steps} at a learning rate tuned for $reference; $keep"
}

# Size of the model in billions of parameters, from its name ("...-3B-..."),
# or nothing.
model_billions() { # MODEL
    if [[ ${1##*/} =~ (^|[-_])([0-9]+(\.[0-9]+)?)[Bb]($|[-_]) ]]; then
        printf '%s' "${BASH_REMATCH[2]}"
    fi
}

# How much disk the checkpoints take: bf16 weights are 2 bytes per parameter;
# with optimizer states (fp32 master weights and two Adam moments) 16.
warn_about_checkpoints() { # ARGS...
    local billions keep only tuner
    billions=$(model_billions "$(flag_value model "$@")")
    keep=$(flag_value save_total_limit "$@")
    only=$(flag_value save_only_model "$@")
    tuner=$(flag_value tuner_type "$@")
    [[ -n $billions && $keep =~ ^[0-9]+$ && $tuner == full ]] || return 0
    if is_true "${only:-false}"; then
        note "checkpoints: weights only, ~$(awk -v b="$billions" 'BEGIN { printf "%.0f", 2 * b }') GB each, at most $keep kept"
    else
        warn "--save_only_model $only: each checkpoint also keeps the optimizer states, ~$(awk -v b="$billions" 'BEGIN { printf "%.0f", 16 * b }') GB for ${billions}B parameters, ~$(awk -v b="$billions" -v k="$keep" 'BEGIN { printf "%.0f", 16 * b * k }') GB for $keep checkpoints"
    fi
}

# ----------------------------------------------------------- run helpers

# Creates the output directory and starts the record of what this launcher
# runs (a copy-pastable shell script, default name commands.sh).
prepare_output_dir() { # DIR [RECORD_NAME]
    mkdir -p "$1" || die "cannot create OUTPUT_DIR $1"
    LAUNCH_RECORD=$1/${2:-commands.sh}
    keep_previous "$LAUNCH_RECORD"
    printf '#!/usr/bin/env bash\n# Started by %s on %s (%s)\n' "$LAUNCH_NAME" "${HOSTNAME:-?}" "$(date)" >"$LAUNCH_RECORD"
}

record_command() { # TITLE ENV... -- CMD...
    local title=$1
    shift
    printf '\n# %s\n%s\n' "$title" "$(format_command "$@")" >>"$LAUNCH_RECORD"
}

print_command() { # TITLE ENV... -- CMD...
    local title=$1
    shift
    printf '# %s\n%s\n\n' "$title" "$(format_command "$@")"
}

# Absolute form of a path given relative to the caller's cwd.
absolute_path() { # PATH
    case $1 in
        /*) printf '%s' "$1" ;;
        *) printf '%s/%s' "$PWD" "$1" ;;
    esac
}
