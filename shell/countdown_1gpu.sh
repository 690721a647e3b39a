#!/usr/bin/env bash
# countdown_1gpu.sh: GRPO on Countdown with ms-swift 4.x on a single GPU (24-80 GB).
#
# Layout: one process on GPU $GPU holds both the trainer (LoRA) and vLLM
# (--vllm_mode colocate).  vLLM takes ~45% of the card while generating and
# sleeps (--sleep_level 1) during the update; model and optimizer are offloaded
# to CPU while vLLM generates.  No server, no extra port.
#
# Usage:
#   shell/countdown_1gpu.sh [extra swift rlhf flags...]
#   DRY_RUN=1 shell/countdown_1gpu.sh       print the command, start nothing
#   SMOKE=1 shell/countdown_1gpu.sh         ~5-minute check of this GPU box (tiny model, 4 steps)
#   RESUME=auto OUTPUT_DIR=<run> shell/countdown_1gpu.sh   continue a run that stopped
#   shell/countdown_1gpu.sh --help          this text and every setting the recipe reads
# Extra flags go to `swift rlhf`; a flag the recipe sets takes the extra flag's
# value instead (each flag appears once), so they override the defaults (e.g. --lora_rank 16).
#
# Stop: Ctrl-C, or `kill <launcher pid>`: either stops the trainer (and only it).
# The launcher exits with the trainer's status
# (3: the watch stopped the run; it names the checkpoint to resume from).
set -euo pipefail

# The launcher (swift_plugins/launch) runs with the python of swift's environment, else python3: DRY_RUN
# needs only the standard library.
here=$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")
swift=$(command -v swift || true)
python=${swift%/*}/python3
[[ -n $swift && -x $python ]] || python=python3
PYTHONPATH=$here/..${PYTHONPATH:+:$PYTHONPATH} exec "$python" -m swift_plugins.launch countdown_1gpu "$@"
