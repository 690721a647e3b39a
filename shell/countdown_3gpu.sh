#!/usr/bin/env bash
# countdown_3gpu.sh: GRPO on Countdown with ms-swift 4.x on one node with 3 GPUs.
#
# Layout (defaults):
#   GPU 2    swift rollout: vLLM server on 127.0.0.1:$ROLLOUT_PORT (generation)
#   GPU 0,1  swift rlhf --rlhf_type grpo: full fine-tune, DeepSpeed ZeRO-3,
#            asks the server for completions and pushes updated weights to it
#            (NCCL on $ROLLOUT_GROUP_PORT)
#
# Usage:
#   shell/countdown_3gpu.sh [extra swift rlhf flags...]
#   DRY_RUN=1 shell/countdown_3gpu.sh       print both commands, start nothing
#   SMOKE=1 shell/countdown_3gpu.sh         ~5-minute check of this GPU box (tiny model, 4 steps)
#   RESUME=auto OUTPUT_DIR=<run> shell/countdown_3gpu.sh   continue a run that stopped
#   shell/countdown_3gpu.sh --help          this text and every setting the recipe reads
# Extra flags go to `swift rlhf`; a flag the recipe sets takes the extra flag's
# value instead (each flag appears once), so they override the defaults (e.g. --save_steps 50 --max_steps 200).
#
# Stop: Ctrl-C, or `kill <launcher pid>`: either stops the server and the
# trainer (and only them). The launcher exits with the trainer's status
# (3: the watch stopped the run; it names the checkpoint to resume from).
set -euo pipefail

# The launcher (swift_plugins/launch) runs with the python of swift's environment, else python3: DRY_RUN
# needs only the standard library.
here=$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")
swift=$(command -v swift || true)
python=${swift%/*}/python3
[[ -n $swift && -x $python ]] || python=python3
PYTHONPATH=$here/..${PYTHONPATH:+:$PYTHONPATH} exec "$python" -m swift_plugins.launch countdown_3gpu "$@"
