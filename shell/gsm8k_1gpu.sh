#!/usr/bin/env bash
# gsm8k_1gpu.sh: GRPO on GSM8K with ms-swift 4.x on a single GPU (24-80 GB), LoRA.
#
# countdown_1gpu.sh's layout with the GSM8K preset of swift_plugins/gsm8k/__init__.py.  LoRA:
# r32/alpha64 all-linear, lr 5e-5 (about 10x the public
# run's full fine-tune 5e-6), beta 0.04, clip epsilon 0.1, 500 steps of 7 prompts
# x 12 generations (6 x 14 = 84 completions), completions <= 400 tokens; rewards
# gsm8k_accuracy + reasoning_answer_format; no --system (each row asks for the format).
#
# Usage:
#   shell/gsm8k_1gpu.sh [extra swift rlhf flags...]
#   DRY_RUN=1 shell/gsm8k_1gpu.sh           print the command, start nothing
#   SMOKE=1 shell/gsm8k_1gpu.sh             tiny model, 4 steps on 64 GSM8K rows
#   SMOKE=1 DATASET=rows.jsonl shell/gsm8k_1gpu.sh   the same on local rows (no hub needed)
#   shell/gsm8k_1gpu.sh --help              this text and every setting the recipe reads
set -euo pipefail

# The launcher (swift_plugins/launch) runs with the python of swift's environment, else python3: DRY_RUN
# needs only the standard library.
here=$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")
swift=$(command -v swift || true)
python=${swift%/*}/python3
[[ -n $swift && -x $python ]] || python=python3
PYTHONPATH=$here/..${PYTHONPATH:+:$PYTHONPATH} exec "$python" -m swift_plugins.launch gsm8k_1gpu "$@"
