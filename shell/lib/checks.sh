# shellcheck shell=bash
#
# shell/lib/checks.sh: refuse before anything starts. Sourced by launch.sh.
#   validation    GPU lists, ports, numbers, renamed settings, ROLLOUT_ARGS
#   preflight     nvidia-smi, ms-swift 4.x, vLLM and DeepSpeed, plugin file, free ports
#   proxies       loopback / rollout-host traffic must bypass http_proxy & co

LAUNCH_PYTHON=""          # the interpreter `swift` runs with (set by require_swift_4)
# shellcheck disable=SC2034 # results read by the recipes
LAUNCH_GPUS=""            # set by resolve_gpus
LAUNCH_WORDS=()           # set by split_words
# The CUDA_VISIBLE_DEVICES the launcher inherited (a scheduler's assignment):
# GPU settings index into it, see resolve_gpus.
LAUNCH_INHERITED_GPUS=${CUDA_VISIBLE_DEVICES-}
LAUNCH_HAS_INHERITED_GPUS=${CUDA_VISIBLE_DEVICES+1}

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

# A GPU is an index or an id as CUDA_VISIBLE_DEVICES takes it: GPU-<uuid>
# (or a prefix of it), MIG-<uuid>, MIG-GPU-<uuid>/<gi>/<ci>.
LAUNCH_GPU_ITEM='(0|[1-9][0-9]*|(GPU|MIG)-[A-Za-z0-9][A-Za-z0-9/_-]*)'

# A GPU list is comma-separated GPUs, no blanks, no repeats ("0,1").
# Anything else would silently change the process count or pin two ranks to
# one card.
require_gpu_list() { # NAME VALUE
    local name=$1 value=$2 dup
    [[ $value =~ ^$LAUNCH_GPU_ITEM(,$LAUNCH_GPU_ITEM)*$ ]] ||
        die "$name='$value' is not a comma-separated list of GPU indices or ids such as 0,1 or GPU-<uuid>"
    dup=$(tr , '\n' <<<"$value" | sort | uniq -d)
    [[ -z $dup ]] || die "$name='$value' lists GPU ${dup%%$'\n'*} twice"
}

