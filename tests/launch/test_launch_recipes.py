"""The recipes run in this process: the launcher's ``main`` (what every shell/ script execs) with the stand-ins of
tests/stand_ins on PATH (``sandbox.launch``): its exit status, what it prints, what it refuses, and what the stand-in
`swift` recorded of the commands it started.

The stand-in `swift rollout` serves /health/ with http.server, `swift rlhf` records its argv and environment; they run
as processes, the launcher does not.  What needs the launcher to be a process of its own (signals, the health wait, exit
statuses, resume and the smoke run end to end, --help, the scripts' exec) is in tests/launch/test_launchers.py.
"""

import re
import shlex

import pytest

from swift_plugins.core.flags import Flags
from swift_plugins.core.think_answer import SYSTEM_PROMPT
from swift_plugins.launch.recipes import HELD_OUT
from swift_plugins.launch.runs import write_record
from swift_plugins.tasks import task_named

from .. import helpers
from ..helpers import (
    PLUGIN,
    REPO,
    assert_refused,
    busy_port,
    flag,
    free_port,
    make_checkpoint,
    parse_dry_run,
    shell_commands,
)

COUNTDOWN, GSM8K = task_named("countdown").preset, task_named("gsm8k").preset
REFERENCE = COUNTDOWN.reference_completions  # a step's completions on the 3-GPU recipe's two training GPUs
TINY_MODEL = "swift_plugins tiny-model"


def preset_values(*words):
    """``{"--flag": value}`` of the one-valued flags of ``words`` (a preset's)."""
    flags = Flags(words)
    return {f"--{name}": flags.value(name) for name in flags.names() if len(flags.values(name)) == 1}


# ------------------------------------------------------------------------ 3-GPU


def test_3gpu_run_commands_gpus_ports_and_logs(sandbox):
    result = sandbox.launch("countdown_3gpu.sh")
    assert result.returncode == 0, result.stderr

    rollout = sandbox.record("rollout")
    assert rollout["env"]["CUDA_VISIBLE_DEVICES"] == "2"
    argv = rollout["argv"]
    assert flag(argv, "--model") == COUNTDOWN.model
    assert flag(argv, "--host") == "127.0.0.1"
    assert flag(argv, "--port") == sandbox.env["ROLLOUT_PORT"]
    assert int(flag(argv, "--vllm_max_model_len")) == COUNTDOWN.vllm_max_model_len
    assert flag(argv, "--external_plugins") == str(PLUGIN)

    rlhf = sandbox.record("rlhf")
    argv = rlhf["argv"]
    assert rlhf["env"]["CUDA_VISIBLE_DEVICES"] == "0,1"
    assert rlhf["env"]["NPROC_PER_NODE"] == "2"
    expected = {
        "--rlhf_type": "grpo",
        "--model": COUNTDOWN.model,
        "--torch_dtype": "bfloat16",
        "--dataset": COUNTDOWN.dataset,
        "--tuner_type": "full",
        "--deepspeed": "zero3",
        "--use_vllm": "true",
        "--vllm_mode": "server",
        "--vllm_server_host": "127.0.0.1",
        "--vllm_server_port": sandbox.env["ROLLOUT_PORT"],
        "--vllm_server_group_port": sandbox.env["ROLLOUT_GROUP_PORT"],
        "--save_steps": "100",
        "--save_total_limit": "20",
        "--logging_steps": "1",
        "--warmup_ratio": "0.01",
        "--dataloader_num_workers": "4",
        "--temperature": "1.0",
        "--log_completions": "true",
        "--report_to": "tensorboard",
        "--num_iterations": "1",
        "--output_dir": str(sandbox.out),
        "--top_k": "50",
        "--top_p": "0.9",
        "--save_only_model": "true",
        "--split_dataset_ratio": "0.01",
        "--eval_steps": str(COUNTDOWN.eval_steps),
        "--system": SYSTEM_PROMPT,
        **preset_values(*COUNTDOWN.args, *COUNTDOWN.server_args),  # lengths, generations, batch, lr, beta
    }
    assert {k: flag(argv, k) for k in expected} == expected
    assert argv[argv.index("--reward_funcs") + 1 :][:2] == ["external_countdown", "think_answer_format"]
    assert "--reward_weights" not in argv  # the task's rewards, each of weight 1
    plugin = flag(argv, "--external_plugins")
    assert plugin == str(PLUGIN) and PLUGIN.is_file()  # absolute: cwd was tmp_path
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
    sandbox.assert_all_stopped()
    # Issue 16: the command that evaluates the final checkpoint, pasteable as printed.
    evaluate = shlex.split(result.stdout.strip().splitlines()[-1])
    checkpoint = next(sandbox.out.glob("v0-*/checkpoint-1"))
    assert evaluate == [
        "python", "-m", "swift_plugins", "evaluate", str(checkpoint), "--task", "countdown",
        "--data", HELD_OUT, "--out", str(sandbox.out / "eval-final"), "--system", SYSTEM_PROMPT,
    ]  # fmt: skip
    assert f"{HELD_OUT}: held-out puzzles, e.g. python -m swift_plugins countdown generate" in result.stderr


