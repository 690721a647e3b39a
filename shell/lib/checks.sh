# shellcheck shell=bash
#
# shell/lib/checks.sh: refuse before anything starts. Sourced by launch.sh.
#   validation    GPU lists, ports, numbers
#   preflight     nvidia-smi, ms-swift 4.x, plugin file, free ports
#   proxies       loopback / rollout-host traffic must bypass http_proxy & co

LAUNCH_PYTHON=""          # the interpreter `swift` runs with (set by require_swift_4)

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
