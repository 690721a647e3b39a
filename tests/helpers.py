"""Helpers of the launcher tests (and any test that reads printed commands or asks ms-swift about flags).

- :func:`flag`, :func:`shell_commands`, :func:`parse_dry_run`: read argv lists and the commands a DRY_RUN or
  ``commands.sh`` prints.
- :func:`unknown_to_swift` (and :func:`with_swift`, which it runs on): the flags the installed ms-swift's own
  argument classes do not know, in a fresh interpreter (importing ms-swift patches transformers: never here).
- :func:`make_checkpoint`: an ms-swift checkpoint folder, complete or cut short.
- :func:`settings`, :func:`plan`, :func:`console`: a recipe's settings and plan from an environment, in this process.
- :func:`free_port`, :func:`busy_port`, :func:`process_gone`, :func:`wait_until`.
- :func:`real_run`, :func:`run_real`: a real training or inference run, within the machine's memory (slots shared
  by every lane of make test).
- :class:`Sandbox`: the stand-ins of tests/stand_ins (``swift``, ``nvidia-smi``, the modules swift's interpreter
  imports) on PATH, free ports, an output folder; a recipe runs as a process (:meth:`Sandbox.run`: its
  shell/ script) or in this process (:meth:`Sandbox.launch`: the launcher's ``main``, the same code the script
  execs).
"""

from __future__ import annotations

import contextlib
import fcntl
import importlib.util
import io
import json
import os
import shlex
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path

from swift_plugins.core.console import Console
from swift_plugins.core.files import held_out_path
from swift_plugins.demo.settings import SCRIPT as DEMO_SCRIPT
from swift_plugins.demo.settings import SETTINGS as DEMO_SETTINGS
from swift_plugins.launch.catalog import ALL, entries, recipe_names
from swift_plugins.launch.commands import Plan
from swift_plugins.launch.recipes import build_plan
from swift_plugins.launch.settings import Settings

TESTS = Path(__file__).resolve().parent
# How long a real run (training, a server, an evaluation, a fresh ms-swift) may take before it counts as hung: its
# idle time times 4 and more, as make test runs three lanes at once on 2 cores and each run gets a share of them.
RUN_TIMEOUT = 2400
REPO = TESTS.parent
SHELL = REPO / "shell"
STAND_INS = TESTS / "stand_ins"
DATA = TESTS / "data"  # logs of real runs the watch is tested on
PLUGIN = REPO / "swift_plugins" / "plugin.py"
SETTING_NAMES = {entry.name for entry in ALL}  # every setting of a launcher recipe
NO_REPO = Path("/repo")  # a checkout that is not there: what needs no file of it
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)  # what the launcher's Children take over


def load_script(path: Path):
    """The module of a script outside the package (a benchmark, the lock tool), imported from its file."""
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the file runs
    spec.loader.exec_module(module)
    return module


def flag(argv: Sequence[str], name: str) -> str | None:
    """Value after the last ``name`` in argv (argparse keeps the last), or None."""
    values = [argv[i + 1] for i, arg in enumerate(argv[:-1]) if arg == name]
    return values[-1] if values else None


def flag_names(argv: Sequence[str]) -> list[str]:
    """The ``--flags`` of argv, in order, without their ``=value``."""
    return [word.split("=")[0] for word in argv if word.startswith("--")]


def console() -> Console:
    """A console whose messages stay in ``console().stream.getvalue()``."""
    return Console("t.sh", io.StringIO())


def settings(recipe: str = "countdown_3gpu", repo: Path = NO_REPO, **env: str) -> Settings:
    """The settings of ``recipe`` from ``env`` (OUTPUT_DIR /runs/a unless given)."""
    return Settings.from_env(recipe, {"OUTPUT_DIR": "/runs/a", **env}, repo)


def plan(
    recipe: str = "countdown_3gpu",
    extra: Sequence[str] = (),
    said: Console | None = None,
    repo: Path = NO_REPO,
    **env: str,
) -> Plan:
    """The plan of ``recipe`` with the ``extra`` flags, from ``env`` as :func:`settings` reads it; its notes go to
    ``said``."""
    return build_plan(settings(recipe, repo, **env), list(extra), said or console())


_HANDED_OUT: set[int] = set()