def test_3gpu_gpu_layout_from_env_and_extra_args_win(sandbox):
    result = sandbox.launch(
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
    result = sandbox.launch("countdown_3gpu.sh", **env)
    assert_refused(result, "countdown_3gpu.sh", *words)
    sandbox.assert_nothing_started()


@pytest.mark.parametrize("missing", ["swift", "nvidia-smi"])
def test_3gpu_refuses_without_executable(sandbox, missing):
    (sandbox.bin / missing).unlink()
    result = sandbox.launch("countdown_3gpu.sh")
    assert_refused(result, "countdown_3gpu.sh", missing, "not found")
    assert not sandbox.started_pids()


@pytest.mark.parametrize("port_var", ["ROLLOUT_PORT", "ROLLOUT_GROUP_PORT", "MASTER_PORT"])
def test_3gpu_refuses_busy_port(sandbox, port_var):
    with busy_port("127.0.0.1") as port:
        result = sandbox.launch("countdown_3gpu.sh", **{port_var: port})
    assert_refused(result, "countdown_3gpu.sh", f"{port_var}={port}", "in use")
    assert not sandbox.started_pids()


def test_3gpu_refuses_same_port_twice(sandbox):
    result = sandbox.launch("countdown_3gpu.sh", ROLLOUT_GROUP_PORT=sandbox.env["ROLLOUT_PORT"], DRY_RUN=1)
    assert_refused(result, "countdown_3gpu.sh", "ROLLOUT_GROUP_PORT")


@pytest.mark.parametrize("extra", [["--vllm_server_port", "1234"], ["--vllm_server_host=10.0.0.1"]])
def test_3gpu_refuses_extra_args_that_unpair_trainer_and_server(sandbox, extra):
    result = sandbox.launch("countdown_3gpu.sh", *extra, DRY_RUN=1)
    assert_refused(result, "countdown_3gpu.sh", extra[0].split("=")[0], "ROLLOUT_PORT")


def test_dry_run_prints_the_warnings_and_no_warning_with_defaults(sandbox):
    assert "warning" not in sandbox.launch("countdown_3gpu.sh", DRY_RUN=1).stderr
    lr, beta = COUNTDOWN.collapse
    result = sandbox.launch("countdown_3gpu.sh", "--learning_rate", lr, "--beta", beta, DRY_RUN=1)
    assert result.returncode == 0
    warnings = [line for line in result.stderr.splitlines() if "warning:" in line]
    assert len(warnings) == 1, result.stderr
    for word in (f"learning_rate={lr}", f"beta={beta}", "collapse"):
        assert word in warnings[0]
    result = sandbox.launch("countdown_1gpu.sh", "--output_dir", "elsewhere", DRY_RUN=1)
    assert result.returncode == 0 and "countdown_1gpu.sh: warning: --output_dir" in result.stderr


# ------------------------------------------------------------------------ 1-GPU


def test_1gpu_run_colocate_lora(sandbox):
    result = sandbox.launch("countdown_1gpu.sh", GPU=1, FAKE_GPU_COUNT=2)
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
        "--dataset": COUNTDOWN.dataset,
        **preset_values(*COUNTDOWN.colocate_args),
    }
    assert {k: flag(argv, k) for k in expected} == expected
    assert 0.3 <= float(flag(argv, "--vllm_gpu_memory_utilization")) <= 0.6
    assert flag(argv, "--external_plugins") == str(PLUGIN)
    assert "--vllm_server_port" not in argv
    assert (sandbox.out / "train.log").exists() and "fake rlhf" in result.stdout
    sandbox.assert_all_stopped()


def test_1gpu_refusals_and_status(sandbox):
    assert_refused(sandbox.launch("countdown_1gpu.sh", GPU=3), "countdown_1gpu.sh", "GPU 3")
    assert_refused(sandbox.launch("countdown_1gpu.sh", GPU="0,1"), "countdown_1gpu.sh", "single GPU")
    assert_refused(sandbox.launch("countdown_1gpu.sh", FAKE_SWIFT_VERSION="3.8.1"), "countdown_1gpu.sh", "3.8.1")
    assert not sandbox.started_pids()
    result = sandbox.launch("countdown_1gpu.sh", FAKE_TRAIN_EXIT=5)
    assert result.returncode == 5 and "trainer exited with status 5; see " in result.stderr
    sandbox.assert_all_stopped()


# -------------------------------------------------------------------- multinode


