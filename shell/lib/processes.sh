# shellcheck shell=bash
#
# shell/lib/processes.sh: children in their own sessions; on every exit stop
# them (and only them): SIGTERM, then SIGKILL after a grace period. Sourced by
# launch.sh.

LAUNCH_STOP_GRACE=${STOP_GRACE_SECONDS:-10}
LAUNCH_ROOT_PIDS=()       # children started in their own session (rollout, trainer)
LAUNCH_HELPER_PIDS=()     # our own helpers (log followers) in the launcher's group
LAUNCH_NAP_PID=""
LAUNCH_STARTING=0         # a signal now is deferred until the new pid is recorded
LAUNCH_PENDING_SIGNAL=""
LAUNCH_FORCE_STOP=0
LAUNCH_TRAINER_STATUS=0
LAUNCH_ON_SUCCESS=""      # command run by finish_with_trainer after a successful run

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

# Starts CMD with ENV (and without LAUNCH_UNSET_ENV) in a new session (own
# process group, no terminal), its output in LOG; a LOG of an earlier run is
# kept (keep_previous).  Ctrl-C then reaches only the launcher, which stops
# the children itself, in order.  Sets LAUNCH_LAST_PID.
start_in_new_session() { # LOG ENV... -- CMD...
    local log=$1 name
    local -a env_vars=()
    shift
    for name in "${LAUNCH_UNSET_ENV[@]}"; do
        env_vars+=(-u "$name")
    done
    while [[ $1 != -- ]]; do
        env_vars+=("$1")
        shift
    done
    shift
    keep_previous "$log"
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
# On success it runs LAUNCH_ON_SUCCESS (a command) first, if set.
finish_with_trainer() { # LOG TRAINER_PID [ROLLOUT_PID ROLLOUT_LOG]
    local log=$1 trainer=$2
    follow_log "$log" "$trainer"
    wait_for_trainer "$trainer" "${@:3}"
    if ((LAUNCH_TRAINER_STATUS == 0)); then
        note "training finished; outputs in $(dirname "$log")"
        if [[ -n $LAUNCH_ON_SUCCESS ]]; then
            $LAUNCH_ON_SUCCESS
        fi
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