def generated_splits(folder: Path, *generate: str) -> dict[str, dict[str, bytes]]:
    """``python -m swift_plugins <generate> --seed S --out F`` for seed 0 twice (to other files, runs ``a`` and ``b``),
    seed 1 (``c``) and seed 1 with ``--split-seed 0`` (``d``): the bytes of each file a run wrote, by split (``train``,
    ``dev``, ``test``)."""
    splits = {}
    for name, seeds in (("a", ("0",)), ("b", ("0",)), ("c", ("1",)), ("d", ("1", "--split-seed", "0"))):
        out = folder / f"{name}.jsonl"
        subprocess.run([sys.executable, "-m", "swift_plugins", *generate, "--seed", *seeds, "--out", str(out),
                        "--quiet"], check=True, cwd=REPO, timeout=300)  # fmt: skip
        files = {"train": out, "dev": held_out_path(out, "dev"), "test": held_out_path(out)}
        splits[name] = {split: path.read_bytes() for split, path in files.items() if path.exists()}
    return splits


def free_port() -> int:
    """A port nothing listens on, never one this process was given before: the OS hands a just-closed port out
    again, and two settings given the same port are refused as a clash (seen once in 1,411 tests)."""
    while True:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        if port not in _HANDED_OUT:
            _HANDED_OUT.add(port)
            return port


# Real runs at once, machine-wide: make test's lanes (and their workers) would otherwise start five at a time, and a
# training process was killed for memory (24 GiB). A run holds slots while it runs; the server path, a vLLM server
# beside two ZeRO-3 trainers, holds two.
RUN_SLOTS = 3
SLOT_FOLDER = Path(tempfile.gettempdir()) / "swift-plugins-test-slots"


@contextlib.contextmanager
def real_run(slots: int = 1) -> Iterator[None]:
    """Hold ``slots`` of the machine's :data:`RUN_SLOTS` (file locks, released when the process ends) meanwhile.

    A run of one slot takes any free one without waiting while it holds none, and a run of more takes them in order,
    so two runs never wait on each other."""
    SLOT_FOLDER.mkdir(exist_ok=True)
    held: list = []
    try:
        while len(held) < slots:
            if slots > 1:
                handle = (SLOT_FOLDER / f"slot{len(held)}").open("w")
                fcntl.flock(handle, fcntl.LOCK_EX)
                held.append(handle)
                continue
            for index in range(RUN_SLOTS):
                handle = (SLOT_FOLDER / f"slot{index}").open("w")
                try:
                    fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    handle.close()
                    continue
                held.append(handle)
                break
            else:
                time.sleep(1)
        yield
    finally:
        for handle in held:
            handle.close()


def run_real(command: Sequence[str], slots: int = 1, **options) -> subprocess.CompletedProcess:
    """``subprocess.run(command, capture_output=True, text=True, timeout=RUN_TIMEOUT, **options)`` in
    :func:`real_run`."""
    with real_run(slots):
        return subprocess.run(command, capture_output=True, text=True, timeout=RUN_TIMEOUT, **options)


SYNC_PROBE = TESTS / "plugins" / "sync_probe.py"
NCCL_STAND_IN = STAND_INS / "nccl"  # sitecustomize.py: NCCL's part of the weight sync, on a CPU (tests only)
TIE = 1e-3  # log-probabilities this close are a tie that float noise may break either way


def run_cpu_smoke(out: Path, *extra: str, **settings: str) -> subprocess.CompletedProcess:
    """The CPU smoke recipe into ``out`` with the package's plugin and the probe plugin (tests/plugins/sync_probe.py,
    recording into ``out/sync_probe.jsonl``) loaded, ``extra`` swift rlhf flags after them, ``settings`` in its
    environment; swift is this venv's."""
    env = {
        **os.environ,
        **settings,
        "OUTPUT_DIR": str(out),
        "MASTER_PORT": str(free_port()),
        "SYNC_PROBE_OUT": str(out / "sync_probe.jsonl"),
        "PATH": str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", ""),
    }
    plugins = ["--external_plugins", str(REPO / "swift_plugins" / "plugin.py"), str(SYNC_PROBE)]
    command = ["bash", str(REPO / "shell" / "countdown_cpu_smoke.sh"), *plugins, *extra]
    return run_real(command, env=env)