def test_multinode_needs_role(sandbox):
    assert_refused(sandbox.launch("countdown_multinode.sh"), "countdown_multinode.sh", "ROLE")
    assert_refused(sandbox.launch("countdown_multinode.sh", ROLE="both"), "countdown_multinode.sh", "ROLE")
    assert_refused(sandbox.launch("countdown_multinode.sh", ROLE="train"), "countdown_multinode.sh", "ROLLOUT_HOST")
    assert_refused(
        sandbox.launch("countdown_multinode.sh", ROLE="train", ROLLOUT_HOST="gen0", NNODES=2),
        "countdown_multinode.sh",
        "MASTER_ADDR",
    )
    assert_refused(
        sandbox.launch(
            "countdown_multinode.sh", ROLE="train", ROLLOUT_HOST="gen0", NNODES=2, NODE_RANK=2, MASTER_ADDR="node0"
        ),
        "countdown_multinode.sh",
        "NODE_RANK=2",
    )
    assert_refused(
        sandbox.launch("countdown_multinode.sh", "--seed", "1", ROLE="rollout", DRY_RUN=1),
        "countdown_multinode.sh",
        "ROLE=rollout takes no arguments",
    )


def test_multinode_dry_run_train(sandbox):
    result = sandbox.launch(
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
    assert f"# trainer node 1/2 on GPUs 0,1,2,3, NPROC_PER_NODE=4, log: {sandbox.out / 'train-node1.log'}" in (
        result.stdout
    )
    sandbox.assert_nothing_started()


def test_multinode_takes_the_gsm8k_task(sandbox):
    result = sandbox.launch("countdown_multinode.sh", DRY_RUN=1, ROLE="train", ROLLOUT_HOST="gen0", TASK="gsm8k")
    assert result.returncode == 0, result.stderr
    _, argv = parse_dry_run(result.stdout)["rlhf"]
    assert flag(argv, "--model") == GSM8K.model
    assert_refused(
        sandbox.launch("countdown_multinode.sh", DRY_RUN=1, ROLE="train", TASK="chess"),
        "countdown_multinode.sh",
        "chess",
    )


# ------------------------------------------------------ what a real GPU box hits


def test_exported_vllm_port_never_reaches_the_children(sandbox):
    # vLLM reads VLLM_PORT as the base of its internal ports (vllm/envs.py, get_open_port in vllm/utils) and
    # `swift rollout` takes its data-parallel master port from get_open_port (swift/pipelines/infer/rollout.py,
    # SwiftRolloutDeploy.__init__): the old `VLLM_PORT=8011 countdown_3gpu.sh` gave vLLM the HTTP port.
    port = sandbox.env["ROLLOUT_PORT"]
    result = sandbox.launch("countdown_3gpu.sh", VLLM_PORT=port)
    assert result.returncode == 0, result.stderr
    assert f"VLLM_PORT='{port}' in the environment is vLLM's own setting: it is removed" in result.stderr
    assert sandbox.record("rollout")["env"]["VLLM_PORT"] is None
    assert sandbox.record("rlhf")["env"]["VLLM_PORT"] is None
    assert "env -u VLLM_PORT" in (sandbox.out / "commands.sh").read_text()
    dry = parse_dry_run(sandbox.launch("countdown_3gpu.sh", DRY_RUN=1, VLLM_PORT=port).stdout)
    assert dry["rollout"][0]["VLLM_PORT"] is None and dry["rlhf"][0]["VLLM_PORT"] is None


@pytest.mark.parametrize("old, new", [("VLLM_PORT", "ROLLOUT_PORT"), ("VLLM_GROUP_PORT", "ROLLOUT_GROUP_PORT")])
def test_old_port_names_are_refused_with_the_new_name(sandbox, old, new):
    for script, role in (("countdown_3gpu.sh", None), ("countdown_multinode.sh", "rollout")):
        result = sandbox.launch(script, DRY_RUN=1, ROLE=role, ROLLOUT_PORT=None, **{old: 8011})
        assert_refused(result, script, old, new)


def test_inherited_cuda_visible_devices_is_indexed_not_replaced(sandbox):
    # A scheduler gave this job GPUs 5,6,7: the recipe must not reach for 0-2.
    result = sandbox.launch("countdown_3gpu.sh", CUDA_VISIBLE_DEVICES="5,6,7", FAKE_GPU_COUNT=8)
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
    result = sandbox.launch("countdown_3gpu.sh", FAKE_GPU_COUNT=8, **env)
    assert_refused(result, "countdown_3gpu.sh", *words)
    assert not sandbox.started_pids()


def test_gpu_uuids_and_mig_ids_are_accepted(sandbox):
    inherited = "GPU-fake-3,GPU-fake-4,GPU-fake-5"
    result = sandbox.launch("countdown_3gpu.sh", CUDA_VISIBLE_DEVICES=inherited, FAKE_GPU_COUNT=6)
    assert result.returncode == 0, result.stderr
    assert sandbox.record("rollout")["env"]["CUDA_VISIBLE_DEVICES"] == "GPU-fake-5"
    assert sandbox.record("rlhf")["env"]["CUDA_VISIBLE_DEVICES"] == "GPU-fake-3,GPU-fake-4"
    result = sandbox.launch("countdown_1gpu.sh", GPU="MIG-fake-1-0", FAKE_GPU_COUNT=2, FAKE_MIG=1)
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
    result = sandbox.launch(script, **env)
    assert_refused(result, script, *words)
    assert not sandbox.started_pids()


def test_gpu_library_versions_are_reported_and_lora_needs_no_deepspeed(sandbox):
    result = sandbox.launch("countdown_3gpu.sh")
    assert result.returncode == 0, result.stderr
    assert "vllm 0.11.0, deepspeed 0.18.9" in result.stderr
    result = sandbox.launch("countdown_1gpu.sh", FAKE_DEEPSPEED="missing")  # colocate LoRA: no --deepspeed
    assert result.returncode == 0, result.stderr


def test_report_to_wandb_needs_wandb_where_swift_runs(sandbox):
    result = sandbox.launch("countdown_1gpu.sh", REPORT_TO="wandb", FAKE_WANDB="missing")
    assert_refused(result, "countdown_1gpu.sh", "REPORT_TO=wandb", "No module named 'wandb'", "pip install wandb")
    assert not sandbox.started_pids()
    result = sandbox.launch("countdown_1gpu.sh", REPORT_TO="wandb")
    assert result.returncode == 0, result.stderr
    assert "wandb 0.21.0" in result.stderr and flag(sandbox.record("rlhf")["argv"], "--report_to") == "wandb"


# --------------------------------------------------------- what DRY_RUN prints


def test_dry_run_shows_sampling_eval_split_and_weights_only_checkpoints(sandbox):
    for script in ("countdown_3gpu.sh", "countdown_1gpu.sh", "gsm8k_3gpu.sh", "gsm8k_1gpu.sh"):
        result = sandbox.launch(script, DRY_RUN=1)
        assert result.returncode == 0, result.stderr
        _, argv = parse_dry_run(result.stdout)["rlhf"]
        # ms-swift 3.x defaults, which the reference curves used; 4.x defaults to -1 / 1.0
        # (swift/rlhf_trainers/args_mixin.py, RolloutTrainerArgumentsMixin.top_k / top_p).
        assert (flag(argv, "--top_k"), flag(argv, "--top_p")) == ("50", "0.9"), script
        # 4.x defaults split_dataset_ratio to 0: no eval unless the recipe asks for one.
        assert flag(argv, "--split_dataset_ratio") == "0.01" and flag(argv, "--eval_steps"), script
        assert flag(argv, "--save_only_model") == "true", script


def test_a_dry_run_prints_the_selection_first_and_trains_on_what_it_writes(sandbox):
    data = sandbox.tmp / "train.jsonl"
    data.write_text('{"nums": [1, 2], "target": 3}\n')
    (sandbox.tmp / "train.test.jsonl").write_text('{"nums": [2, 2], "target": 4}\n')
    result = sandbox.launch("countdown_3gpu.sh", DRY_RUN=1, DATASET=data, SELECT_SAMPLES=8, DYNAMIC_SAMPLE=3)
    assert result.returncode == 0, result.stderr
    commands = shell_commands(result.stdout)
    select, rlhf = commands[0], parse_dry_run(result.stdout)["rlhf"][1]
    assert select[select.index("python") + 1 :][:3] == ["-m", "swift_plugins", "select"]
    selected = flag(select, "--out")
    assert flag(select, "--candidates") == str(data) and flag(rlhf, "--dataset") == selected
    assert flag(rlhf, "--val_dataset") == str(sandbox.tmp / "train.test.jsonl")  # the candidates' held-out rows
    assert (flag(rlhf, "--dynamic_sample"), flag(rlhf, "--max_resample_times")) == ("true", "3")
    assert flag(select, "--vllm_max_model_len") == str(task_named("countdown").preset.vllm_max_model_len)
    assert not sandbox.out.joinpath("selected.jsonl").exists()  # a dry run starts nothing, selects nothing


def test_a_dry_run_says_in_one_line_when_ms_swift_cannot_check_the_flags(sandbox):
    # the stand-in ms-swift (tests/stand_ins/pylib) has no argument classes; the real one's refusals are tested in
    # tests/launch/test_launchers.py
    result = sandbox.launch("countdown_1gpu.sh", DRY_RUN=1)
    assert result.returncode == 0, result.stderr
    said = [line for line in result.stderr.splitlines() if "swift flags not checked" in line]
    assert len(said) == 1 and said[0].startswith("countdown_1gpu.sh: swift flags not checked: ms-swift's argument "
                                                 "classes do not import with ")  # fmt: skip


def test_a_run_with_dynamic_sampling_ends_saying_how_often_it_trained_the_batch_as_drawn(sandbox):
    """ms-swift trains the original batch, groups without spread included, when its resampling runs out, and says
    so only in a warning: the run's last lines count those steps (the stand-in warns as ms-swift 4.6 does)."""
    result = sandbox.launch("countdown_1gpu.sh", DYNAMIC_SAMPLE=2, FAKE_TRAIN_LOG=5, FAKE_TRAIN_FALLBACKS=2)
    assert result.returncode == 0, result.stderr
    assert ("countdown_1gpu.sh: dynamic sampling: 2 of 5 steps trained their batch as drawn, groups without spread "
            "included (2 resamplings did not replace them)") in result.stderr.splitlines()  # fmt: skip
    quiet = sandbox.launch("countdown_1gpu.sh", FAKE_TRAIN_LOG=5, FAKE_TRAIN_FALLBACKS=0)
    assert quiet.returncode == 0 and "dynamic sampling" not in quiet.stderr


def test_eval_uses_the_generated_test_file_or_none(sandbox):
    data = sandbox.tmp / "train.jsonl"
    data.write_text('{"nums": [1, 2], "target": 3}\n')
    (sandbox.tmp / "train.test.jsonl").write_text('{"nums": [2, 2], "target": 4}\n')
    _, argv = parse_dry_run(sandbox.launch("countdown_3gpu.sh", DRY_RUN=1, DATASET=data).stdout)["rlhf"]
    assert flag(argv, "--val_dataset") == str(sandbox.tmp / "train.test.jsonl")
    assert flag(argv, "--split_dataset_ratio") is None
    _, argv = parse_dry_run(sandbox.launch("countdown_3gpu.sh", DRY_RUN=1, VAL_DATASET="none").stdout)["rlhf"]
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
        ("countdown_cpu_smoke.sh", {}),
    ],
)
def test_batches_divide_into_groups_as_ms_swift_requires(sandbox, script, env):
    # swift/rlhf_trainers/args_mixin.py (RolloutTrainerArgumentsMixin, the checks after steps_per_generation):
    # the generation batch (per device x processes x accumulation) and, with eval on, the global eval batch
    # (per device x processes) must be multiples of num_generations, else swift raises at start-up.
    result = sandbox.launch(script, DRY_RUN=1, **env)
    assert result.returncode == 0, result.stderr
    train_env, argv = parse_dry_run(result.stdout)["rlhf"]
    world = int(train_env.get("NPROC_PER_NODE", 1)) * int(train_env.get("NNODES", 1))
    generations = int(flag(argv, "--num_generations"))
    train = int(flag(argv, "--per_device_train_batch_size")) * int(flag(argv, "--gradient_accumulation_steps"))
    assert train * world % generations == 0
    assert int(flag(argv, "--per_device_eval_batch_size")) * world % generations == 0


