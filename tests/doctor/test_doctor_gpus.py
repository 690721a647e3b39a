"""``python -m swift_plugins.doctor`` with an ``nvidia-smi`` that answers nothing the doctor can read: one that prints
garbage, nothing or a permission error, and one that never answers (the stand-in of tests/stand_ins); the recipes'
GPU check (preflight.host) on the same."""

from __future__ import annotations

import time

import pytest

from swift_plugins.core.errors import SettingError
from swift_plugins.doctor import environment
from swift_plugins.doctor.environment import NVIDIA_SMI_SECONDS, Gpus
from swift_plugins.preflight.host import check_gpus

from ..helpers import STAND_INS
from .test_doctor import doctor, refusals


@pytest.mark.parametrize(
    "prints, words",
    [
        ("Segmentation fault at 0xdeadbeef\n", ["printed 'Segmentation fault at 0xdeadbeef'", "nvidia-smi -L"]),
        ("", ["printed nothing", "lspci"]),
        ("[Insufficient Permissions]\n", ["printed '[Insufficient Permissions]'", "/dev/nvidia*"]),
    ],
)
def test_an_nvidia_smi_that_lists_no_gpu_says_what_it_printed_and_what_to_do(tmp_path, prints, words):
    result = doctor(tmp_path, gpus=3, FAKE_NVIDIA_SMI_PRINTS=prints)
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stdout + result.stderr
    (line,) = [line for line in refusals(result) if "nvidia-smi" in line]
    for word in words:
        assert word in line, line


def test_an_nvidia_smi_that_hangs_is_given_up_on_quickly_and_said_to_hang(tmp_path):
    started = time.monotonic()
    result = doctor(tmp_path, gpus=3, FAKE_NVIDIA_SMI_HANG="1")
    took = time.monotonic() - started
    assert took < NVIDIA_SMI_SECONDS + 15, took  # the stand-in sleeps 300 s
    (line,) = [line for line in refusals(result) if "nvidia-smi" in line]
    assert f"did not answer within {NVIDIA_SMI_SECONDS} s" in line and "reinstall" not in line, line


@pytest.mark.parametrize("env", [{"FAKE_NVIDIA_SMI_PRINTS": "[Insufficient Permissions]"},
                                 {"FAKE_NVIDIA_SMI_HANG": "1"}])  # fmt: skip
def test_the_recipes_gpu_check_says_the_same_line_as_quickly(monkeypatch, env):
    monkeypatch.setattr(environment, "NVIDIA_SMI_SECONDS", 1)  # the doctor's own test waits out the real limit
    monkeypatch.setenv("PATH", f"{STAND_INS}:/usr/bin:/bin")
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    started = time.monotonic()
    with pytest.raises(SettingError) as refused:
        check_gpus({"GPU": ("0",)})
    assert time.monotonic() - started < 1 + 5
    assert str(refused.value) in ("nvidia-smi printed '[Insufficient Permissions]': this user cannot open the GPUs "
                                  "(ls -l /dev/nvidia*); run as a user of their group, or start the container with the "
                                  "GPUs (docker run --gpus all)", Gpus(0, None, hung=True).problem)  # fmt: skip