def server_smoke_env(out: Path, **env: str) -> dict[str, str]:
    """The environment of a server recipe's ``SMOKE=1`` run into ``out`` on this CPU: free ports, a stand-in
    ``nvidia-smi`` (``FAKE_GPU_COUNT`` GPUs, default 3), the NCCL stand-in on ``PYTHONPATH`` (the weight sync over
    gloo), the probe plugin recording into ``out/sync_probe.jsonl``; ``env`` added."""
    (out / "bin").mkdir(parents=True)
    (out / "bin" / "nvidia-smi").symlink_to(STAND_INS / "nvidia-smi")
    return {
        **os.environ,
        "SMOKE": "1",
        "OUTPUT_DIR": str(out),
        "ROLLOUT_PORT": str(free_port()),
        "ROLLOUT_GROUP_PORT": str(free_port()),
        "MASTER_PORT": str(free_port()),
        "ROLLOUT_ARGS": "--vllm_enforce_eager true --torch_dtype float32",
        "PYTHONPATH": str(NCCL_STAND_IN),
        "GLOO_SOCKET_IFNAME": "lo",
        "SYNC_PROBE_OUT": str(out / "sync_probe.jsonl"),
        "PATH": os.pathsep.join([str(out / "bin"), str(Path(sys.executable).parent), os.environ.get("PATH", "")]),
        **env,
    }


def server_trainer_flags(out: Path) -> list[str]:
    """The ``swift rlhf`` flags of a server smoke run on a CPU: float32 (no bf16 or fp16 training on a CPU), the
    package's plugin and the probe plugin, ms-swift's ZeRO-3 with sequential all-gathers (docs/server_mode_cpu.md)."""
    cpu = ["--torch_dtype", "float32", "--bf16", "false", "--fp16", "false"]
    plugins = ["--external_plugins", str(PLUGIN), str(SYNC_PROBE)]
    return [*cpu, *plugins, "--deepspeed", str(sequential_zero3(out / "zero3_sequential.json"))]


def run_server_smoke(
    out: Path, *extra: str, script: str = "countdown_3gpu.sh", **env: str
) -> subprocess.CompletedProcess:
    """``SMOKE=1 bash shell/<script>`` (a 3-GPU recipe) into ``out`` on this CPU, in :func:`server_smoke_env`: real
    ``swift rollout`` on vLLM's CPU build, real ``swift rlhf`` with DeepSpeed ZeRO-3 on 2 processes, the weight sync
    over gloo through the NCCL stand-in; :func:`server_trainer_flags`, then ``extra`` swift rlhf flags."""
    command = ["bash", str(SHELL / script), *server_trainer_flags(out), *extra]
    environment = server_smoke_env(out, **env)
    return run_real(command, slots=2, env=environment)


def sequential_zero3(path: Path) -> Path:
    """ms-swift's own ZeRO-3 config with ``stage3_allgather_sequential``, written to ``path``: on a CPU, DeepSpeed
    0.18.9 gathers several parameters at once with async all-gathers over gloo and waits for the last one only,
    and gloo finishes them in any order, so a load under ZeRO-3 sometimes keeps a stale q/k/v weight (6 of 23 runs;
    0 of 19 with this key; ``tests/e2e/zero3_cpu_load_check.py``). NCCL keeps them in order: GPUs are not affected."""
    config = json.loads((Path(importlib.util.find_spec("swift").origin).parent / "config" / "zero3.json").read_text())
    config["zero_optimization"]["stage3_allgather_sequential"] = True
    path.write_text(json.dumps(config, indent=2))
    return path


def agree(vllm_answer: list, reference: list) -> bool:
    """Whether two greedy answers of the sync probe are the same tokens with the same log-probabilities, up to a tie
    broken differently (after which the answers may part)."""
    for (token, logprob, runner_up), (ref_token, ref_logprob, _) in zip(vllm_answer, reference, strict=True):
        if token != ref_token:
            return logprob - runner_up < TIE
        if abs(logprob - ref_logprob) > TIE:
            return False
    return True


def probe_answers(models: Sequence[Path]) -> dict[str, list]:
    """The sync probe's greedy answers of each saved model, computed apart by swift's transformers engine."""
    result = run_real([sys.executable, str(SYNC_PROBE), *map(str, models)], env={**os.environ, "PYTHONPATH": str(REPO)})
    assert result.returncode == 0, result.stderr[-3000:]
    # one JSON line per model; other lines are libraries' chatter (DeepSpeed announces its CPU accelerator on stdout)
    printed = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
    return {line["model"]: line["answers"] for line in printed}