def test_rollout_args_cannot_move_the_server(sandbox):
    for value in ("--port 8123", "--vllm_enforce_eager true --host=0.0.0.0"):
        result = sandbox.launch("countdown_3gpu.sh", DRY_RUN=1, ROLLOUT_ARGS=value)
        assert_refused(result, "countdown_3gpu.sh", "ROLLOUT_ARGS", "ROLLOUT_PORT")
    result = sandbox.launch("countdown_multinode.sh", DRY_RUN=1, ROLE="rollout", ROLLOUT_ARGS="--port 8123")
    assert_refused(result, "countdown_multinode.sh", "ROLLOUT_ARGS", "ROLLOUT_BIND_HOST")


def test_rollout_args_keep_quoted_values_whole(sandbox):
    value = """--vllm_engine_kwargs '{"max_num_seqs": 64, "seed": 1}' --vllm_enforce_eager true"""
    result = sandbox.launch("countdown_3gpu.sh", ROLLOUT_ARGS=value)
    assert result.returncode == 0, result.stderr
    argv = sandbox.record("rollout")["argv"]
    assert argv[-4:] == ["--vllm_engine_kwargs", '{"max_num_seqs": 64, "seed": 1}', "--vllm_enforce_eager", "true"]
    assert_refused(sandbox.launch("countdown_3gpu.sh", DRY_RUN=1, ROLLOUT_ARGS="--a 'b"), "countdown_3gpu.sh", "quote")


