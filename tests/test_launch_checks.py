"""Unit tests of swift_plugins.launch.plan_checks and host_checks (ms-swift's batch arithmetic is checked against
ms-swift itself in tests/test_launchers.py::test_flags_parse_with_installed_ms_swift, in the one swift import)."""

import io
import os
import socket
import sys
from pathlib import Path

import pytest

from swift_plugins.launch.commands import server_commands
from swift_plugins.launch.console import Console
from swift_plugins.launch.flags import Flags
from swift_plugins.launch.host_checks import check_gpus, check_ports, port_is_free, swift_interpreter
from swift_plugins.launch.plan_checks import check_batches, check_lengths, check_plan, check_report_to
from swift_plugins.launch.settings import SettingError, Settings

REPO = Path(__file__).resolve().parents[1]
STAND_INS = REPO / "tests" / "stand_ins"


def plan(tmp_path, extra=(), **env):
    s = Settings.from_env("countdown_3gpu", {"OUTPUT_DIR": str(tmp_path / "out"), **env}, REPO)
    rollout, trainer = server_commands(s, list(extra))
    console = Console("t.sh", io.StringIO())
    check_plan(s, trainer, rollout, set(Flags(list(extra)).names()), console)
    return console.stream.getvalue()


def test_the_recipe_defaults_pass(tmp_path):
    assert plan(tmp_path) == ""


@pytest.mark.parametrize(
    "extra, env, words",
    [
        (["--num_generations", "7"], {}, "--num_generations 7 does not divide the 128 completions"),
        (["--per_device_eval_batch_size", "3"], {}, "global eval batch 2 x --per_device_eval_batch_size 3"),
        (["--generation_batch_size", "100"], {}, "multiple of the global batch 16"),
        ([], {"VLLM_MAX_MODEL_LEN": "100"}, r"VLLM_MAX_MODEL_LEN=100 .* \(3072 tokens\)"),
        (["--max_completion_length", "4000"], {}, "set VLLM_MAX_MODEL_LEN=6048 or more"),
        ([], {"REPORT_TO": "foo"}, "REPORT_TO=foo is not a logger"),
        (["--report_to", "tensorboard", "foo"], {}, "--report_to foo"),
        ([], {"MODEL": "/nonexistent"}, "MODEL=/nonexistent: no such folder"),
        ([], {"DATASET": "/nonexistent.jsonl#100"}, "DATASET=/nonexistent.jsonl#100: no such file"),
        (["--val_dataset", "./nope.jsonl"], {}, "--val_dataset ./nope.jsonl: no such file"),
    ],
)
def test_what_would_fail_later_is_refused_now(tmp_path, extra, env, words):
    with pytest.raises(SettingError, match=words):
        plan(tmp_path, extra, **env)


def test_eval_batch_is_free_when_nothing_is_evaluated():
    flags = Flags(["--per_device_train_batch_size", "8", "--gradient_accumulation_steps", "8",
                   "--per_device_eval_batch_size", "3", "--eval_strategy", "no"])  # fmt: skip
    check_batches(flags, 2, set())
    check_lengths(Flags(["--max_length", "10"]), Flags([]), 4096)  # no model length given: nothing to compare
    check_report_to(Flags(["--report_to", "wandb", "swanlab"]), set())


def test_local_rows_are_checked_with_the_task_rules(tmp_path):
    good, bad = tmp_path / "good.jsonl", tmp_path / "bad.jsonl"
    good.write_text('{"nums": [1, 2, 3], "target": 6, "solution": "1+2+3"}\n')
    bad.write_text('{"nums": [1, 2], "target": 3}\n\n{"nums": [1, true], "target": 3}\n')
    assert plan(tmp_path, DATASET=str(good)) == ""
    with pytest.raises(SettingError, match=rf"DATASET={bad}: {bad}:3: nums must be a non-empty list of integers"):
        plan(tmp_path, DATASET=str(bad))
    gsm8k = tmp_path / "gsm8k.json"
    gsm8k.write_text('[{"question": "q", "answer": "no marker"}]')
    with pytest.raises(SettingError, match="needs columns 'nums' and 'target'"):
        plan(tmp_path, DATASET=str(gsm8k))
    s = Settings.from_env("gsm8k_1gpu", {"OUTPUT_DIR": str(tmp_path), "DATASET": str(gsm8k)}, REPO)
    with pytest.raises(SettingError, match=r"gsm8k.json: row 0: .*#### N"):
        check_plan(s, server_commands(s, [])[1], None, set(), Console("t", io.StringIO()))


def test_ports(monkeypatch):
    with socket.socket() as busy:
        busy.bind(("", 0))
        busy.listen()
        port = busy.getsockname()[1]
        assert not port_is_free(port, reuse=False) and not port_is_free(port, reuse=True)
        with pytest.raises(SettingError, match=f"MASTER_PORT={port} is already in use on this host"):
            check_ports([("MASTER_PORT", port, True, "torchrun's rendezvous port")])
    check_ports([("MASTER_PORT", port, True, "torchrun's rendezvous port")])


def test_gpus_come_from_nvidia_smi(monkeypatch):
    monkeypatch.setenv("PATH", f"{STAND_INS}:/usr/bin:/bin")
    monkeypatch.setenv("FAKE_GPU_COUNT", "2")
    monkeypatch.setenv("FAKE_MIG", "1")
    check_gpus({"TRAIN_GPUS": ("0", "1"), "GPU": ("MIG-fake-1",), "ROLLOUT_GPU": ("GPU-fake-0",)})
    with pytest.raises(SettingError, match="ROLLOUT_GPU=2 needs GPU 2 but nvidia-smi lists 2 GPU"):
        check_gpus({"ROLLOUT_GPU": ("2",)})
    monkeypatch.setenv("FAKE_NVIDIA_SMI_FAIL", "1")
    with pytest.raises(SettingError, match="nvidia-smi failed: NVIDIA-SMI has failed"):
        check_gpus({"GPU": ("0",)})
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(SettingError, match="nvidia-smi not found on PATH"):
        check_gpus({"GPU": ("0",)})


def test_swift_interpreter_is_the_python_of_swifts_environment(tmp_path, monkeypatch):
    venv = tmp_path / "venv" / "bin"
    venv.mkdir(parents=True)
    for name in ("swift", "python3"):
        (venv / name).write_text("#!/bin/sh\n")
        (venv / name).chmod(0o755)
    monkeypatch.setenv("PATH", str(venv))
    assert swift_interpreter() == (str(venv / "swift"), str(venv / "python3"))
    (venv / "python3").unlink()  # e.g. ~/.local/bin/swift: the launcher's own python, proven by importing swift
    assert swift_interpreter() == (str(venv / "swift"), sys.executable)
    here = Path(sys.executable).parent
    if os.access(here / "swift", os.X_OK):  # swift in the launcher's own venv: this very interpreter
        monkeypatch.setenv("PATH", str(here))
        assert swift_interpreter()[1] == sys.executable
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(SettingError, match="swift not found on PATH"):
        swift_interpreter()
