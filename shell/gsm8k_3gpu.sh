#!/usr/bin/env bash
# gsm8k_3gpu.sh: GRPO on GSM8K with ms-swift 4.x on one node with 3 GPUs.
#
# countdown_3gpu.sh's layout with the GSM8K preset of swift_plugins/gsm8k/__init__.py:
# the public "GRPO From Scratch" run (aburkov/theLMbook) in ms-swift flags:
#   Qwen/Qwen2.5-1.5B-Instruct, full fine-tune (ZeRO-3), 500 steps of 7 prompts x 12
#   generations (2 GPUs x 6 x 7 = 84 completions), completions <= 400 tokens,
#   lr 5e-6, beta 0.04, clip epsilon 0.1; rewards gsm8k_accuracy + reasoning_answer_format
#   (<reasoning>...</reasoning> then <answer>...</answer>, asked for by each row's own
#   system message: no --system).
#
# Usage:
#   shell/gsm8k_3gpu.sh [extra swift rlhf flags...]
#   DRY_RUN=1 shell/gsm8k_3gpu.sh           print both commands, start nothing
#   SMOKE=1 shell/gsm8k_3gpu.sh             tiny model, 4 steps on 64 GSM8K rows
#   SMOKE=1 DATASET=rows.jsonl shell/gsm8k_3gpu.sh   the same on local rows (no hub needed)
#   shell/gsm8k_3gpu.sh --help              this text and every setting the recipe reads
set -euo pipefail

# The launcher (swift_plugins/launch) runs with the python of swift's environment, else python3: DRY_RUN
# needs only the standard library.
here=$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")
swift=$(command -v swift || true)
python=${swift%/*}/python3
[[ -n $swift && -x $python ]] || python=python3
PYTHONPATH=$here/..${PYTHONPATH:+:$PYTHONPATH} exec "$python" -m swift_plugins.launch gsm8k_3gpu "$@"
