"""``python -m swift_plugins.doctor`` on metadata it cannot read, on installs it refuses (never called known-good), on
missing packages (the fix is README step 1's install from the lock), on an editable vLLM and on a Python the GPU stacks
do not support. The fake ``*.dist-info`` folders of tests/doctor/test_doctor.py go in front of this venv's packages, or,
for the missing packages, stand alone (``python -S``: no site-packages)."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

import packaging
import pytest

from swift_plugins.doctor.diagnose import diagnose
from swift_plugins.doctor.environment import Environment, Package

from ..helpers import REPO, STAND_INS, assert_refused
from .test_doctor import QWEN3_5, doctor, fake_dist, refusals

CUDA_13 = "__version__ = '2.11.0'\ncuda: Optional[str] = '13.0'\nhip: Optional[str] = None\n"


def gpu_stack_0_23(fake: Path, swift: str = "4.6.0", torch: str = "2.11.0") -> None:
    """The vLLM 0.23 stack's versions as fake metadata: vLLM, torch (CUDA 13.0 unless ``torch`` says +cpu),
    transformers, ms-swift ``swift``, trl."""
    fake_dist(fake, "vllm", "0.23.0", requires=["torch==2.11.0"], record=[QWEN3_5])
    fake_dist(fake, "torch", torch, record=["torch/version.py"], files={"torch/version.py": CUDA_13})
    fake_dist(fake, "transformers", "4.57.6")
    fake_dist(fake, "ms-swift", swift)
    fake_dist(fake, "trl", "0.29.1")


def report(result: subprocess.CompletedProcess) -> dict:
    assert "Traceback" not in result.stderr, result.stderr
    return json.loads(result.stdout)


# --- metadata the doctor cannot read: one line each, never a traceback ----------------------------------------


def test_a_version_that_is_not_pep_440_is_one_line_not_a_traceback(tmp_path):
    fake = tmp_path / "fake"
    fake_dist(fake, "vllm", "0.11.0-custom", record=["vllm/__init__.py"])
    fake_dist(fake, "transformers", "5.19.0")
    result = doctor(tmp_path)
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
    line = "refuse: cannot read the version of vllm: '0.11.0-custom' is not a version (PEP 440)"
    assert any(refusal.startswith(line) for refusal in refusals(result)), result.stdout
    vllm_row = next(row for row in result.stdout.splitlines() if row.startswith("vllm "))
    assert vllm_row.split()[1] == "0.11.0-custom" and vllm_row.split()[-1] == "refuse"
    found = report(doctor(tmp_path, "--json"))
    assert found["status"] == 1 and found["stack"] is None
    assert any(f["concerns"] == "vllm" and f["line"].startswith(line[8:]) for f in found["findings"])


@pytest.mark.parametrize(
    "metadata, why",
    [
        (b"Metadata-Version: 2.1\nName: torch\n", "its METADATA has no Version"),
        (b"Metadata-Version: 2.1\nName: torch\nVersion: 2.8.0\xff\n", "its METADATA cannot be read"),
    ],
)
def test_a_dist_info_without_a_readable_version_is_one_line_not_a_traceback(tmp_path, metadata, why):
    fake = tmp_path / "fake"
    fake_dist(fake, "torch", "2.8.0")
    (fake / "torch-2.8.0.dist-info" / "METADATA").write_bytes(metadata)
    result = doctor(tmp_path, gpus=1)
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
    (line,) = [refusal for refusal in refusals(result) if "torch" in refusal]
    assert line.startswith(f"refuse: cannot read the version of torch: {why}"), line
    assert str(fake / "torch-2.8.0.dist-info") in line, line
    torch_row = next(row for row in result.stdout.splitlines() if row.startswith("torch "))
    assert torch_row.split()[1] == "?" and torch_row.split()[-1] == "refuse"


def test_the_recipes_preflight_shows_the_unreadable_version(sandbox):
    fake = sandbox.tmp / "fake"  # in front of the stand-ins' vLLM 0.11 stack
    fake_dist(fake, "vllm", "0.11.0-custom", record=["vllm/__init__.py"])
    result = sandbox.run("countdown_3gpu.sh", PYTHONPATH=f"{fake}:{STAND_INS / 'pylib'}")
    assert_refused(result, "countdown_3gpu.sh", "cannot read the version of vllm: '0.11.0-custom' is not a version")
    sandbox.assert_nothing_started()


# --- a refused install is never a known-good stack --------------------------------------------------------------


def test_the_known_good_stack_is_named_only_for_an_install_with_no_refusal(tmp_path):
    gpu_stack_0_23(tmp_path / "fake")
    found = report(doctor(tmp_path, "--json", gpus=3))
    assert found["status"] == 0 and found["stack"] == "gpu-vllm0.23", found["findings"]


@pytest.mark.parametrize("swift, torch", [("4.6.0", "2.11.0+cpu"), ("3.8.1", "2.11.0"), ("5.0.0", "2.11.0")])
def test_a_refused_install_is_never_called_known_good(tmp_path, swift, torch):
    gpu_stack_0_23(tmp_path / "fake", swift=swift, torch=torch)
    result = doctor(tmp_path, gpus=3)
    assert result.returncode == 1 and refusals(result), result.stdout
    assert "known-good stack gpu-vllm0.23" not in result.stdout, result.stdout
    found = report(doctor(tmp_path, "--json", gpus=3))
    assert found["status"] == 1 and found["stack"] is None


def test_a_cpu_torch_is_not_the_gpu_stack_on_a_cpu_machine_either(tmp_path):
    gpu_stack_0_23(tmp_path / "fake", torch="2.11.0+cpu")
    found = report(doctor(tmp_path, "--json"))  # no nvidia-smi: nothing refused, but not the CUDA stack
    assert found["status"] == 0 and found["stack"] is None
    assert any(f["level"] == "warn" and f["concerns"] == "stack" for f in found["findings"]), found["findings"]


# --- a missing package: install from the lock, as README step 1 does, from any folder ---------------------------


def bare_doctor(tmp_path: Path, *, gpus: int | None, driver: str = "580.65.06") -> subprocess.CompletedProcess:
    """The doctor with no site-packages (``python -S``): only ``tmp_path/fake``'s metadata and ``packaging``."""
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "packaging").symlink_to(Path(packaging.__file__).parent)
    return doctor(tmp_path, gpus=gpus, driver=driver, PYTHONPATH=f"{tmp_path / 'fake'}:{pkg}:{REPO}",
                  python=(sys.executable, "-S"))  # fmt: skip


