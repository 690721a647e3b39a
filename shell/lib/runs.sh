# shellcheck shell=bash
#
# shell/lib/runs.sh: what happens to a run's folder over several runs. Sourced by launch.sh.
#   logs      a re-run never overwrites the logs and records of an earlier one
#   resume    RESUME=auto: continue from the newest complete checkpoint
#   smoke     SMOKE=1: the tiny model of make smoke through the same launcher path

LAUNCH_RESUME_ARGS=()     # set by resolve_resume
LAUNCH_SMOKE_MODEL=""     # set by smoke_setup
LAUNCH_SMOKE_DATASET=""
LAUNCH_SMOKE_OUTPUT=""    # the OUTPUT_DIR whose checkpoint smoke_report checks
LAUNCH_SMOKE_PROOF=()     # what a successful smoke run shows, one line each

# Flags and environment that must not change when a run resumes: the model and
# its tuner, the data and its order, and the shape of a step (a ZeRO-3
# checkpoint is sharded per process; the data position counts batches).
LAUNCH_RESUME_FLAGS=(model tuner_type lora_rank lora_alpha target_modules dataset seed deepspeed
    per_device_train_batch_size gradient_accumulation_steps num_generations num_train_epochs max_steps)
LAUNCH_RESUME_ENV=(NPROC_PER_NODE NNODES)

# --------------------------------------------------------------------- logs

# Renames FILE to FILE.1 (or .2, .3: the first free number, so .1 is the
# oldest) so that a re-run in the same OUTPUT_DIR never overwrites it.
keep_previous() { # FILE
    local n=1
    [[ -e $1 ]] || return 0
    while [[ -e $1.$n ]]; do
        n=$((n + 1))
    done
    mv -- "$1" "$1.$n" || die "cannot keep the previous $1 as $1.$n"
    note "kept the previous ${1##*/} as ${1##*/}.$n"
}

# ------------------------------------------------------------------- resume

# A checkpoint is complete when it has the trainer state and the weights:
# transformers' Trainer._save_checkpoint writes trainer_state.json after the
# model (and the optimizer states, when it saves them).
checkpoint_is_complete() { # DIR
    [[ -f $1/trainer_state.json ]] || return 1
    local weights
    for weights in model.safetensors model.safetensors.index.json adapter_model.safetensors \
        pytorch_model.bin pytorch_model.bin.index.json; do
        [[ -f $1/$weights ]] && return 0
    done
    return 1
}

# Optimizer states: DeepSpeed's global_step<N>/ folder, or optimizer.pt.
checkpoint_has_states() { # DIR
    compgen -G "$1/global_step*" >/dev/null || [[ -f $1/optimizer.pt ]]
}