def assert_answers_follow_the_checkpoints(records: Mapping[int, list], run: Path, base_model: Path) -> None:
    """vLLM's answers recorded after the sync of step k (the probe's ``{step: answers}``) are those of the
    checkpoint saved at step k (the base model at 0), and training changed them."""
    models = {step: base_model if step == 0 else run / f"checkpoint-{step}" for step in sorted(records)}
    reference = probe_answers(list(models.values()))
    for step, model in models.items():
        for vllm_answer, answer in zip(records[step], reference[str(model)], strict=True):
            assert agree(vllm_answer, answer), (step, vllm_answer, answer)

    # training moved the weights vLLM answers with: other tokens, or the same tokens with other log-probabilities
    # (a few steps of the tiny model's training can leave every greedy token in place)
    first, last = (records[step] for step in (0, max(records)))
    assert any(
        token != last_token or abs(logprob - last_logprob) > TIE
        for answer, last_answer in zip(first, last, strict=True)
        for (token, logprob, _), (last_token, last_logprob, _) in zip(answer, last_answer, strict=False)
    ), "vLLM answers as it did before training"


@contextlib.contextmanager
def busy_port(host: str = "") -> Iterator[int]:
    """A port that something listens on (on ``host``; "": every interface) while the block runs."""
    with socket.socket() as busy:
        busy.bind((host, 0))
        busy.listen()
        yield busy.getsockname()[1]