def install_fix(line: str) -> list[list[str]]:
    """The commands after the line's last ``: ``, split at ``, then``."""
    return [shlex.split(part) for part in re.split(r",? then ", line.rsplit(": ", 1)[1])]


@pytest.mark.parametrize("driver, lock", [("580.65.06", "gpu-vllm0.23.txt"), ("550.54.15", "gpu-vllm0.11.txt")])
def test_a_missing_package_is_installed_from_the_lock_for_the_driver(tmp_path, driver, lock):
    fake_dist(tmp_path / "fake", "trl", "0.29.1")
    result = bare_doctor(tmp_path, gpus=2, driver=driver)
    assert "Traceback" not in result.stderr, result.stderr
    (line,) = [refusal for refusal in refusals(result) if refusal.startswith("refuse: ms-swift is not installed")]
    package_install, lock_install = install_fix(line)  # README step 1's order: pip refuses a bad Python first
    assert lock_install == ["pip", "install", "-r", str(REPO / "requirements" / lock)], line
    assert Path(lock_install[-1]).is_file()  # absolute: it works from any folder (the doctor ran in tmp_path)
    assert package_install == ["pip", "install", "--no-deps", "-e", f"{REPO}[gpu]"], line


def test_without_nvidia_smi_the_fix_names_each_lock_by_driver(tmp_path):
    fake_dist(tmp_path / "fake", "trl", "0.29.1")
    (line,) = [r for r in refusals(bare_doctor(tmp_path, gpus=None)) if r.startswith("refuse: torch is not installed")]
    for lock in ("gpu-vllm0.23.txt", "gpu-vllm0.11.txt"):
        assert f"pip install -r {REPO / 'requirements' / lock}" in line, line
    assert "R580" in line and f"pip install --no-deps -e '{REPO}[gpu]'" in line, line
    assert "pip install -e '.[gpu]'" not in line


# --- an editable vLLM: its RECORD lists only its finder files -----------------------------------------------------


@pytest.mark.parametrize("has_qwen3_5", [True, False])
def test_an_editable_vllm_is_looked_up_where_python_imports_it(tmp_path, has_qwen3_5):
    fake, source = tmp_path / "fake", tmp_path / "source"
    editable = ["__editable___vllm_0_23_0_finder.py", "__editable__.vllm-0.23.0.pth"]
    fake_dist(fake, "vllm", "0.23.0", record=editable)
    for path in ["vllm/__init__.py", *[QWEN3_5] * has_qwen3_5]:  # the source folder Python imports vllm from
        (source / path).parent.mkdir(parents=True, exist_ok=True)
        (source / path).write_text("")
    found = report(doctor(tmp_path, "--json", PYTHONPATH=f"{fake}:{source}:{REPO}"))
    assert found["environment"]["vllm_has_qwen3_5"] is has_qwen3_5, found["environment"]


def test_a_vllm_whose_files_cannot_be_told_is_said_so_not_misreported():
    packages = {name: Package(name, version) for name, version in [("vllm", "0.23.0"), ("torchvision", "0.26.0")]}
    env = Environment("3.12.1", packages, None, None, None, ("swift_uembed",))
    (line,) = [f.line for f in diagnose(env) if "qwen3_5" in f.line]
    assert line.startswith("cannot tell whether vLLM 0.23.0 has vllm.model_executor.models.qwen3_5"), line


# --- the Python ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("python, implementation", [("3.9.18", "CPython"), ("3.14.0", "CPython"), ("3.12.1", "PyPy")])
def test_a_python_the_gpu_stacks_do_not_support_is_refused_in_one_line(python, implementation):
    env = Environment(python, {}, None, None, None, (), implementation=implementation)
    (line,) = [f.line for f in diagnose(env) if f.level == "refuse" and f.concerns == "python"]
    assert line.startswith(f"{implementation} {python}: the GPU stacks run on CPython 3.10, 3.11, 3.12 and 3.13"), line


@pytest.mark.parametrize("python", ["3.10.13", "3.13.0"])
def test_the_pythons_the_gpu_stacks_support_pass(python):
    env = Environment(python, {}, None, None, None, (), implementation="CPython")
    assert not [f for f in diagnose(env) if f.concerns == "python"]
