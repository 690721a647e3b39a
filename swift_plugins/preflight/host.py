"""This host, as a recipe about to start sees it: the GPUs it asks for, ms-swift's interpreter, the stack that
interpreter holds (:mod:`swift_plugins.doctor.report` run there), the modules the run imports, free ports, and every
``swift`` command as that ms-swift parses it (:func:`check_swift_flags`, DRY_RUN's one check of this host). Standard
library only: the launcher calls these just before anything starts (DRY_RUN skips the others); each refusal is one
:class:`SettingError` line.

>>> check_gpus({})  # nothing asked: no GPU needed
>>> port_is_free(0, reuse=False)  # port 0: the kernel picks a free one
True
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path

from ..core.commands import Command
from ..core.console import Console
from ..core.errors import SettingError
from ..doctor.environment import NVIDIA_SMI_SECONDS, read_gpus
from ..integration import swift_args

__all__ = ["PROBE", "check_gpus", "check_port", "check_stack", "check_swift", "check_swift_flags", "port_is_free",
           "swift_interpreter"]

# Run with swift's interpreter.  With -c, sys.path[0] is the cwd: drop it so a ./swift checkout cannot shadow
# the installed package.  A broken CUDA install raises more than ImportError.
PROBE = """
import importlib, json, sys
if sys.path[:1] == [""]:
    del sys.path[0]
found = {}
for name in sys.argv[1:]:
    try:
        module = importlib.import_module(name)
    except Exception as e:
        found[name] = [False, type(e).__name__ + ": " + (str(e).strip().splitlines() or [""])[0]]
    else:
        found[name] = [True, getattr(module, "__version__", "(no version)")]
print("@@" + json.dumps(found))
"""


def _run(
    argv: list[str], what: str, env: Mapping[str, str] | None = None, timeout: float = 300, cwd: Path | None = None
) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=timeout, env=env, cwd=cwd)
    except (OSError, subprocess.TimeoutExpired) as error:
        raise SettingError(f"cannot run {what}: {error}") from None


def check_gpus(requested: Mapping[str, Iterable[str]]) -> None:
    """Every GPU of every ``SETTING: gpus`` is one nvidia-smi reports: an index among its indices
    (nvidia-smi ignores CUDA_VISIBLE_DEVICES), an id the prefix of one of its GPU or MIG UUIDs."""
    if not requested:
        return
    smi = shutil.which("nvidia-smi")
    if smi is None:
        raise SettingError(
            "nvidia-smi not found on PATH: no NVIDIA driver here? (DRY_RUN=1 prints the commands without GPU checks)"
        )
    listed = read_gpus(smi)
    if listed.problem:  # the doctor's line: it failed, hung, or printed no GPU
        raise SettingError(listed.problem)
    indices = [str(index) for index in range(listed.count)]  # nvidia-smi numbers its GPUs from 0
    uuids = re.findall(r"UUID: ([^)\s]+)", _run([smi, "-L"], "nvidia-smi -L", timeout=NVIDIA_SMI_SECONDS).stdout)
    for name, gpus in requested.items():
        value = ",".join(gpus)
        for gpu in gpus:
            if gpu.isdigit() and gpu not in indices:
                raise SettingError(
                    f"{name}={value} needs GPU {gpu} but nvidia-smi lists {len(indices)} GPU(s): {','.join(indices)}"
                )
            if not gpu.isdigit() and not any(uuid.startswith(gpu) for uuid in uuids):
                raise SettingError(
                    f"{name}={value} needs {gpu} but no GPU or MIG device of nvidia-smi -L has that UUID"
                )


def check_stack(python: str, repo: Path, concerns: Iterable[str]) -> None:
    """Refuse, with its line, the first refusal of ``python -m swift_plugins.doctor`` (run by swift's ``python``,
    ``repo`` on its path) that concerns what this run uses (swift, torch, vllm, deepspeed, cuda): a pair of
    packages known not to run together, a CPU torch on a GPU box, a driver too old for torch's CUDA."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(repo), os.environ.get("PYTHONPATH")]))}
    result = _run([python, "-m", "swift_plugins.doctor", "--json"], f"{python} -m swift_plugins.doctor", env)
    try:
        findings = json.loads(result.stdout)["findings"]
    except (ValueError, KeyError, TypeError):
        detail = ((result.stderr or result.stdout).strip().splitlines() or ["no output"])[-1]
        raise SettingError(f"cannot run {python} -m swift_plugins.doctor (swift's interpreter): {detail}") from None
    wanted = set(concerns)
    refused = next((f["line"] for f in findings if f["level"] == "refuse" and f["concerns"] in wanted), None)
    if refused is not None:
        raise SettingError(f"{refused} (python -m swift_plugins doctor lists every check)")


def swift_interpreter() -> tuple[str, str]:
    """``(swift, python)``: the `swift` on PATH and the interpreter that runs it.

    That is this interpreter when swift sits beside it (the same venv), else the python beside swift (its venv's
    or conda env's), else this one; :func:`check_swift` then proves it imports swift.
    """
    swift = shutil.which("swift")
    if swift is None:
        raise SettingError("swift not found on PATH: install ms-swift 4.x (pip install 'ms-swift>=4,<5')")
    folder = Path(swift).parent
    if Path(sys.executable).parent == folder:
        return swift, sys.executable
    beside = [folder / name for name in ("python3", "python") if os.access(folder / name, os.X_OK)]
    return swift, str(beside[0]) if beside else sys.executable


