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
#   shell/countdown_3gpu.sh --help          this text
# Extra flags go to `swift rlhf`; a flag the recipe sets takes the extra flag's
# value instead (each flag appears once), so they override the defaults (e.g. --save_steps 50 --max_steps 200).
#
# Environment (default):
#   MODEL           Qwen/Qwen2.5-3B-Instruct
#   DATASET         zouxuhong/Countdown-Tasks-3to4#50000
#   VAL_DATASET     held out: DATASET's <name>.test.<ext> if local, else 1% of DATASET; none: no eval
#   OUTPUT_DIR      <repo>/output/countdown_3gpu-<YYYYmmdd-HHMMSS>
#                   (rollout.log, train.log, commands.sh; checkpoints in v0-*/;
#                   logs of an earlier run in the same folder are kept as *.1, *.2)
#   ROLLOUT_GPU     2            GPU of the vLLM server
#   TRAIN_GPUS      0,1          GPUs of the trainer; NPROC_PER_NODE = their count
#                   GPU settings are indices or GPU-/MIG- ids; under an inherited
#                   CUDA_VISIBLE_DEVICES (e.g. 5,6,7) indices are positions in it
#   ROLLOUT_PORT    8000         HTTP port of the server (loopback only; was VLLM_PORT)
#   ROLLOUT_GROUP_PORT 51216     NCCL weight-sync port (was VLLM_GROUP_PORT)
#   MASTER_PORT     29500        torchrun rendezvous port
#   VLLM_MAX_MODEL_LEN 4096      prompt + 1024 completion tokens must fit
#   VLLM_GPU_MEMORY_UTILIZATION 0.9
#   ROLLOUT_ARGS    ""           extra `swift rollout` flags, shell-quoted (not --port/--host)
#   ROLLOUT_TIMEOUT 900          seconds for the server to become healthy
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