# The newest complete checkpoint under DIR/v*-*/ (ms-swift puts each run in a
# v<N>-<time> folder): the highest step, the most recent folder on a tie.
# Prints its path, or nothing.
newest_checkpoint() { # DIR
    local checkpoint best="" best_step=-1 step
    for checkpoint in "$1"/v*-*/checkpoint-*; do
        step=${checkpoint##*-}
        [[ $step =~ ^[0-9]+$ && -d $checkpoint ]] || continue
        checkpoint_is_complete "$checkpoint" || continue
        if ((step > best_step)) || { ((step == best_step)) && [[ $checkpoint -nt $best ]]; }; then
            best=$checkpoint best_step=$step
        fi
    done
    printf '%s' "$best"
}

# The words of the trainer command recorded in RECORD (into LAUNCH_WORDS).
recorded_trainer_words() { # RECORD
    local text
    text=$(awk '/^# trainer/ { on = 1; next } on && /^$/ { exit } on { sub(/ \\$/, ""); print }' "$1")
    split_words "$1" "$text"
}

# Refuses to resume when the run recorded in RECORD differs from this one in
# LAUNCH_RESUME_FLAGS / LAUNCH_RESUME_ENV.
check_resume_record() { # RECORD ENV... -- ARGS...
    local record=$1 name old new i
    local -a env=() args=() old_env=() old_args=() changes=()
    shift
    while [[ $1 != -- ]]; do
        env+=("$1")
        shift
    done
    shift
    args=("$@")
    if [[ ! -f $record ]]; then
        warn "RESUME=auto: no $record to compare this run's flags with"
        return 0
    fi
    recorded_trainer_words "$record"
    for ((i = 0; i < ${#LAUNCH_WORDS[@]}; i++)); do
        if [[ ${LAUNCH_WORDS[i]} == swift ]]; then
            old_args=("${LAUNCH_WORDS[@]:i+2}")
            break
        fi
        [[ ${LAUNCH_WORDS[i]} == *=* ]] && old_env+=("${LAUNCH_WORDS[i]}")
    done
    ((${#old_args[@]})) || die "RESUME=auto: no trainer command in $record"
    for name in "${LAUNCH_RESUME_FLAGS[@]}"; do
        old=$(flag_value "$name" "${old_args[@]}")
        new=$(flag_value "$name" "${args[@]}")
        [[ $old == "$new" ]] || changes+=("--$name '$old' -> '$new'")
    done
    for name in "${LAUNCH_RESUME_ENV[@]}"; do
        old=$(env_value "$name" "${old_env[@]}")
        new=$(env_value "$name" "${env[@]}")
        [[ $old == "$new" ]] || changes+=("$name '$old' -> '$new'")
    done
    ((${#changes[@]} == 0)) ||
        die "RESUME=auto: this run differs from $record in what a resumed run must keep: $(IFS=';'; printf '%s' "${changes[*]}" | sed 's/;/; /g'); use the same settings, or a new OUTPUT_DIR"
}

env_value() { # NAME KEY=VALUE...
    local name=$1 item
    shift
    for item in "$@"; do
        [[ $item == "$name="* ]] && printf '%s' "${item#*=}"
    done
    return 0
}

# RESUME=auto: sets LAUNCH_RESUME_ARGS to continue from the newest complete
# checkpoint in OUTPUT_DIR.  A weights-only checkpoint (--save_only_model
# true) resumes with --resume_only_model true: ms-swift then loads the weights
# and the trainer state (step, data position) but not the optimizer or the
# scheduler (swift/trainers/mixin.py, _load_optimizer_and_scheduler).
resolve_resume() { # OUTPUT_DIR RECORD_NAME ENV... -- ARGS...
    local dir=$1 record=$1/$2 checkpoint
    shift 2
    LAUNCH_RESUME_ARGS=()
    case ${RESUME:-} in
        "" | 0 | no | false | off) return 0 ;;
        auto) ;;
        *) die "RESUME='$RESUME' is not understood: RESUME=auto continues the run in OUTPUT_DIR" ;;
    esac
    checkpoint=$(newest_checkpoint "$dir")
    [[ -n $checkpoint ]] ||
        die "RESUME=auto: no complete checkpoint in $dir/v*/checkpoint-* (set OUTPUT_DIR to the folder of the run to continue)"
    check_resume_record "$record" "$@"
    LAUNCH_RESUME_ARGS=(--resume_from_checkpoint "$checkpoint")
    if checkpoint_has_states "$checkpoint"; then
        note "RESUME=auto: continuing from $checkpoint (weights and optimizer states)"
    else
        LAUNCH_RESUME_ARGS+=(--resume_only_model true)
        note "RESUME=auto: continuing from $checkpoint (weights only: the step count and the data position continue; the optimizer moments and the learning-rate schedule start afresh)"
    fi
}

# -------------------------------------------------------------------- smoke

# SMOKE=1: make smoke's tiny random Qwen2.5-shaped model (built offline),
# a small dataset, a few short steps, eval and one checkpoint; everything
# else (server, health wait, weight sync, ZeRO-3 or colocate) as in the run.
smoke_setup() { # OUTPUT_DIR SMOKE_DIR
    LAUNCH_SMOKE_OUTPUT=$1
    LAUNCH_SMOKE_MODEL=$2/model
    if [[ $TASK_SMOKE_DATA == generated ]]; then
        LAUNCH_SMOKE_DATASET=$2/data/train.jsonl
        # shellcheck disable=SC2034 # read by add_eval_args
        VAL_DATASET=$2/data/train.test.jsonl
    else
        LAUNCH_SMOKE_DATASET=$TASK_SMOKE_DATA
    fi
}

# Flags of the smoke run, appended to the trainer's (before the user's).
add_smoke_args() {
    RLHF_ARGS+=(
        --model_type qwen2
        --template qwen2_5
        --check_model false
        --max_length 512
        --max_completion_length 64
        --gradient_accumulation_steps 2
        --max_steps 4
        --save_steps 4
        --eval_steps 2
        --report_to none
    )
    [[ $TASK_SMOKE_DATA == generated ]] || RLHF_ARGS+=(--split_dataset_ratio 0.25)
}

# DRY_RUN: the commands that build the smoke model and data.
print_smoke_build() {
    printf '# SMOKE: tiny model and data (python: the interpreter of swift)\n'
    printf 'python -m swift_plugins tiny-model %s\n' "$(shell_quote "$LAUNCH_SMOKE_MODEL")"
    if [[ $TASK_SMOKE_DATA == generated ]]; then
        printf 'python -m swift_plugins.countdown generate --num 64 --test-size 16 --seed 0 --out %s --jobs 1 --quiet\n' \
            "$(shell_quote "$LAUNCH_SMOKE_DATASET")"
    fi
    printf '\n'
}

smoke_build() {
    note "SMOKE: building the tiny model and data under $(dirname "$LAUNCH_SMOKE_MODEL")"
    "$LAUNCH_PYTHON" -m swift_plugins tiny-model "$LAUNCH_SMOKE_MODEL" >/dev/null ||
        die "SMOKE: building the tiny model failed (this package and its [gpu] extra must be installed for $LAUNCH_PYTHON)"
    if [[ $TASK_SMOKE_DATA == generated ]]; then
        "$LAUNCH_PYTHON" -m swift_plugins.countdown generate --num 64 --test-size 16 --seed 0 \
            --out "$LAUNCH_SMOKE_DATASET" --jobs 1 --quiet || die "SMOKE: generating the data failed"
    fi
}

# LAUNCH_ON_SUCCESS of a smoke run: a checkpoint must exist; then say what passed.
smoke_report() {
    local checkpoint line
    checkpoint=$(newest_checkpoint "$LAUNCH_SMOKE_OUTPUT")
    [[ -n $checkpoint ]] || die "SMOKE: the trainer finished but left no complete checkpoint in $LAUNCH_SMOKE_OUTPUT/v*/"
    note "SMOKE passed in ${SECONDS}s. It showed that:"
    for line in "${LAUNCH_SMOKE_PROOF[@]}" \
        "the trainer ran 4 GRPO steps with this package's plugin and rewards, evaluated on the held-out split and saved $checkpoint" \
        "it did not show that the real model fits in memory at full length: watch the first steps of the real run"; do
        note "  - $line"
    done
}
