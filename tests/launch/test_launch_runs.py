"""Unit tests of swift_plugins.launch.runs, launch.checks.advise and the evaluation command of launch.recipes: kept
logs, the record, RESUME=auto, warnings."""

import json
import math
import shlex

import pytest

from swift_plugins.core.commands import Command
from swift_plugins.core.files import keep_previous
from swift_plugins.core.flags import Flags
from swift_plugins.launch.checks import advise
from swift_plugins.launch.commands import trainer_command, trainer_flags
from swift_plugins.launch.recipes import HELD_OUT, evaluation_command
from swift_plugins.launch.runs import read_trainer, resume_flags, write_record
from swift_plugins.launch.settings import SettingError
from swift_plugins.preflight.advice import model_billions
from swift_plugins.tasks import task_named
from swift_plugins.watch.checkpoints import newest_checkpoint
from swift_plugins.watch.live import STOPPED

from .. import helpers
from ..helpers import make_checkpoint

PRESET = task_named("countdown").preset
SERVER = Flags(PRESET.server_args)
BATCH, ACCUMULATION = int(SERVER.value("per_device_train_batch_size")), int(SERVER.value("gradient_accumulation_steps"))
GENERATIONS = int(Flags(PRESET.args).value("num_generations"))
ROWS = int(PRESET.dataset.rsplit("#", 1)[1])
BILLIONS = model_billions(PRESET.model)


def steps(rows, world):
    """Optimizer steps of the preset on ``rows`` rows less the 1% held out (the last partial group dropped)."""
    return (rows - math.ceil(rows / 100)) // (world * BATCH * ACCUMULATION // GENERATIONS)


def test_keep_previous_numbers_from_the_oldest(tmp_path):
    log = tmp_path / "train.log"
    for text in ("one", "two", "three"):
        keep_previous(log)
        log.write_text(text)
    assert [(tmp_path / f"train.log.{n}").read_text() for n in (1, 2)] == ["one", "two"] and log.read_text() == "three"


def test_newest_complete_checkpoint(tmp_path):
    assert newest_checkpoint(tmp_path) is None
    make_checkpoint(tmp_path / "v0-a", 200, weights="adapter_model.safetensors", mtime=1000)
    newer = make_checkpoint(tmp_path / "v1-b", 200, weights="adapter_model.safetensors", mtime=2000)
    make_checkpoint(tmp_path / "v1-b", 300, weights="adapter_model.safetensors", complete=False)
    (tmp_path / "v1-b" / "checkpoint-last").mkdir()
    assert newest_checkpoint(tmp_path) == newer


def test_a_run_the_watch_stopped_offers_only_checkpoints_saved_before_its_failure(tmp_path):
    run = tmp_path / "v0-a"
    before = make_checkpoint(run, 200, mtime=1000)
    make_checkpoint(run, 300, mtime=2000)
    assert newest_checkpoint(tmp_path).name == "checkpoint-300"
    (run / STOPPED).write_text(json.dumps({"rule": "reward-collapse", "step": 320, "since": 260}))
    assert newest_checkpoint(tmp_path) == before
    resumed = make_checkpoint(tmp_path / "v1-b", 400, mtime=3000)  # the run resumed from there: its own folder
    assert newest_checkpoint(tmp_path) == resumed


def test_record_round_trips_flags_with_newlines(tmp_path):
    said = helpers.console()
    trainer = Command("trainer", (("NPROC_PER_NODE", "2"),), ("swift", "rlhf", "--system", "a\n'b'\n"), "/l")
    write_record(tmp_path, "commands", "t.sh", [trainer], said)
    write_record(tmp_path, "commands", "t.sh", [trainer], said)
    assert read_trainer(tmp_path / "commands.json") == trainer
    assert {path.name for path in tmp_path.iterdir()} == {"commands.sh", "commands.json", "commands.sh.1",
                                                          "commands.json.1"}  # fmt: skip
    assert "kept the previous commands.json as commands.json.1" in said.stream.getvalue()
    text = (tmp_path / "commands.sh").read_text()
    assert text.startswith("#!/usr/bin/env bash\n") and "RESUME=auto reads commands.json" in text
    assert "\n# trainer\nenv -u VLLM_PORT NPROC_PER_NODE=2 swift rlhf" in text