def test_a_rerun_in_the_same_output_dir_keeps_the_earlier_logs(sandbox):
    assert sandbox.launch("countdown_3gpu.sh", FAKE_TRAIN_EXIT=3).returncode == 3
    first = {name: (sandbox.out / name).read_text() for name in ("train.log", "rollout.log", "commands.sh")}
    # A fresh rollout port: the last one may linger in TIME_WAIT, which the launcher refuses.
    result = sandbox.launch("countdown_3gpu.sh", ROLLOUT_PORT=free_port())
    assert result.returncode == 0
    for name, text in first.items():
        assert (sandbox.out / f"{name}.1").read_text() == text
    assert "kept the previous train.log as train.log.1" in result.stderr
    assert "exiting with status 3" in (sandbox.out / "train.log.1").read_text()
    assert "exiting with status 0" in (sandbox.out / "train.log").read_text()
    assert sandbox.launch("countdown_3gpu.sh", ROLLOUT_PORT=free_port()).returncode == 0
    assert (sandbox.out / "train.log.2").exists() and (sandbox.out / "train.log.1").read_text() == first["train.log"]


# ------------------------------------------------------------------- resume


def test_resume_auto_with_optimizer_states_resumes_them(sandbox):
    assert sandbox.launch("countdown_1gpu.sh", FAKE_TRAIN_EXIT=1).returncode == 1
    checkpoint = make_checkpoint(sandbox.out / "v0-20260101-000000", 100, states="global_step")
    result = sandbox.launch("countdown_1gpu.sh", RESUME="auto")
    assert result.returncode == 0, result.stderr
    argv = sandbox.record("rlhf")["argv"]
    assert flag(argv, "--resume_from_checkpoint") == str(checkpoint) and "--resume_only_model" not in argv


