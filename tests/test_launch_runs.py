"""Unit tests of swift_plugins.launch.runs, advice and results: kept logs, the record, RESUME=auto, warnings."""

import io
import json
import os
import shlex
from pathlib import Path

import pytest

from swift_plugins.launch.advice import advise, total_steps
from swift_plugins.launch.commands import Command, server_commands
from swift_plugins.launch.console import Console
from swift_plugins.launch.flags import Flags
from swift_plugins.launch.results import evaluation_command
from swift_plugins.launch.runs import keep_previous, newest_checkpoint, read_trainer, resume_flags, write_record
from swift_plugins.launch.settings import SettingError, Settings

REPO = Path("/repo")


def checkpoint(folder, step, complete=True, states=False, mtime=None):
    path = folder / f"checkpoint-{step}"
    path.mkdir(parents=True)
    (path / "adapter_model.safetensors").write_text("")
    if complete:
        (path / "trainer_state.json").write_text("{}")
    if states:
        (path / "optimizer.pt").write_text("")
    if mtime:
        os.utime(path, (mtime, mtime))
    return path


def test_keep_previous_numbers_from_the_oldest(tmp_path):
    log = tmp_path / "train.log"
    for text in ("one", "two", "three"):
        keep_previous(log)
        log.write_text(text)
    assert [(tmp_path / f"train.log.{n}").read_text() for n in (1, 2)] == ["one", "two"] and log.read_text() == "three"


def test_newest_complete_checkpoint(tmp_path):
    assert newest_checkpoint(tmp_path) is None
    checkpoint(tmp_path / "v0-a", 200, mtime=1000)
    newer = checkpoint(tmp_path / "v1-b", 200, mtime=2000)
    checkpoint(tmp_path / "v1-b", 300, complete=False)
    (tmp_path / "v1-b" / "checkpoint-last").mkdir()
    assert newest_checkpoint(tmp_path) == newer


def test_record_round_trips_flags_with_newlines(tmp_path):
    console = Console("t.sh", io.StringIO())
    trainer = Command("trainer", (("NPROC_PER_NODE", "2"),), ("swift", "rlhf", "--system", "a\n'b'\n"), "/l")
    write_record(tmp_path, "commands", "t.sh", [trainer], console)
    write_record(tmp_path, "commands", "t.sh", [trainer], console)
    assert read_trainer(tmp_path / "commands.json") == trainer
    assert {path.name for path in tmp_path.iterdir()} == {"commands.sh", "commands.json", "commands.sh.1",
                                                          "commands.json.1"}  # fmt: skip
    assert "kept the previous commands.json as commands.json.1" in console.stream.getvalue()
    text = (tmp_path / "commands.sh").read_text()
    assert text.startswith("#!/usr/bin/env bash\n") and "RESUME=auto reads commands.json" in text


def resume(tmp_path, extra=(), **env):
    s = Settings.from_env("countdown_3gpu", {"OUTPUT_DIR": str(tmp_path), "RESUME": "auto", **env}, REPO)
    console = Console("t.sh", io.StringIO())
    words = resume_flags(s, tmp_path / "commands.json", server_commands(s, list(extra))[1], console)
    return words, console.stream.getvalue()


def test_resume_from_weights_only_or_with_states(tmp_path):
    with pytest.raises(SettingError, match="no complete checkpoint"):
        resume(tmp_path)
    weights = checkpoint(tmp_path / "v0-a", 100)
    words, said = resume(tmp_path)
    assert words == ["--resume_from_checkpoint", str(weights), "--resume_only_model", "true"]
    assert "warning: RESUME=auto: no" in said and "weights only" in said
    states = checkpoint(tmp_path / "v0-a", 200, states=True)
    assert resume(tmp_path)[0] == ["--resume_from_checkpoint", str(states)]


def test_resume_refuses_what_a_resumed_run_must_keep(tmp_path):
    s = Settings.from_env("countdown_3gpu", {"OUTPUT_DIR": str(tmp_path)}, REPO)
    write_record(
        tmp_path, "commands", "t.sh", list(server_commands(s, ["--system", "x\ny"])), Console("t", io.StringIO())
    )
    checkpoint(tmp_path / "v0-a", 100)
    assert resume(tmp_path, ["--system", "x\ny", "--learning_rate", "1e-7"])[0][0] == "--resume_from_checkpoint"
    with pytest.raises(SettingError, match=r"--num_generations '8' -> '16'; NPROC_PER_NODE '2' -> '3'"):
        resume(tmp_path, ["--num_generations", "16"], ROLLOUT_GPU="3", TRAIN_GPUS="0,1,2")


def test_schedule_figures_of_the_readme():
    flags = Flags(["--dataset", "d#50000", "--split_dataset_ratio", "0.01", "--per_device_train_batch_size", "8"])
    flags.update(["--gradient_accumulation_steps", "8", "--num_generations", "8", "--num_train_epochs", "1"])
    assert (total_steps(flags, 2), total_steps(flags, 16), total_steps(flags, 4)) == (3093, 386, 1546)
    flags.update(["--dataset", "hub/id"])
    assert total_steps(flags, 2) is None
    flags.update(["--max_steps", "50"])
    assert total_steps(flags, 2) == 50


def warnings(extra=(), recipe="countdown_3gpu", **env):
    s = Settings.from_env(recipe, {"OUTPUT_DIR": "/runs/a", **env}, REPO)
    flags = Flags(server_commands(s, list(extra))[1].argv[2:])
    console = Console("t.sh", io.StringIO())
    advise(flags, s.world_size, s.task, set(Flags(list(extra)).names()), s.smoke, True, console)
    return [line for line in console.stream.getvalue().splitlines() if "warning:" in line]


def test_warnings():
    assert warnings() == []
    (line,) = warnings(TRAIN_GPUS="0,1,3,4", ROLLOUT_GPU="2")
    assert "4 training processes x 8 x 8 = 256" in line and "--gradient_accumulation_steps 4" in line
    (line,) = warnings(TRAIN_GPUS="0,1,3", ROLLOUT_GPU="2")
    assert "no batch split over 3 processes gives 128" in line
    assert warnings(["--learning_rate", "1e-6"]) == []  # with the recipe's beta 0.001
    (line,) = warnings(["--learning_rate", "1e-6", "--beta", "0.04"])
    assert "collapse" in line
    (line,) = warnings(["--save_only_model", "false"])
    assert "~48 GB for 3B parameters, ~960 GB for 20 checkpoints" in line
    assert "prefer OUTPUT_DIR" in warnings(["--output_dir", "x"])[0]


def test_evaluation_command_pastes_as_printed(tmp_path):
    held_out = tmp_path / "held out.jsonl"
    held_out.write_text("")
    flags = Flags(["--val_dataset", str(held_out), "--system", "It's\nmulti-line"])
    words = shlex.split(evaluation_command("countdown", flags, tmp_path / "v0" / "checkpoint-4", tmp_path))
    assert words == ["python", "-m", "swift_plugins", "evaluate", str(tmp_path / "v0" / "checkpoint-4"), "--task",
                     "countdown", "--data", str(held_out), "--out", str(tmp_path / "eval-final"), "--system",
                     "It's\nmulti-line"]  # fmt: skip
    assert json.dumps(words)  # plain strings
