# shellcheck shell=bash source-path=SCRIPTDIR
#
# shell/lib/launch.sh: logic shared by the Countdown GRPO launch recipes
# (countdown_3gpu.sh, countdown_1gpu.sh, countdown_multinode.sh).
#
# Source it from a recipe; it only defines functions and LAUNCH_* globals.
# Linux only: it relies on setsid, /proc and GNU tail, like the GPU nodes do.
#
# Sections here:
#   messages      one line per problem on stderr, prefixed by the recipe name
#   commands      copy-pastable printing (DRY_RUN, logs) of env + argv
#   recipe flags  the Countdown flag sets the recipes share
#   warnings      save_steps vs. run length, lr/beta collapse range
#   run helpers   output folder, command record, the trainer's end
# and in the files it sources:
#   checks.sh     validation, preflight and proxies: refuse before anything starts
#   processes.sh  children in their own sessions, stopped (and only they) on every exit

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

# shellcheck source=checks.sh
source "$LAUNCH_REPO_ROOT/shell/lib/checks.sh"
# shellcheck source=processes.sh
source "$LAUNCH_REPO_ROOT/shell/lib/processes.sh"

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

# Prints "ENV... CMD..." as a copy-pastable command, one flag per line.
format_command() { # ENV... -- CMD...
    local arg line=""
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
# array RLHF_ARGS of the caller.

# The task: model, data, rewards, prompts, lengths, logging, output.  Values
# from the ms-swift Countdown GRPO example, translated to 4.x flag names.
add_countdown_task_args() { # MODEL DATASET OUTPUT_DIR REPORT_TO
    RLHF_ARGS+=(
        --model "$1"
        --torch_dtype bfloat16
        --dataset "$2"
        --external_plugins "$LAUNCH_PLUGIN"
        --reward_funcs external_countdown think_answer_format
        --system "$COUNTDOWN_SYSTEM"
        --max_length 2048
        --max_completion_length 1024
        --num_generations 8
        --temperature 1.0
        --num_train_epochs 1
        --warmup_ratio 0.01
        --dataloader_num_workers 4
        --save_steps 100
        --save_total_limit 20
        --logging_steps 1
        --log_completions true
        --report_to "$4"
        --output_dir "$3"
    )
}

# Full fine-tune with ZeRO-3 against a `swift rollout` server: the layout of
# the 3-GPU and the multi-node recipes.
add_server_mode_full_args() { # HOST PORT GROUP_PORT
    RLHF_ARGS+=(
        --tuner_type full
        --deepspeed zero3
        --per_device_train_batch_size 8
        --per_device_eval_batch_size 8
        --gradient_accumulation_steps 8
        --learning_rate 5e-7
        --beta 0.001
        --num_iterations 1
        --use_vllm true
        --vllm_mode server
        --vllm_server_host "$1"
        --vllm_server_port "$2"
        --vllm_server_group_port "$3"
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
                die "${arg%%=*} in the extra arguments would point the trainer away from the rollout server this launcher checks; set ROLLOUT_HOST / VLLM_PORT / VLLM_GROUP_PORT instead"
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
# completions, i.e. that / num_generations prompts.  --max_steps wins.
# Prints nothing when the inputs are unknown.
total_steps() { # WORLD_SIZE ARGS...
    local world=$1 rows bs ga ng epochs max_steps
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
    [[ -n $rows && -n $bs && -n $ga && -n $ng && -n $epochs ]] || return 0
    awk -v rows="$rows" -v bs="$bs" -v ga="$ga" -v ng="$ng" -v ep="$epochs" -v world="$world" 'BEGIN {
        prompts = bs * ga * world / ng
        if (prompts <= 0) exit
        steps = ep * rows / prompts
        printf "%d", (steps == int(steps)) ? steps : int(steps) + 1
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
    if [[ -n $lr ]] && awk -v lr="$lr" -v beta="$beta" 'BEGIN { exit !(lr + 0 >= 1e-6 && beta + 0 >= 0.04) }'; then
        warn "learning_rate=$lr with beta=$beta is in the range known to collapse on Countdown (lr >= 1e-6 with beta >= 0.04); the reference recipe uses lr 5e-7, beta 0.001"
    fi
}

# ----------------------------------------------------------- run helpers

# Creates the output directory and starts the record of what this launcher
# runs (a copy-pastable shell script, default name commands.sh).
prepare_output_dir() { # DIR [RECORD_NAME]
    mkdir -p "$1" || die "cannot create OUTPUT_DIR $1"
    LAUNCH_RECORD=$1/${2:-commands.sh}
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