# Sets LAUNCH_GPUS to the CUDA_VISIBLE_DEVICES a child gets for the setting
# NAME=VALUE.  Without an inherited CUDA_VISIBLE_DEVICES that is VALUE.  With
# one (a scheduler gave this job GPUs 5,6,7), an index is a position in that
# list (0 -> 5) and an id must be one of its entries: the recipe never reaches
# for GPUs outside what it was given.
resolve_gpus() { # NAME VALUE
    local name=$1 value=$2 item resolved=""
    local -a inherited items
    require_gpu_list "$name" "$value"
    if [[ -z $LAUNCH_HAS_INHERITED_GPUS ]]; then
        LAUNCH_GPUS=$value
        return 0
    fi
    [[ -n $LAUNCH_INHERITED_GPUS ]] ||
        die "CUDA_VISIBLE_DEVICES is set but empty (no GPU visible): unset it, or set it to the GPUs this job may use"
    require_gpu_list CUDA_VISIBLE_DEVICES "$LAUNCH_INHERITED_GPUS"
    IFS=, read -r -a inherited <<<"$LAUNCH_INHERITED_GPUS"
    IFS=, read -r -a items <<<"$value"
    for item in "${items[@]}"; do
        if [[ $item =~ ^[0-9]+$ ]]; then
            ((item < ${#inherited[@]})) ||
                die "$name=$value: position $item is beyond the inherited CUDA_VISIBLE_DEVICES=$LAUNCH_INHERITED_GPUS (${#inherited[@]} GPU(s)); $name indexes into that list"
            item=${inherited[item]}
        else
            [[ ,$LAUNCH_INHERITED_GPUS, == *,"$item",* ]] ||
                die "$name=$value: $item is not in the inherited CUDA_VISIBLE_DEVICES=$LAUNCH_INHERITED_GPUS"
        fi
        resolved+=${resolved:+,}$item
    done
    # shellcheck disable=SC2034 # read by the recipes
    LAUNCH_GPUS=$resolved
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

# VLLM_PORT and VLLM_GROUP_PORT were these recipes' names for ROLLOUT_PORT and
# ROLLOUT_GROUP_PORT.  VLLM_PORT is also vLLM's own variable (see
# LAUNCH_UNSET_ENV): an old habit must not silently keep working half-way.
# When ROLLOUT_PORT is set too, or the recipe has no rollout port (1 GPU),
# VLLM_PORT is someone else's (a Kubernetes service named vllm sets it): it is
# only kept from the children.
check_renamed_settings() { # server|colocate
    if [[ $1 == server && -n ${VLLM_PORT+set} && -z ${ROLLOUT_PORT:-} ]]; then
        die "VLLM_PORT is set ('$VLLM_PORT'): the rollout HTTP port is now ROLLOUT_PORT (vLLM reads VLLM_PORT as the base of its internal ports, which breaks the server); use ROLLOUT_PORT=... and unset VLLM_PORT"
    fi
    if [[ -n ${VLLM_GROUP_PORT+set} ]]; then
        die "VLLM_GROUP_PORT is now ROLLOUT_GROUP_PORT; use ROLLOUT_GROUP_PORT=$VLLM_GROUP_PORT"
    fi
    if [[ -n ${VLLM_PORT+set} ]]; then
        note "VLLM_PORT='$VLLM_PORT' in the environment is vLLM's own setting: it is removed from the environment of what this launcher starts"
    fi
}

# Splits VALUE into words the way a shell does (quotes and backslashes, no
# expansion: xargs' quoting rules) into LAUNCH_WORDS, so ROLLOUT_ARGS can
# carry a quoted JSON value.
split_words() { # NAME VALUE
    local error
    LAUNCH_WORDS=()
    [[ -n ${2//[[:space:]]/} ]] || return 0
    if ! error=$(xargs true <<<"$2" 2>&1); then
        error=${error#xargs: }
        die "$1: cannot split into arguments: ${error%%;*}"
    fi
    # shellcheck disable=SC2034 # read by the callers
    mapfile -d '' LAUNCH_WORDS < <(xargs printf '%s\0' <<<"$2")
}

# Extra `swift rollout` flags may not move the server: argparse keeps the last
# --port/--host, and the launcher would check health (and the trainer
# connect) where no server listens.
check_rollout_args() { # ARGS...
    local arg
    for arg in "$@"; do
        case ${arg%%=*} in
            --port | --host)
                die "${arg%%=*} in ROLLOUT_ARGS would move the server away from where the launcher checks it and the trainer connects; set ROLLOUT_PORT (and ROLLOUT_BIND_HOST on a multi-node rollout host)"
                ;;
        esac
    done
}

# --------------------------------------------------------------- preflight

require_command() { # NAME HINT
    command -v "$1" >/dev/null 2>&1 || die "$1 not found on PATH: $2"
}

# Every GPU in the given lists must be one that nvidia-smi reports: an index
# among its indices (nvidia-smi ignores CUDA_VISIBLE_DEVICES), an id the
# prefix of one of its GPU or MIG UUIDs.
require_gpus() { # NAME=LIST...
    require_command nvidia-smi "no NVIDIA driver here? (DRY_RUN=1 prints the commands without GPU checks)"
    local out item name list gpu available uuids
    out=$(nvidia-smi --query-gpu=index --format=csv,noheader 2>&1) ||
        die "nvidia-smi failed: $(head -n 1 <<<"$out")"
    available=$(tr -d ' \r' <<<"$out" | grep -E '^[0-9]+$' | paste -sd , -) || true
    [[ -n $available ]] || die "nvidia-smi lists no GPUs"
    uuids=$(nvidia-smi -L 2>/dev/null | grep -oE 'UUID: [^)]+' | cut -c 7-) || true
    for item in "$@"; do
        name=${item%%=*} list=${item#*=}
        for gpu in ${list//,/ }; do
            if [[ $gpu =~ ^[0-9]+$ ]]; then
                [[ ,$available, == *,$gpu,* ]] ||
                    die "$name=$list needs GPU $gpu but nvidia-smi lists $(gpu_count "$available") GPU(s): $available"
            else
                grep -q -- "^$gpu" <<<"$uuids" ||
                    die "$name=$list needs $gpu but no GPU or MIG device of nvidia-smi -L has that UUID"
            fi
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

# vLLM (server and colocate modes, trainer and rollout alike) and DeepSpeed
# (--deepspeed) are not dependencies of ms-swift 4.6: without vllm, `swift
# rollout` swallows the ImportError (swift/pipelines/infer/rollout.py, the
# try/except around the vllm imports) and fails later with a NameError, and
# --deepspeed fails in require_version('deepspeed') (swift/arguments/
# sft_args.py) after the model download.  Import them with swift's interpreter.
require_gpu_libraries() { # MODULE...
    local out line failed=() imported=()
    (($#)) || return 0
    out=$("$LAUNCH_PYTHON" -c '
import importlib, sys
if sys.path[:1] == [""]:
    del sys.path[0]
for name in sys.argv[1:]:
    try:
        module = importlib.import_module(name)
    except Exception as e:  # a broken CUDA install raises more than ImportError
        detail = (str(e).strip().splitlines() or [""])[0]
        print("@@", name, "FAILED", type(e).__name__ + ": " + detail)
    else:
        print("@@", name, getattr(module, "__version__", "(no version)"))
' "$@" 2>/dev/null) || true
    while read -r line; do
        [[ $line == '@@ '* ]] || continue
        line=${line#@@ }
        if [[ $line == *' FAILED '* ]]; then
            failed+=("${line%% *}: ${line#* FAILED }")
        else
            imported+=("$line")
        fi
    done <<<"$out"
    ((${#failed[@]} == 0)) ||
        die "cannot import ${failed[*]} with $LAUNCH_PYTHON (the interpreter of swift); install the GPU extra there: pip install -e '${LAUNCH_REPO_ROOT}[gpu]' (after the torch build vLLM needs)"
    ((${#imported[@]} == $#)) || die "cannot run $LAUNCH_PYTHON to import $*"
    note "$(IFS=,; printf '%s' "${imported[*]}" | sed 's/,/, /g') ($LAUNCH_PYTHON)"
}

# The modules a `swift rlhf` command line needs beyond ms-swift.
gpu_libraries_for() { # ARGS...
    if is_true "$(flag_value use_vllm "$@")"; then
        printf 'vllm '
    fi
    if [[ -n $(flag_value deepspeed "$@") ]]; then
        printf 'deepspeed '
    fi
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
