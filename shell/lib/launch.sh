# shellcheck shell=bash
#
# shell/lib/launch.sh: what the CPU scripts (countdown_demo.sh, countdown_cpu_smoke.sh) share.
# The GPU recipes do not source it: they run swift_plugins/launch.
#   LAUNCH_NAME LAUNCH_REPO_ROOT   the script's name and the checkout it belongs to
#   COUNTDOWN_SYSTEM               the ms-swift Countdown example's system prompt (swift_plugins/launch/presets.py)
#   die MESSAGE                    one "<script>: error: MESSAGE" line on stderr, exit 1
#   handle_help ARGS               -h/--help: print the script's header comment (its usage text) and exit

# shellcheck disable=SC2034 # used by the scripts that source this file
LAUNCH_REPO_ROOT=$(cd -P "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
LAUNCH_NAME=${0##*/}
# shellcheck disable=SC2034
readonly COUNTDOWN_SYSTEM='You are a helpful assistant. You first thinks about the reasoning process in the mind and then provides the user with the answer.'

die() {
    printf '%s: error: %s\n' "$LAUNCH_NAME" "$*" >&2
    exit 1
}

handle_help() {
    local line first=1
    case ${1:-} in
        -h | --help) ;;
        *) return 0 ;;
    esac
    while IFS= read -r line; do
        if ((first)); then
            first=0
        elif [[ $line == '#'* ]]; then
            line=${line#\#}
            printf '%s\n' "${line# }"
        else
            break
        fi
    done <"$0"
    exit 0
}