@pytest.mark.parametrize(
    "args, env, words",
    [
        ([], {}, ["no complete checkpoint"]),
        (["--per_device_train_batch_size", "4"], {"checkpoint": 1},
         [f"--per_device_train_batch_size '{preset_values(*COUNTDOWN.server_args)['--per_device_train_batch_size']}' "
          "-> '4'"]),
        ([], {"checkpoint": 1, "ROLLOUT_GPU": 0, "TRAIN_GPUS": "1,2,3", "FAKE_GPU_COUNT": 4}, ["NPROC_PER_NODE"]),
        ([], {"checkpoint": 1, "MODEL": "Qwen/Qwen2.5-7B-Instruct"}, ["--model"]),
        ([], {"checkpoint": 1, "OUTPUT_DIR": None}, ["needs OUTPUT_DIR"]),
    ],
)  # fmt: skip
def test_resume_auto_refusals(sandbox, args, env, words):
    # The run to continue: its record as the launcher writes it (tests/launch/test_launchers.py resumes a run for real).
    died = helpers.plan("countdown_3gpu", repo=REPO, OUTPUT_DIR=str(sandbox.out))
    write_record(sandbox.out, "commands", "countdown_3gpu.sh", [died.rollout, died.trainer], helpers.console())
    if env.pop("checkpoint", None):
        make_checkpoint(sandbox.out / "v0-20260101-000000", 100)
    result = sandbox.launch("countdown_3gpu.sh", *args, RESUME="auto", **env)
    assert_refused(result, "countdown_3gpu.sh", "RESUME=auto", *words)
    assert not sandbox.started_pids() and not (sandbox.out / "commands.json.1").exists()  # nothing started, kept


def test_resume_auto_with_a_multi_line_flag(sandbox):
    # The bash launcher re-read commands.sh with awk/xargs: "unmatched single quote" for a multi-line --system.
    system = "Think first.\nThen answer: it's <answer>x</answer>."
    assert sandbox.launch("countdown_1gpu.sh", "--system", system, FAKE_TRAIN_EXIT=1).returncode == 1
    checkpoint = make_checkpoint(sandbox.out / "v0-20260101-000000", 100)
    result = sandbox.launch("countdown_1gpu.sh", "--system", system, RESUME="auto")
    assert result.returncode == 0, result.stderr
    argv = sandbox.record("rlhf")["argv"]
    assert flag(argv, "--system") == system and flag(argv, "--resume_from_checkpoint") == str(checkpoint)
    # commands.sh stays a readable script that gives the same argv back.
    (trainer,) = [words for words in shell_commands((sandbox.out / "commands.sh").read_text()) if "swift" in words]
    assert trainer[trainer.index("swift") + 2 :] == argv


# -------------------------------------------------------------------- smoke


@pytest.mark.parametrize(
    "script", ["countdown_3gpu.sh", "countdown_1gpu.sh", "gsm8k_1gpu.sh", "countdown_cpu_smoke.sh"]
)
def test_smoke_dry_run_shows_the_small_model_and_a_short_run(sandbox, script):
    result = sandbox.launch(script, DRY_RUN=1, SMOKE=1)
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


def test_the_cpu_smoke_recipe_plans_the_tiny_model_its_puzzles_and_a_cpu_trainer(sandbox):
    result = sandbox.launch("countdown_cpu_smoke.sh", DRY_RUN=1, PATH="/usr/bin:/bin")  # no swift: a laptop
    assert result.returncode == 0, result.stderr
    smoke = sandbox.out / "smoke"
    builds = result.stdout.split("\n\n")[0].splitlines()
    assert builds[0] == "# SMOKE: tiny model and data (python: the interpreter of swift)"
    generate = ["python", "-m", *COUNTDOWN.smoke_data, "--out", str(smoke / "data" / "train.jsonl")]
    assert [shlex.split(line) for line in builds[1:]] == [["python", "-m", *TINY_MODEL.split(), str(smoke / "model")],
                                                          generate]  # fmt: skip
    commands = parse_dry_run(result.stdout)
    assert list(commands) == ["rlhf"]
    env, argv = commands["rlhf"]
    assert env == {"VLLM_PORT": None, "MASTER_PORT": sandbox.env["MASTER_PORT"]}
    assert (flag(argv, "--torch_dtype"), flag(argv, "--vllm_mode"), flag(argv, "--vllm_enforce_eager")) == (
        "float32",
        "colocate",
        "true",
    )
    assert flag(argv, "--system") == SYSTEM_PROMPT  # the task's own prompt, as in every Countdown recipe
    assert flag(argv, "--val_dataset") == str(smoke / "data" / "train.test.jsonl")
    assert "DRY_RUN: nothing started" in result.stderr and "warning" not in result.stderr
    sandbox.assert_nothing_started()