def check_swift(modules: Iterable[str], extras: Mapping[str, str], repo: Path, console: Console) -> str:
    """Import ms-swift 4.x and ``modules`` (vllm, deepspeed, a logger) with swift's interpreter; return it.

    ms-swift 4.6 declares neither vLLM nor DeepSpeed: without vllm `swift rollout` swallows the ImportError
    (swift/pipelines/infer/rollout.py) and fails later with a NameError, and --deepspeed fails in
    require_version('deepspeed') (swift/arguments/sft_args.py) after the model download.  ``extras`` maps a
    module to the setting that needs it (REPORT_TO=wandb); the others come with the package's [gpu] extra.
    """
    swift, python = swift_interpreter()
    modules = list(dict.fromkeys(modules))
    result = _run([python, "-c", PROBE, "swift", *modules], python)
    line = next((line for line in result.stdout.splitlines() if line.startswith("@@")), None)
    if line is None:
        raise SettingError(f"cannot run {python} (the interpreter of {swift}) to import swift {' '.join(modules)}")
    found = json.loads(line[2:])
    ok, version = found.pop("swift")
    if not ok:
        raise SettingError(
            f"cannot import swift with {python} (the interpreter of {swift}): broken ms-swift install? ({version})"
        )
    if version.split(".")[0] != "4":
        raise SettingError(
            f"ms-swift {version} found ({swift}); these recipes need ms-swift 4.x (pip install 'ms-swift>=4,<5')"
        )
    console.note(f"ms-swift {version} ({swift})")
    for name, (ok, detail) in found.items():
        if not ok and name in extras:
            raise SettingError(
                f"{extras[name]} needs {name}, which does not import with {python} (the interpreter of swift): "
                f"{detail}; pip install {name} there, or choose another {extras[name].split('=')[0]}"
            )
    failed = [f"{name}: {detail}" for name, (ok, detail) in found.items() if not ok]
    if failed:
        raise SettingError(
            f"cannot import {'; '.join(failed)} with {python} (the interpreter of swift); install the GPU extra "
            f"there: pip install -e '{repo}[gpu]' (after the torch build vLLM needs)"
        )
    if found:
        console.note(", ".join(f"{name} {version}" for name, (_, version) in found.items()) + f" ({python})")
    return python


def check_swift_flags(commands: Iterable[Command], repo: Path, console: Console) -> None:
    """Parse every ``swift`` command with the installed ms-swift's own argument classes (one interpreter for all:
    importing them takes seconds; no model is loaded); refuse the first flag or value it refuses.

    swift's interpreter parses; without a ``swift`` on PATH (a DRY_RUN on a laptop), or where its ms-swift does not
    import, one line says the flags went unchecked.
    """
    pairs = [[command.argv[1], list(command.argv[2:])] for command in commands if command.argv[0] == "swift"]
    if not pairs:
        return
    if shutil.which("swift") is None:
        console.note("swift flags not checked: no swift on PATH (where ms-swift is installed, its own arguments "
                     "check them)")  # fmt: skip
        return
    python = swift_interpreter()[1]
    module = swift_args.__name__
    # cwd: the checkout, where this package imports from (and no ./swift of the caller's shadows ms-swift)
    result = _run([python, "-m", module, json.dumps(pairs)], f"{python} -m {module}", cwd=repo)
    try:
        found = json.loads(result.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        detail = ((result.stderr or result.stdout).strip().splitlines() or ["no output"])[-1]
        raise SettingError(f"cannot check the swift flags with {python}: {detail}") from None
    if "unavailable" in found:
        console.note(f"swift flags not checked: ms-swift's argument classes do not import with {python} "
                     f"({found['unavailable']})")  # fmt: skip
        return
    refused = next((line for line in found["refusals"] if line), None)
    if refused is not None:
        raise SettingError(f"{refused} (ms-swift {found['swift']}'s own arguments; nothing started)")
    console.note(f"ms-swift {found['swift']} parsed every flag of " + " and ".join(f"swift {c}" for c, _ in pairs))


def port_is_free(port: int, reuse: bool) -> bool:
    """Whether ``port`` is bindable on all interfaces.

    ``reuse=False`` binds like ms-swift's find_free_port (no SO_REUSEADDR): `swift rollout` calls it on --port
    and silently moves to another port when the bind fails, even for sockets in TIME_WAIT, and the trainer
    would then talk to the wrong port.  ``reuse=True`` is for listeners that set SO_REUSEADDR (torch's
    TCPStore: the NCCL group, torchrun).
    """
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        if reuse:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("", port))
        except OSError:
            return False
    return True


def check_port(name: str, port: int, reuse: bool, what: str) -> None:
    """The port setting ``name`` must be free."""
    if not port_is_free(port, reuse):
        raise SettingError(f"{name}={port} is already in use on this host ({what}); free it or choose another {name}")
