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
#   shell/countdown_1gpu.sh --help          this text
# Extra flags go to `swift rlhf`; a flag the recipe sets takes the extra flag's
# value instead (each flag appears once), so they override the defaults (e.g. --lora_rank 16).
#
# Environment (default):
#   MODEL           Qwen/Qwen2.5-3B-Instruct
#   DATASET         zouxuhong/Countdown-Tasks-3to4#50000
#   VAL_DATASET     held out: DATASET's <name>.test.<ext> if local, else 1% of DATASET; none: no eval
#   OUTPUT_DIR      <repo>/output/countdown_1gpu-<YYYYmmdd-HHMMSS>
#                   (train.log, commands.sh; checkpoints in v0-*/; earlier logs kept as *.1, *.2)
#   GPU             0            the card: an index or a GPU-/MIG- id; under an inherited
#                                CUDA_VISIBLE_DEVICES an index is a position in it
#   MASTER_PORT     29500        torchrun rendezvous port
#   VLLM_MAX_MODEL_LEN 4096
#   VLLM_GPU_MEMORY_UTILIZATION 0.45   lower it on a 24 GB card if training OOMs
#   REPORT_TO       tensorboard  or wandb, swanlab
#   RESUME          ""           auto: continue from the newest complete checkpoint in OUTPUT_DIR
#   SMOKE           0            1: make smoke's tiny model, 4 short steps, same launcher path
#                   with DATASET set: its rows, not generated ones
#   WATCH           stop         the watch over logging.jsonl (docs/watch.md): stop the run on a
#                   fatal verdict (collapse, truncation, zero spread, NaN, KL, stall); warn; off
#   WATCH_SET       -            the watch's thresholds, NAME=VALUE ... (stall_seconds=3600)
#   STOP_GRACE_SECONDS 10        SIGTERM -> SIGKILL delay when stopping
#   DRY_RUN         0
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