# ------------------------------------------------------------------- GSM8K


@pytest.mark.parametrize("script, world", [("gsm8k_3gpu.sh", 2), ("gsm8k_1gpu.sh", 1)])
def test_gsm8k_presets(sandbox, script, world):
    result = sandbox.launch(script, DRY_RUN=1)
    assert result.returncode == 0, result.stderr
    assert "warning" not in result.stderr
    _, argv = parse_dry_run(result.stdout)["rlhf"]
    assert flag(argv, "--model") == GSM8K.model
    assert flag(argv, "--dataset") == GSM8K.dataset
    assert argv[argv.index("--reward_funcs") + 1 :][:2] == ["gsm8k_accuracy", "reasoning_answer_format"]
    assert "--system" not in argv  # the GSM8K rows carry their own format instruction
    layout_args = GSM8K.server_args if world == 2 else GSM8K.colocate_args
    expected = preset_values(*GSM8K.args, *layout_args)  # steps, generations, epsilon, batch, lr, beta
    assert {name: flag(argv, name) for name in expected} == expected
    # 7 prompts x 12 generations per step, as the public run
    batch = int(flag(argv, "--per_device_train_batch_size")) * int(flag(argv, "--gradient_accumulation_steps"))
    assert batch * world == GSM8K.reference_completions
    assert flag(argv, "--tuner_type") == ("full" if world == 2 else "lora")
    assert "--help" not in argv and "GSM8K" in sandbox.launch(script, "--help").stdout


def test_gsm8k_run_prints_its_evaluation_without_a_system_prompt(sandbox):
    result = sandbox.launch("gsm8k_1gpu.sh")
    assert result.returncode == 0, result.stderr
    evaluate = shlex.split(result.stdout.strip().splitlines()[-1])
    assert flag(evaluate, "--task") == "gsm8k" and "--system" not in evaluate
    assert flag(evaluate, "--data") == HELD_OUT and "GSM8K's test split" in result.stderr


# --------------------------------------------------- issue 15: each reproduction, as a new user hits it


@pytest.mark.parametrize(
    "env",
    [{"DRY_RUN": "y"}, {"DRY_RUN": "x"}, {"DRY_RUN": "2"}, {"SMOKE": "2"}, {"SMOKE": "on"}, {"RESUME": "yes"}],
)
def test_yes_no_settings_take_only_yes_no_words(sandbox, env):
    # DRY_RUN=y/x/2 started a real run; SMOKE=2 silently ran the full recipe.
    ((name, value),) = env.items()
    result = sandbox.launch("countdown_3gpu.sh", **env)
    assert_refused(result, "countdown_3gpu.sh", f"{name}='{value}'")
    sandbox.assert_nothing_started()


def test_yes_no_settings_accept_their_words(sandbox):
    for value in ("1", "true", "yes", "TRUE"):
        result = sandbox.launch("countdown_1gpu.sh", DRY_RUN=value)
        assert result.returncode == 0 and "DRY_RUN: nothing started" in result.stderr, result.stderr
    sandbox.assert_nothing_started()
    for value in ("0", "false", "no", ""):
        assert sandbox.launch("countdown_1gpu.sh", DRY_RUN=value, FAKE_TRAIN_EXIT=4).returncode == 4


PREFLIGHT = [
    ([], {"DATASET": "/nonexistent.jsonl"}, ["DATASET=/nonexistent.jsonl", "no such file"]),
    ([], {"VAL_DATASET": "./missing.test.jsonl"}, ["VAL_DATASET=./missing.test.jsonl", "no such file"]),
    ([], {"MODEL": "/nonexistent"}, ["MODEL=/nonexistent", "no such folder"]),
    (["--num_generations", "7"], {},
     ["--num_generations 7", f"{REFERENCE} completions", "args_mixin.py",
      f"another divisor of {REFERENCE} ({', '.join(str(n) for n in range(2, REFERENCE + 1) if REFERENCE % n == 0)})"]),
    ([], {"VLLM_MAX_MODEL_LEN": "100"}, ["VLLM_MAX_MODEL_LEN=100", str(
        int(Flags(COUNTDOWN.args).value("max_length")) + int(Flags(COUNTDOWN.args).value("max_completion_length")))]),
    ([], {"REPORT_TO": "foo"}, ["REPORT_TO=foo", "tensorboard", "wandb"]),
    (["--report_to", "foo"], {}, ["--report_to foo"]),
    (["--per_device_eval_batch_size", "3"], {}, ["eval batch", "VAL_DATASET=none"]),
    ([], {"VLLM_GPU_MEMORY_UTILIZATION": "90"}, ["VLLM_GPU_MEMORY_UTILIZATION", "(0, 1]"]),
    (["oops"], {}, ["'oops' is not a --flag"]),
]  # fmt: skip


