"""Unit tests of swift_plugins.preflight.host: the GPUs nvidia-smi lists, swift's interpreter, free ports."""

import os
import sys
from pathlib import Path

import pytest

from swift_plugins.core.errors import SettingError
from swift_plugins.preflight.host import check_gpus, check_port, port_is_free, swift_interpreter

from ..helpers import STAND_INS, busy_port


def test_ports():
    with busy_port() as port:
        assert not port_is_free(port, reuse=False) and not port_is_free(port, reuse=True)
        with pytest.raises(SettingError, match=f"MASTER_PORT={port} is already in use on this host"):
            check_port("MASTER_PORT", port, True, "torchrun's rendezvous port")
    check_port("MASTER_PORT", port, True, "torchrun's rendezvous port")


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
    assert os.access(here / "swift", os.X_OK), "ms-swift's `swift` belongs beside this interpreter (make install)"
    monkeypatch.setenv("PATH", str(here))  # swift in the launcher's own venv: this very interpreter
    assert swift_interpreter() == (str(here / "swift"), sys.executable)
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(SettingError, match="swift not found on PATH"):
        swift_interpreter()