def process_gone(pid: int) -> bool:
    """True when pid does not exist or is a zombie (pid 1 of a container may never reap it)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return True
    return stat.rsplit(")", 1)[1].split()[0] == "Z"


# Waits for a process to start or stop: generous, as the three lanes of make test share the cores (a passing wait ends
# when its predicate holds); a launcher with its preflight took over 10 s to say ready under that load.
START_WAIT = 120.0
STOP_WAIT = 30.0


def wait_until(predicate: Callable[[], object], timeout: float = 8.0, interval: float = 0.05) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(interval)
    return bool(predicate())


@contextlib.contextmanager
def kept_signal_handlers() -> Iterator[None]:
    """Put back this process's handlers of the stop signals, which the launcher's Children take over."""
    handlers = {signum: signal.getsignal(signum) for signum in STOP_SIGNALS}
    try:
        yield
    finally:
        for signum, handler in handlers.items():
            signal.signal(signum, handler)


def make_checkpoint(
    run_dir: Path,
    step: int,
    *,
    weights: str = "model.safetensors",
    states: str = "",
    complete: bool = True,
    mtime: float | None = None,
) -> Path:
    """``run_dir/checkpoint-<step>`` as ms-swift leaves it: ``weights``, optimizer ``states`` (``""``: weights only;
    ``"global_step"``: DeepSpeed's ``global_step<N>/``; ``"optimizer.pt"``: torch's), ``trainer_state.json`` last
    (``complete=False``: a save cut short)."""
    checkpoint = run_dir / f"checkpoint-{step}"
    checkpoint.mkdir(parents=True)
    (checkpoint / weights).write_text("")
    if states == "global_step":
        (checkpoint / f"global_step{step}").mkdir()
    elif states:
        (checkpoint / states).write_text("")
    if complete:
        (checkpoint / "trainer_state.json").write_text(json.dumps({"global_step": step}))
    if mtime is not None:
        os.utime(checkpoint, (mtime, mtime))
    return checkpoint


def shell_commands(text: str) -> list[list[str]]:
    """The words of each command of a printed script (DRY_RUN's output, commands.sh): `# ...` comments skipped,
    ` \\` continuations joined, quoted values that span lines (a multi-line --system) kept whole."""
    commands, pending = [], ""
    for line in text.splitlines(keepends=True):
        pending += line
        if pending.rstrip("\n").endswith(" \\"):
            continue
        try:
            words = shlex.split(pending.replace(" \\\n", " "), comments=True)
        except ValueError:  # inside a quoted value that goes on
            continue
        pending = ""
        if words:
            commands.append(words)
    assert not pending, f"unterminated command: {pending!r}"
    return commands


def parse_dry_run(stdout: str) -> dict[str, tuple[dict[str, str | None], list[str]]]:
    """{'rollout': (env, argv), 'rlhf': (env, argv)} from the `env -u NAME... K=V... swift ...` a DRY_RUN prints.

    env maps the variables set to their values and those removed (`env -u NAME`) to None.
    """
    commands = {}
    for words in shell_commands(stdout):
        if "swift" not in words:
            continue
        i = words.index("swift")
        env, prefix = {}, words[:i]
        assert prefix[:1] == ["env"], words
        while len(prefix) > 1 and prefix[1] == "-u":
            env[prefix[2]] = None
            prefix = [prefix[0], *prefix[3:]]
        env.update(word.split("=", 1) for word in prefix[1:])
        commands[words[i + 1]] = (env, words[i + 2 :])
    return commands


def error_lines(stderr: str, script: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith(f"{script}: error:")]


def assert_refused(result: subprocess.CompletedProcess, script: str, *words: str) -> None:
    """Exit status 1 and one ``<script>: error:`` line holding every one of ``words``."""
    assert result.returncode == 1, result.stderr
    errors = error_lines(result.stderr, script)
    assert len(errors) == 1, result.stderr
    for word in words:
        assert word in errors[0], errors[0]


# The installed ms-swift's judgement of swift command lines: the launcher's own (swift_plugins.integration.swift_args).
SWIFT_PARSE = """
import json, sys
from swift_plugins.integration.swift_args import ARGUMENTS, refusals

COMMANDS = {cls: command for command, cls in ARGUMENTS.items()}

def unknown(pairs):
    found = refusals([(COMMANDS[cls], argv) for cls, argv in pairs])
    return [[cls, line] for (cls, _), line in zip(pairs, found) if line]

payload = json.loads(sys.argv[1])
"""


def with_swift(program: str, payload: object) -> object:
    """What ``program`` prints as JSON on its last line, run after :data:`SWIFT_PARSE` (``unknown``, ``payload``)
    by a fresh interpreter that imports the installed ms-swift and this checkout."""
    result = subprocess.run(
        [sys.executable, "-c", SWIFT_PARSE + program, json.dumps(payload)],
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,  # a fresh ms-swift import, on a machine the other lanes share
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


def unknown_to_swift(pairs: Sequence[tuple[str, Sequence[str]]]) -> list[list[str]]:
    """The ``[class, refusal]`` pairs of the ``(class, argv)`` pairs (class: a name in swift.arguments such as
    ``RLHFArguments``) whose argv ms-swift refuses (an unknown flag, a bad value); ``[]`` when every one parses."""
    return with_swift("print(json.dumps(unknown(payload)))", [[cls, list(argv)] for cls, argv in pairs])


class Sandbox:
    """PATH with the stand-ins, free ports, a state dir for their records, an output dir."""

    def __init__(self, tmp_path: Path) -> None:
        self.tmp = tmp_path
        self.bin = tmp_path / "bin"
        self.state = tmp_path / "state"
        self.out = tmp_path / "out"
        self.bin.mkdir()
        self.state.mkdir()
        (self.bin / "nvidia-smi").symlink_to(STAND_INS / "nvidia-smi")
        (self.bin / "swift").symlink_to(STAND_INS / "swift")
        # The stand-in's `#!/usr/bin/env python3`: this environment's python (a symlink would lose the venv).
        (self.bin / "python3").write_text(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} "$@"\n')
        (self.bin / "python3").chmod(0o755)
        dead_proxy = f"http://127.0.0.1:{free_port()}"  # nothing listens: a proxied request fails
        self.env = {
            "PATH": f"{self.bin}:/usr/bin:/bin",
            "HOME": str(tmp_path),
            "LANG": "C.UTF-8",
            "PYTHONDONTWRITEBYTECODE": "1",  # keep tests/stand_ins/pylib clean
            "PYTHONPATH": str(STAND_INS / "pylib"),  # the stand-in `swift` package decides the version
            "FAKE_SWIFT_STATE_DIR": str(self.state),
            "OUTPUT_DIR": str(self.out),
            "ROLLOUT_PORT": str(free_port()),
            "ROLLOUT_GROUP_PORT": str(free_port()),
            "MASTER_PORT": str(free_port()),
            "ROLLOUT_TIMEOUT": "10",
            "STOP_GRACE_SECONDS": "2",
            "http_proxy": dead_proxy,
            "HTTP_PROXY": dead_proxy,
            "no_proxy": "corp.example",
        }
        self.procs: list[subprocess.Popen] = []

    def env_for(self, overrides: Mapping[str, object], script: str | None = None) -> dict[str, str]:
        """The sandbox's environment with ``overrides`` (None: removed); for a launcher recipe's or the demo's
        ``script``, without the sandbox's own settings that it does not read (it would refuse them)."""
        env = dict(self.env)
        recipe = script.removesuffix(".sh") if script else None
        own = None
        if recipe == DEMO_SCRIPT:
            own = {setting.name for setting in DEMO_SETTINGS}
        elif recipe is not None and recipe in recipe_names():
            own = {entry.name for entry in entries(recipe)}
        if own is not None:
            env = {key: value for key, value in env.items() if key in own or key not in SETTING_NAMES}
        for key, value in overrides.items():
            if value is None:
                env.pop(key, None)
            else:
                env[key] = str(value)
        return env

    def _script(self, script: str, args: Sequence[str], env: Mapping[str, object]) -> dict:
        return {"args": ["bash", str(SHELL / script), *args], "env": self.env_for(env, script), "cwd": self.tmp}

    def run(self, script: str, *args: str, timeout: float = 30, **env: object) -> subprocess.CompletedProcess:
        """``shell/<script>`` in a process of its own, to its end."""
        return subprocess.run(**self._script(script, args, env), capture_output=True, text=True, timeout=timeout)

    def start(self, script: str, *args: str, **env: object) -> subprocess.Popen:
        """Starts a launcher in its own process group, as a terminal would; output to files."""
        out_path = self.tmp / f"{script}.{len(self.procs)}.out"
        err_path = self.tmp / f"{script}.{len(self.procs)}.err"
        with out_path.open("w") as out, err_path.open("w") as err:
            proc = subprocess.Popen(**self._script(script, args, env), stdout=out, stderr=err, start_new_session=True)
        proc.out_path, proc.err_path = out_path, err_path
        self.procs.append(proc)
        return proc

    @contextlib.contextmanager
    def environment(self, script: str | None = None, **env: object) -> Iterator[dict[str, str]]:
        """This process as ``script`` would run it: the sandbox's environment (what children inherit too) and
        working directory; both, and the handlers of the stop signals, are put back afterwards."""
        saved_env, saved_cwd = dict(os.environ), os.getcwd()
        values = self.env_for(env, script)
        os.environ.clear()
        os.environ.update(values)
        os.chdir(self.tmp)
        try:
            with kept_signal_handlers():
                yield values
        finally:
            os.environ.clear()
            os.environ.update(saved_env)
            os.chdir(saved_cwd)

    def launch(self, script: str, *args: str, **env: object) -> subprocess.CompletedProcess:
        """The launcher behind ``shell/<script>``, run in this process: the ``main`` the script execs, with its
        exit status and what it writes on stdout and stderr (the stand-ins it starts are processes)."""
        from swift_plugins.launch.__main__ import main

        stdout = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", write_through=True)  # the trainer's log: bytes
        stderr = io.StringIO()
        argv = [script.removesuffix(".sh"), *args]
        with self.environment(script, **env), contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            status = main(argv)
        return subprocess.CompletedProcess(argv, status, stdout.buffer.getvalue().decode(), stderr.getvalue())

    def record(self, name: str) -> dict | None:
        path = self.state / f"{name}.json"
        return json.loads(path.read_text()) if path.exists() else None

    def wait_record(self, name: str, timeout: float = START_WAIT) -> dict:
        assert wait_until(lambda: self.record(name) is not None, timeout), f"{name} never started"
        return self.record(name)

    def started_pids(self) -> list[int]:
        return [json.loads(p.read_text())["pid"] for p in self.state.glob("*.json")]

    def assert_nothing_started(self) -> None:
        """No stand-in started, no output folder written."""
        assert not self.started_pids() and not self.out.exists()

    def assert_all_stopped(self, timeout: float = STOP_WAIT) -> None:
        for pid in self.started_pids():
            assert wait_until(lambda pid=pid: process_gone(pid), timeout), f"pid {pid} still running"

    def cleanup(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        for pid in self.started_pids():  # never leak stand-ins into the rest of the test run
            if not process_gone(pid):
                os.kill(pid, signal.SIGKILL)