@pytest.mark.parametrize("args, env, words", PREFLIGHT)
def test_settings_that_would_fail_later_are_refused_first(sandbox, args, env, words):
    # Each passed the preflight; --num_generations 7 failed only after the rollout server had loaded the model.
    result = sandbox.launch("countdown_3gpu.sh", *args, **env)
    assert_refused(result, "countdown_3gpu.sh", *words)
    sandbox.assert_nothing_started()
    assert_refused(sandbox.launch("countdown_3gpu.sh", *args, DRY_RUN=1, **env), "countdown_3gpu.sh", *words)


def test_local_dataset_rows_are_checked_with_the_task_rules(sandbox):
    data = sandbox.tmp / "train.jsonl"
    data.write_text('{"nums": [1, 2], "target": 3}\n{"nums": [1, 2], "target": "3"}\n')
    result = sandbox.launch("countdown_1gpu.sh", DATASET=data)
    assert_refused(result, "countdown_1gpu.sh", f"DATASET={data}", f"{data}:2", "target must be an integer")
    gsm8k = sandbox.tmp / "gsm8k.jsonl"
    gsm8k.write_text('{"question": "1+1?", "answer": "2\\n#### 2"}\n')
    assert_refused(sandbox.launch("countdown_1gpu.sh", DATASET=gsm8k, DRY_RUN=1), "countdown_1gpu.sh", "nums")
    assert sandbox.launch("gsm8k_1gpu.sh", DATASET=gsm8k, DRY_RUN=1).returncode == 0
    assert not sandbox.started_pids()


@pytest.mark.parametrize("script", ["countdown_3gpu.sh", "countdown_1gpu.sh", "gsm8k_3gpu.sh"])
def test_server_flag_refusal_names_only_settings_of_this_recipe(sandbox, script):
    # It told users of the one-node recipes to set ROLLOUT_HOST, which they ignore.
    result = sandbox.launch(script, "--vllm_server_port", "1234", DRY_RUN=1)
    assert_refused(result, script, "--vllm_server_port")
    assert "ROLLOUT_HOST" not in result.stderr
    result = sandbox.launch(
        "countdown_multinode.sh", "--vllm_server_host", "x", DRY_RUN=1, ROLE="train", ROLLOUT_HOST="g"
    )
    assert_refused(result, "countdown_multinode.sh", "ROLLOUT_HOST")


# --------------------------------------------------------------------- help


def test_multinode_help_names_the_network_needs(sandbox):
    result = sandbox.launch("countdown_multinode.sh", "--help")
    assert result.returncode == 0
    for words in ("ROLLOUT_PORT", "ROLLOUT_GROUP_PORT", "MASTER_PORT", "ephemeral", "NCCL_SOCKET_IFNAME"):
        assert words in result.stdout


def test_multinode_help_gives_the_steps_the_launcher_prints(sandbox):
    # The help said 391 steps where the launcher printed 387 (ms-swift runs 386: the last partial group is dropped).
    help_steps = re.findall(r"1024, (\d+) steps", sandbox.launch("countdown_multinode.sh", "--help").stdout)
    result = sandbox.launch(
        "countdown_multinode.sh", DRY_RUN=1, ROLE="train", ROLLOUT_HOST="gen0", NNODES=2, MASTER_ADDR="node0"
    )
    assert help_steps and help_steps == re.findall(r"1024 completions .*?: (\d+) steps", result.stderr)


def test_the_launcher_names_its_recipes(sandbox):
    result = sandbox.launch("countdown_2gpu", DRY_RUN=1)  # no script of that name: named as the recipe
    assert_refused(result, "countdown_2gpu", "countdown_2gpu: no such recipe", "countdown_3gpu", "gsm8k_1gpu")
    assert_refused(sandbox.launch("countdown_2gpu", "--help"), "countdown_2gpu", "countdown_2gpu: no such recipe")
    # the demo is an experiment of its own (python -m swift_plugins.demo), not a recipe of the launcher
    assert_refused(sandbox.launch("countdown_demo", DRY_RUN=1), "countdown_demo.sh", "countdown_demo: no such recipe")
    from swift_plugins.launch.__main__ import main

    assert main([]) == 2  # no recipe: the usage line, exit status 2


def test_help_is_the_scripts_usage_text(sandbox):
    for script in ("countdown_cpu_smoke.sh", "countdown_demo.sh"):
        result = sandbox.launch(script, "-h")
        assert result.returncode == 0 and result.stdout.startswith(f"{script}: ")
        assert "DRY_RUN" in result.stdout and "set -euo" not in result.stdout
    assert not sandbox.started_pids()