def resume(tmp_path, extra=(), **env):
    s = helpers.settings("countdown_3gpu", OUTPUT_DIR=str(tmp_path), RESUME="auto", **env)
    said = helpers.console()
    words = resume_flags(s, trainer_command(s, trainer_flags(s, list(extra))), said)
    return words, said.stream.getvalue()


def test_resume_from_weights_only_or_with_states(tmp_path):
    with pytest.raises(SettingError, match="no complete checkpoint"):
        resume(tmp_path)
    weights = make_checkpoint(tmp_path / "v0-a", 100, weights="adapter_model.safetensors")
    words, said = resume(tmp_path)
    assert words == ["--resume_from_checkpoint", str(weights), "--resume_only_model", "true"]
    assert f"warning: RESUME=auto: no {tmp_path / 'commands.json'}" in said and "weights only" in said
    states = make_checkpoint(tmp_path / "v0-a", 200, states="optimizer.pt")
    assert resume(tmp_path)[0] == ["--resume_from_checkpoint", str(states)]
    zero3 = make_checkpoint(tmp_path / "v0-a", 300, states="global_step")
    words, said = resume(tmp_path)
    assert words == ["--resume_from_checkpoint", str(zero3)] and "(weights and optimizer states)" in said


def test_resume_refuses_what_a_resumed_run_must_keep(tmp_path):
    first = helpers.plan("countdown_3gpu", ["--system", "x\ny"], OUTPUT_DIR=str(tmp_path))
    write_record(tmp_path, "commands", "t.sh", [first.rollout, first.trainer], helpers.console())
    make_checkpoint(tmp_path / "v0-a", 100)
    assert resume(tmp_path, ["--system", "x\ny", "--learning_rate", "1e-7"])[0][0] == "--resume_from_checkpoint"
    with pytest.raises(SettingError, match=r"--num_generations '8' -> '16'; NPROC_PER_NODE '2' -> '3'"):
        resume(tmp_path, ["--num_generations", "16"], ROLLOUT_GPU="3", TRAIN_GPUS="0,1,2")
    write_record(tmp_path, "commands", "t.sh", [first.rollout], helpers.console())
    with pytest.raises(SettingError, match=f"RESUME=auto: no trainer command in {tmp_path / 'commands.json'}"):
        resume(tmp_path)


def test_resume_reads_the_record_of_its_own_node(tmp_path):
    node = dict(ROLE="train", ROLLOUT_HOST="g", NNODES="2", NODE_RANK="1", MASTER_ADDR="n0", OUTPUT_DIR=str(tmp_path))
    first = helpers.plan("countdown_multinode", ["--seed", "9"], **node)
    write_record(tmp_path, first.settings.record, "t.sh", [first.trainer], helpers.console())
    make_checkpoint(tmp_path / "v0-a", 100)
    resumed = helpers.plan("countdown_multinode", ["--seed", "9"], **node, RESUME="auto")
    assert resumed.flags.value("resume_from_checkpoint") == str(tmp_path / "v0-a" / "checkpoint-100")
    with pytest.raises(SettingError, match=f"differs from {tmp_path / 'commands-train-node1.json'} .*--seed '9' -> ''"):
        helpers.plan("countdown_multinode", **node, RESUME="auto")
    notes = helpers.console()
    helpers.plan("countdown_multinode", said=notes, **{**node, "RESUME": "auto", "NODE_RANK": "0"})
    assert f"no {tmp_path / 'commands-train-node0.json'} to compare" in notes.stream.getvalue()


def said(extra=(), recipe="countdown_3gpu", **env):
    """What advise says about the plan of ``recipe``."""
    out = helpers.console()
    advise(helpers.plan(recipe, extra, **env), out)
    return out.stream.getvalue()


def warnings(extra=(), recipe="countdown_3gpu", **env):
    return [line for line in said(extra, recipe, **env).splitlines() if "warning:" in line]


