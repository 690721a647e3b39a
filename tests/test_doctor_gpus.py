"""``python -m swift_plugins.doctor`` with an ``nvidia-smi`` that answers nothing the doctor can read: one that prints
garbage, nothing or a permission error, and one that never answers (the stand-in of tests/stand_ins)."""

from __future__ import annotations

import time

import pytest

from swift_plugins.doctor.environment import NVIDIA_SMI_SECONDS

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
