#!/usr/bin/env bash
# countdown_multinode.sh: GRPO with ms-swift 4.x across several nodes (TASK=countdown by default).
#
# Layout: one host runs the vLLM server (ROLE=rollout); NNODES training nodes
# (ROLE=train) run `swift rlhf` (full fine-tune, DeepSpeed ZeRO-3) through
# torchrun and send generation requests / weight updates to that server.
#
# Step by step (example: rollout on host "gen0", trainers on "node0", "node1"):
#   0. Same repo checkout, same ms-swift 4.x + [gpu] extra and the model reachable
#      on every host; OUTPUT_DIR ideally on a shared filesystem (same path everywhere).
#      Network (see the README, "Multi-node network"): trainers -> gen0 on
#      ROLLOUT_PORT (HTTP) and ROLLOUT_GROUP_PORT (NCCL weight sync), trainers ->
#      node0 on MASTER_PORT, and NCCL's own ephemeral ports between all of them
#      (NCCL_SOCKET_IFNAME picks the interface).
#   1. On gen0:    ROLE=rollout ROLLOUT_GPUS=0 shell/countdown_multinode.sh
#      It prints "ready" once http://gen0:$ROLLOUT_PORT/health/ answers; leave it running.
#   2. On node0:   ROLE=train ROLLOUT_HOST=gen0 NNODES=2 NODE_RANK=0 MASTER_ADDR=node0 \
#                  TRAIN_GPUS=0,1,2,3,4,5,6,7 shell/countdown_multinode.sh
#   3. On node1:   the same with NODE_RANK=1.
#      Each training node first waits (ROLLOUT_TIMEOUT) for the server's health
#      check, then torchrun waits for all NNODES nodes.
#   4. Stop: Ctrl-C (or kill <launcher pid>) on each host; a launcher stops
#      only the processes it started. Stop the trainers before the server.
#   DRY_RUN=1 with the same variables prints the command a host would run.
#   SMOKE=1 on every host: the tiny model of make smoke, 4 short steps.
#   RESUME=auto on every training node: continue from the newest complete checkpoint.
#
# Usage:
#   ROLE=rollout|train shell/countdown_multinode.sh [extra swift rlhf flags...]
# Extra flags (ROLE=train) go to `swift rlhf`, replacing the value of a flag the
# recipe sets.  Extra `swift rollout` flags go in ROLLOUT_ARGS.
# More training processes than the reference's 2 multiply the completions per
# step (2 x 8 GPUs: 1024, 386 steps): the launcher warns and names the
# --gradient_accumulation_steps that keeps the reference's 128.
set -euo pipefail

# The launcher (swift_plugins/launch) runs with the python of swift's environment, else python3: DRY_RUN
# needs only the standard library.
here=$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")
swift=$(command -v swift || true)
python=${swift%/*}/python3
[[ -n $swift && -x $python ]] || python=python3
PYTHONPATH=$here/..${PYTHONPATH:+:$PYTHONPATH} exec "$python" -m swift_plugins.launch countdown_multinode "$@"
