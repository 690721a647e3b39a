# shellcheck shell=bash
#
# shell/lib/launch.sh: logic shared by the Countdown GRPO launch recipes
# (countdown_3gpu.sh, countdown_1gpu.sh, countdown_multinode.sh).
#
# Source it from a recipe; it only defines functions and LAUNCH_* globals.
# Linux only: it relies on setsid, /proc and GNU tail, like the GPU nodes do.
#
# Sections:
#   messages      one line per problem on stderr, prefixed by the recipe name
#   validation    GPU lists, ports, numbers: refuse before anything starts
#   preflight     nvidia-smi, ms-swift 4.x, plugin file, free ports
#   proxies       loopback / rollout-host traffic must bypass http_proxy & co
#   commands      copy-pastable printing (DRY_RUN, logs) of env + argv
#   recipe flags  the Countdown flag sets the recipes share
#   warnings      save_steps vs. run length, lr/beta collapse range
#   processes     children in their own sessions; on every exit stop them
#                 (and only them): SIGTERM, then SIGKILL after a grace period

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
LAUNCH_STOP_GRACE=${STOP_GRACE_SECONDS:-10}
LAUNCH_RECORD=""          # commands.sh of this run (prepare_output_dir)
LAUNCH_PYTHON=""          # the interpreter `swift` runs with (set by require_swift_4)
LAUNCH_ROOT_PIDS=()       # children started in their own session (rollout, trainer)
LAUNCH_HELPER_PIDS=()     # our own helpers (log followers) in the launcher's group
LAUNCH_NAP_PID=""
LAUNCH_STARTING=0         # a signal now is deferred until the new pid is recorded
LAUNCH_PENDING_SIGNAL=""
LAUNCH_FORCE_STOP=0
LAUNCH_TRAINER_STATUS=0

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

# -------------------------------------------------------------- validation

require_uint() { # NAME VALUE
    [[ $2 =~ ^[0-9]+$ ]] || die "$1 must be a non-negative integer, got '$2'"
}

require_positive_int() { # NAME VALUE
    [[ $2 =~ ^[1-9][0-9]*$ ]] || die "$1 must be a positive integer, got '$2'"
}

require_port() { # NAME VALUE
    if [[ ! $2 =~ ^[1-9][0-9]*$ ]] || (($2 > 65535)); then
        die "$1 must be a TCP port (1-65535), got '$2'"
    fi
}