def test_warnings():
    assert warnings() == [] and warnings(recipe="countdown_1gpu") == [] and warnings(recipe="countdown_cpu_smoke") == []
    (line,) = warnings(TRAIN_GPUS="0,1,3,4", ROLLOUT_GPU="2")
    reference = PRESET.reference_completions
    assert f"4 training processes x {BATCH} x {ACCUMULATION} = {4 * BATCH * ACCUMULATION}" in line
    assert f"--gradient_accumulation_steps {reference // (4 * BATCH)}" in line
    (line,) = warnings(TRAIN_GPUS="0,1,3", ROLLOUT_GPU="2")
    assert f"no batch split over 3 processes gives {reference}" in line
    lr, beta = PRESET.collapse
    assert warnings(["--learning_rate", lr]) == []  # with the recipe's beta
    (line,) = warnings(["--learning_rate", lr, "--beta", beta])
    assert f"learning_rate={lr}" in line and f"beta={beta}" in line and "collapse" in line
    (line,) = warnings(["--save_only_model", "false"])
    assert (
        f"~{16 * BILLIONS:.0f} GB for {BILLIONS:g}B parameters, ~{16 * BILLIONS * 20:.0f} GB for 20 checkpoints" in line
    )
    assert f"checkpoints: weights only, ~{2 * BILLIONS:.0f} GB each, at most 20 kept" in said()
    assert "warning: --output_dir in the extra arguments" in warnings(["--output_dir", "x"], "countdown_1gpu")[0]
    assert "prefer OUTPUT_DIR" in warnings(["--output_dir", "x"])[0]


@pytest.mark.parametrize(
    "extra, env, words",
    [
        (["--save_steps", "5000"], {}, ["save_steps=5000", f"{steps(ROWS, 2)} optimizer steps"]),
        (["--max_steps", "50"], {}, ["save_steps=100", "50 optimizer steps"]),
        (["--dataset", PRESET.dataset.replace(f"#{ROWS}", "#1000")], {},
         ["save_steps=100", f"{steps(1000, 2)} optimizer steps"]),
    ],
)  # fmt: skip
def test_no_checkpoint_before_the_end_is_one_warning(extra, env, words):
    (line,) = warnings(extra, **env)
    for word in words:
        assert word in line


def test_the_steps_of_the_warning_count_the_training_gpus():
    (line, _) = warnings(["--save_steps", "2000"], ROLLOUT_GPU="4", TRAIN_GPUS="0,1,2,3")  # and the batch's
    assert f"save_steps=2000 exceeds the {steps(ROWS, 4)} optimizer steps" in line


def test_multinode_warns_that_more_gpus_change_the_schedule():
    (line,) = warnings(
        recipe="countdown_multinode", ROLE="train", ROLLOUT_HOST="gen0", NNODES="2", NODE_RANK="0", MASTER_ADDR="n0"
    )
    reference, completions = PRESET.reference_completions, 16 * BATCH * ACCUMULATION
    for words in ("16 training processes", f"{completions} completions", f"{steps(ROWS, 16)} steps", str(reference),
                  f"--gradient_accumulation_steps {reference // (16 * BATCH)}"):  # fmt: skip
        assert words in line


@pytest.mark.parametrize("recipe", ["gsm8k_3gpu", "gsm8k_1gpu"])
def test_the_gsm8k_recipes_warn_of_nothing(recipe):
    assert warnings(recipe=recipe) == []


def test_evaluation_command_pastes_as_printed(tmp_path):
    held_out = tmp_path / "held out.jsonl"
    held_out.write_text("")
    run = helpers.plan("countdown_1gpu", ["--system", "It's\nmulti-line"], OUTPUT_DIR=str(tmp_path),
                       VAL_DATASET=str(held_out))  # fmt: skip
    words = shlex.split(evaluation_command(run, tmp_path / "v0" / "checkpoint-4"))
    assert words == ["python", "-m", "swift_plugins", "evaluate", str(tmp_path / "v0" / "checkpoint-4"), "--task",
                     "countdown", "--data", str(held_out), "--out", str(tmp_path / "eval-final"), "--system",
                     "It's\nmulti-line"]  # fmt: skip
    # no local held-out file: a placeholder the run's message explains; GSM8K rows carry their own system prompt
    words = shlex.split(evaluation_command(helpers.plan("gsm8k_1gpu"), tmp_path / "checkpoint-4"))
    assert helpers.flag(words, "--data") == HELD_OUT and helpers.flag(words, "--task") == "gsm8k"
    assert "--system" not in words