require_distinct_ports() { # NAME=PORT...
    local item seen=" " port
    for item in "$@"; do
        port=${item#*=}
        [[ $seen != *" $port "* ]] || die "$item clashes with another port setting ($*): each needs its own port"
        seen+="$port "
    done
}

# A GPU list is what CUDA_VISIBLE_DEVICES takes: indices separated by commas,
# no blanks, no repeats ("0,1").  Anything else would silently change the
# process count or pin two ranks to one card.
require_gpu_list() { # NAME VALUE
    local name=$1 value=$2 dup
    [[ $value =~ ^(0|[1-9][0-9]*)(,(0|[1-9][0-9]*))*$ ]] ||
        die "$name='$value' is not a comma-separated list of GPU indices such as 0,1"
    dup=$(tr , '\n' <<<"$value" | sort -n | uniq -d)
    [[ -z $dup ]] || die "$name='$value' lists GPU ${dup%%$'\n'*} twice"
}

gpu_count() { # LIST -> number of indices
    local -a indices
    IFS=, read -r -a indices <<<"$1"
    echo "${#indices[@]}"
}

require_disjoint_gpus() { # NAME_A LIST_A NAME_B LIST_B
    local gpu
    for gpu in ${2//,/ }; do
        [[ ,$4, != *,$gpu,* ]] ||
            die "$1=$2 and $3=$4 share GPU $gpu: vLLM and the trainer cannot share a card in this layout"
    done
}

# --------------------------------------------------------------- preflight

require_command() { # NAME HINT
    command -v "$1" >/dev/null 2>&1 || die "$1 not found on PATH: $2"
}

# Every index in the given lists must be a GPU that nvidia-smi reports.
require_gpus() { # NAME=LIST...
    require_command nvidia-smi "no NVIDIA driver here? (DRY_RUN=1 prints the commands without GPU checks)"
    local out item name list gpu available
    out=$(nvidia-smi --query-gpu=index --format=csv,noheader 2>&1) ||
        die "nvidia-smi failed: $(head -n 1 <<<"$out")"
    available=$(tr -d ' \r' <<<"$out" | grep -E '^[0-9]+$' | paste -sd , -) || true
    [[ -n $available ]] || die "nvidia-smi lists no GPUs"
    for item in "$@"; do
        name=${item%%=*} list=${item#*=}
        for gpu in ${list//,/ }; do
            [[ ,$available, == *,$gpu,* ]] ||
                die "$name=$list needs GPU $gpu but nvidia-smi lists $(gpu_count "$available") GPU(s): $available"
        done
    done
}

# Which python runs `swift`?  ms-swift has no version command (`swift
# --version` is routed as a sub-command and fails), so ask the interpreter
# named in the console script's shebang.  Handles "#!/path/python",
# "#!/usr/bin/env [-S] python3" and pip's "#!/bin/sh" + "'''exec' python"
# trampoline for long paths; falls back to python3.
swift_python() { # SWIFT_PATH
    local first second interp="" word
    local -a words=()
    { IFS= read -r first && IFS= read -r second; } <"$1" 2>/dev/null || true
    if [[ ${first:-} == '#!'* ]]; then
        read -r -a words <<<"${first#\#!}"
    fi
    if ((${#words[@]})) && [[ ${words[0]##*/} == env ]]; then
        for word in "${words[@]:1}"; do
            [[ $word == -* || $word == *=* ]] && continue
            interp=$word
            break
        done
    elif ((${#words[@]})) && [[ ${words[0]##*/} == sh && ${second:-} == "'''exec' "* ]]; then
        read -r -a words <<<"${second#\'\'\'exec\' }"
        interp=${words[0]//\"/}
    elif ((${#words[@]})) && [[ ${words[0]##*/} == python* ]]; then
        interp=${words[0]}
    fi
    command -v "${interp:-python3}" 2>/dev/null || true
}

# ms-swift 4.x is required: 3.x names the tuner flag --train_type and
# rejects --tuner_type, so a 3.x install would fail after minutes of setup.
require_swift_4() {
    local swift version
    swift=$(command -v swift) || die "swift not found on PATH: install ms-swift 4.x (pip install 'ms-swift>=4,<5')"
    LAUNCH_PYTHON=$(swift_python "$swift")
    [[ -n $LAUNCH_PYTHON ]] || die "cannot tell which python runs $swift (no usable shebang, no python3 on PATH)"
    # With -c, sys.path[0] is "" (the cwd): drop it so that a ./swift checkout
    # cannot shadow the installed package.
    version=$("$LAUNCH_PYTHON" -c '
import sys
if sys.path[:1] == [""]:
    del sys.path[0]
import swift
print(swift.__version__)' 2>/dev/null | tail -n 1) || true
    [[ -n $version ]] || die "cannot import swift with $LAUNCH_PYTHON (the interpreter of $swift): broken ms-swift install?"
    [[ ${version%%.*} == 4 ]] ||
        die "ms-swift $version found ($swift); these recipes need ms-swift 4.x (pip install 'ms-swift>=4,<5')"
    note "ms-swift $version ($swift)"
}

require_plugin() {
    [[ -f $LAUNCH_PLUGIN ]] || die "plugin not found: $LAUNCH_PLUGIN (incomplete checkout?)"
}

# Is PORT bindable on all interfaces?  REUSE=0 binds like ms-swift's
# find_free_port (no SO_REUSEADDR) because `swift rollout` calls it on --port
# and silently moves to another port when the bind fails, even for sockets
# in TIME_WAIT; the trainer would then talk to the wrong port.  REUSE=1 is
# for listeners that set SO_REUSEADDR (torch TCPStore: NCCL group, torchrun).
port_is_free() { # PORT REUSE
    "${LAUNCH_PYTHON:-python3}" -c '
import socket, sys
port, reuse = int(sys.argv[1]), sys.argv[2] == "1"
with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
    if reuse:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        s.bind(("", port))
    except OSError:
        sys.exit(1)
' "$1" "$2"
}

require_free_port() { # NAME PORT REUSE WHAT
    port_is_free "$2" "$3" ||
        die "$1=$2 is already in use on this host ($4); free it or choose another $1"
}

# ----------------------------------------------------------------- proxies

# Value for no_proxy/NO_PROXY: whatever the caller had (either spelling)
# plus HOSTS.  Python's requests (the trainer's vLLM client) honours
# http_proxy, so without this a proxy in the caller's env would swallow
# the trainer's calls to the rollout server.
no_proxy_value() { # HOSTS...
    local value host
    value=${no_proxy:-}
    if [[ -n ${NO_PROXY:-} && ,$value, != *,"$NO_PROXY",* ]]; then
        value=${value:+$value,}$NO_PROXY
    fi
    for host in "$@"; do
        [[ ,$value, == *,"$host",* ]] || value=${value:+$value,}$host
    done
    printf '%s' "$value"
}

# 0 when URL answers 200, proxies bypassed.  curl if present, else python.
http_ok() { # URL
    if command -v curl >/dev/null 2>&1; then
        curl --noproxy '*' --globoff -fsS -o /dev/null --max-time 3 "$1" 2>/dev/null
    else
        "${LAUNCH_PYTHON:-python3}" -c '
import sys, urllib.request
opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
try:
    sys.exit(0 if opener.open(sys.argv[1], timeout=3).status == 200 else 1)
except Exception:
    sys.exit(1)
' "$1" 2>/dev/null
    fi
}

url_host() { # HOST -> HOST, or [HOST] for an IPv6 literal
    if [[ $1 == *:* ]]; then printf '[%s]' "$1"; else printf '%s' "$1"; fi
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

# --------------------------------------------------------------- processes

# Sleeps in the background and waits for it: a foreground `sleep` would
# delay our signal traps until it ends, `wait` is interrupted at once.
nap() { # SECONDS
    sleep "$1" &
    LAUNCH_NAP_PID=$!
    wait "$LAUNCH_NAP_PID" 2>/dev/null || true
    LAUNCH_NAP_PID=""
}

is_alive() { # PID -> 0 if it exists and is not a zombie
    local stat
    stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
    stat=${stat##*) }
    [[ ${stat:0:1} != Z ]]
}

# Live (non-zombie) pids among: the ROOTS, every process in their sessions,
# all their descendants, and the EXTRA pids.  Descendants matter because
# torchrun puts each worker in a session of its own; sessions matter
# because orphans are re-parented away from the tree.
live_process_tree() { # "ROOTS" "EXTRA"
    # cat fails when a process exits between the glob and the read: fine.
    { cat /proc/[0-9]*/stat 2>/dev/null || true; } | awk -v roots="$1" -v extra="$2" '
        {
            pid = $1; rest = $0
            sub(/^.*\) /, "", rest) # comm may contain blanks and parens
            split(rest, f, " ")
            state[pid] = f[1]; ppid[pid] = f[2]; sid[pid] = f[4]
        }
        END {
            n = split(roots, r, " ")
            for (i = 1; i <= n; i++) { mark[r[i]] = 1; root[r[i]] = 1 }
            n = split(extra, e, " ")
            for (i = 1; i <= n; i++) mark[e[i]] = 1
            for (p in sid) if (sid[p] in root) mark[p] = 1
            do {
                changed = 0
                for (p in ppid) if (!(p in mark) && (ppid[p] in mark)) { mark[p] = 1; changed = 1 }
            } while (changed)
            for (p in mark) if ((p in state) && state[p] != "Z") print p
        }'
}

# Starts CMD with ENV in a new session (own process group, no terminal), its
# output in LOG.  Ctrl-C then reaches only the launcher, which stops the
# children itself, in order.  Sets LAUNCH_LAST_PID.
start_in_new_session() { # LOG ENV... -- CMD...
    local log=$1
    local -a env_vars=()
    shift
    while [[ $1 != -- ]]; do
        env_vars+=("$1")
        shift
    done
    shift
    : >"$log"
    # Traps run between commands: one arriving right after the fork must not
    # exit before the pid is recorded, or the cleanup would miss the child.
    LAUNCH_STARTING=1
    # No job control here, so the background child is not a group leader and
    # setsid(1) calls setsid(2) without forking: $! is the session id.
    setsid env "${env_vars[@]}" "$@" >>"$log" 2>&1 </dev/null &
    LAUNCH_LAST_PID=$!
    LAUNCH_ROOT_PIDS+=("$LAUNCH_LAST_PID")
    LAUNCH_STARTING=0
    if [[ -n $LAUNCH_PENDING_SIGNAL ]]; then
        # shellcheck disable=SC2086 # "NAME STATUS"
        on_signal $LAUNCH_PENDING_SIGNAL
    fi
}

# Copies LOG to our stdout until PID exits (the trainer's output goes both to
# its log file and to the terminal, and the log stays complete even if the
# terminal goes away).
follow_log() { # LOG PID
    tail -n +1 -s 0.2 --pid="$2" -f "$1" &
    LAUNCH_HELPER_PIDS+=("$!")
}

# Polls URL until it answers 200.  Fails (the EXIT trap then stops what we
# started) when PID, if given, exits first or when TIMEOUT seconds pass; the
# log tail tells why.
wait_for_health() { # URL TIMEOUT [PID LOG]
    local url=$1 timeout=$2 pid=${3:-} log=${4:-} status=0 deadline=$((SECONDS + $2))
    note "waiting up to ${timeout}s for $url"
    while true; do
        if [[ -n $pid ]] && ! is_alive "$pid"; then
            wait "$pid" 2>/dev/null || status=$?
            show_log_tail "$log" "rollout server"
            die "rollout server exited (status $status) before it became healthy; see $log"
        fi
        if http_ok "$url"; then
            note "rollout server is healthy: $url"
            return 0
        fi
        if ((SECONDS >= deadline)); then
            [[ -n $log ]] && show_log_tail "$log" "rollout server"
            die "rollout server not healthy after ${timeout}s ($url); raise ROLLOUT_TIMEOUT if it is still loading"
        fi
        nap 0.5
    done
}

# Shows the trainer's log on the terminal, waits for the trainer (and watches
# the rollout server, if given), reports, and exits with the trainer's status.
finish_with_trainer() { # LOG TRAINER_PID [ROLLOUT_PID ROLLOUT_LOG]
    local log=$1 trainer=$2
    follow_log "$log" "$trainer"
    wait_for_trainer "$trainer" "${@:3}"
    if ((LAUNCH_TRAINER_STATUS == 0)); then
        note "training finished; outputs in $(dirname "$log")"
    else
        note "trainer exited with status $LAUNCH_TRAINER_STATUS; see $log"
    fi
    exit "$LAUNCH_TRAINER_STATUS"
}

# Waits for the trainer and sets LAUNCH_TRAINER_STATUS to its exit status.
# A rollout server (PID) that dies meanwhile aborts the run: the trainer
# would otherwise hang until its own vLLM timeout.
wait_for_trainer() { # TRAINER_PID [ROLLOUT_PID ROLLOUT_LOG]
    local trainer=$1 rollout=${2:-} rollout_log=${3:-} helper
    while is_alive "$trainer"; do
        if [[ -n $rollout ]] && ! is_alive "$rollout"; then
            show_log_tail "$rollout_log" "rollout server"
            die "rollout server exited during training; stopping the trainer"
        fi
        nap 0.5
    done
    LAUNCH_TRAINER_STATUS=0
    # shellcheck disable=SC2034 # read by the recipes
    wait "$trainer" 2>/dev/null || LAUNCH_TRAINER_STATUS=$?
    # Let the log follower print the trainer's last lines.
    for helper in "${LAUNCH_HELPER_PIDS[@]}"; do
        wait "$helper" 2>/dev/null || true
    done
    LAUNCH_HELPER_PIDS=()
}

# Waits while a long-running server (PID) lives; fails when it exits.
wait_for_server() { # PID LOG
    local status=0
    while is_alive "$1"; do
        nap 1
    done
    wait "$1" 2>/dev/null || status=$?
    show_log_tail "$2" "rollout server"
    die "rollout server exited (status $status); see $2"
}

# SIGTERM to everything we started (see live_process_tree), SIGKILL to what
# is left after STOP_GRACE_SECONDS, or at once on a second Ctrl-C.
stop_started_processes() {
    ((${#LAUNCH_ROOT_PIDS[@]})) || return 0
    local roots="${LAUNCH_ROOT_PIDS[*]}" pids deadline
    pids=$(live_process_tree "$roots" "")
    [[ -n $pids ]] || return 0
    note "stopping started processes (SIGTERM; SIGKILL after ${LAUNCH_STOP_GRACE}s)"
    # shellcheck disable=SC2086 # one pid per word
    kill -TERM $pids 2>/dev/null || true
    deadline=$((SECONDS + LAUNCH_STOP_GRACE))
    while [[ -n $pids ]] && ((SECONDS < deadline && !LAUNCH_FORCE_STOP)); do
        nap 0.2
        pids=$(live_process_tree "$roots" "$pids")
    done
    if [[ -n $pids ]]; then
        warn "still running after ${LAUNCH_STOP_GRACE}s, sending SIGKILL to: $(tr '\n' ' ' <<<"$pids")"
        # shellcheck disable=SC2086
        kill -KILL $pids 2>/dev/null || true
    fi
}

on_signal() { # NAME EXIT_STATUS
    if ((LAUNCH_STARTING)); then
        LAUNCH_PENDING_SIGNAL="$1 $2"
        return 0
    fi
    note "received SIG$1, stopping"
    exit "$2"
}

# Runs on every exit of the launcher (success, failure, die, signal).
cleanup() {
    local status=$?
    set +e # a failing command must not abort the cleanup half-way
    # A second Ctrl-C / TERM skips the grace period instead of aborting the cleanup.
    trap 'LAUNCH_FORCE_STOP=1' INT TERM HUP
    stop_started_processes
    local pid
    for pid in "${LAUNCH_HELPER_PIDS[@]}" "$LAUNCH_NAP_PID"; do
        if [[ -n $pid ]]; then
            kill "$pid" 2>/dev/null || true # may be gone already (Ctrl-C reaches it too)
        fi
    done
    exit "$status"
}

install_cleanup_traps() {
    trap cleanup EXIT
    trap 'on_signal INT 130' INT
    trap 'on_signal TERM 143' TERM
    trap 'on_signal HUP 129' HUP
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
