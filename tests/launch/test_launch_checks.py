"""Unit tests of swift_plugins.launch.checks: the preflight's checks (tests/preflight/) given a recipe's plan."""

import pytest

from swift_plugins.core.commands import Command
from swift_plugins.core.flags import Flags
from swift_plugins.launch.checks import check_host, check_plan
from swift_plugins.launch.commands import Plan
from swift_plugins.launch.settings import SettingError
from swift_plugins.tasks import task_named

from .. import helpers
from ..doctor.test_doctor import fake_dist
from ..helpers import REPO, STAND_INS, assert_refused, busy_port

PRESET = task_named("countdown").preset
LENGTHS = Flags(PRESET.args)
PROMPT, COMPLETION = int(LENGTHS.value("max_length")), int(LENGTHS.value("max_completion_length"))
GLOBAL_BATCH = 2 * int(Flags(PRESET.server_args).value("per_device_train_batch_size"))  # 2 training GPUs


def plan(tmp_path, extra=(), **env):
    said = helpers.console()
    check_plan(helpers.plan("countdown_3gpu", extra, said, REPO, OUTPUT_DIR=str(tmp_path / "out"), **env), said)
    return said.stream.getvalue()


def test_the_recipe_defaults_pass(tmp_path):
    assert plan(tmp_path) == ""


@pytest.mark.parametrize(
    "extra, env, words",
    [
        (["--num_generations", "7"], {},
         f"--num_generations 7 does not divide the {PRESET.reference_completions} completions"),
        (["--per_device_eval_batch_size", "3"], {}, "global eval batch 2 x --per_device_eval_batch_size 3"),
        (["--generation_batch_size", "100"], {}, f"multiple of the global batch {GLOBAL_BATCH}"),
        ([], {"VLLM_MAX_MODEL_LEN": "100"}, rf"VLLM_MAX_MODEL_LEN=100 .* \({PROMPT + COMPLETION} tokens\)"),
        (["--max_completion_length", "4000"], {}, f"set VLLM_MAX_MODEL_LEN={PROMPT + 4000} or more"),
        (["--generation_batch_size", str(GLOBAL_BATCH), "--steps_per_generation", "2"], {},
         f"must equal per_device_train_batch_size x processes x steps_per_generation = {2 * GLOBAL_BATCH}"),
        ([], {"REPORT_TO": "foo"}, "REPORT_TO=foo is not a logger"),
        (["--report_to", "tensorboard", "foo"], {}, "--report_to foo"),
        ([], {"MODEL": "/nonexistent"}, "MODEL=/nonexistent: no such folder"),
        ([], {"DATASET": "/nonexistent.jsonl#100"}, "DATASET=/nonexistent.jsonl#100: no such file"),
        (["--val_dataset", "./nope.jsonl"], {}, "--val_dataset ./nope.jsonl: no such file"),
        (["--reward_weights", "1"], {}, r"--reward_weights 1 gives 1 weight\(s\) to the 2 rewards of --reward_funcs"),
    ],
)  # fmt: skip
def test_what_would_fail_later_is_refused_now(tmp_path, extra, env, words):
    with pytest.raises(SettingError, match=words):
        plan(tmp_path, extra, **env)


def test_a_missing_plugin_is_refused(tmp_path):
    with pytest.raises(SettingError, match=f"plugin not found: {tmp_path}/swift_plugins/plugin.py"):
        check_plan(helpers.plan(repo=tmp_path), helpers.console())


def test_no_model_length_is_nothing_to_compare_and_two_known_loggers_pass():
    trainer = Command("trainer", (), ("swift", "rlhf"), "/l")
    flags = Flags(["--max_length", "10", "--num_generations", "1", "--report_to", "wandb", "swanlab"])
    check_plan(Plan(helpers.settings(repo=REPO), None, trainer, flags, frozenset()), helpers.console())


def test_local_rows_are_checked_with_the_task_rules(tmp_path):
    good, bad = tmp_path / "good.jsonl", tmp_path / "bad.jsonl"
    good.write_text('{"nums": [1, 2, 3], "target": 6, "solution": "1+2+3"}\n')
    bad.write_text('{"nums": [1, 2], "target": 3}\n\n{"nums": [1, true], "target": 3}\n')
    assert plan(tmp_path, DATASET=str(good)) == ""
    with pytest.raises(SettingError, match=rf"DATASET={bad}: {bad}:3: nums must be a non-empty list of integers"):
        plan(tmp_path, DATASET=str(bad))
    gsm8k = tmp_path / "gsm8k.json"
    gsm8k.write_text('[{"question": "q", "answer": "no marker"}]')
    with pytest.raises(SettingError, match="needs columns 'nums' and 'target'"):
        plan(tmp_path, DATASET=str(gsm8k))
    gsm8k_plan = helpers.plan("gsm8k_1gpu", repo=REPO, OUTPUT_DIR=str(tmp_path), DATASET=str(gsm8k))
    with pytest.raises(SettingError, match=r"gsm8k.json: row 0: .*#### N"):
        check_plan(gsm8k_plan, helpers.console())


def test_the_cpu_layout_needs_no_gpu_and_no_deepspeed(sandbox):
    (sandbox.bin / "nvidia-smi").unlink()  # a laptop
    cpu = helpers.plan("countdown_cpu_smoke", repo=REPO, MASTER_PORT=sandbox.env["MASTER_PORT"])
    said = helpers.console()
    with sandbox.environment(FAKE_DEEPSPEED="missing"):
        assert check_host(cpu, said) == str(sandbox.bin / "python3")
        with busy_port() as port:
            busy_master = helpers.plan("countdown_cpu_smoke", repo=REPO, MASTER_PORT=str(port))
            with pytest.raises(SettingError, match=f"MASTER_PORT={port} is already in use"):
                check_host(busy_master, helpers.console())
    with sandbox.environment(FAKE_VLLM="missing"), pytest.raises(SettingError, match="cannot import vllm"):
        check_host(cpu, helpers.console())
    assert said.stream.getvalue().splitlines()[-1] == f"t.sh: vllm 0.11.0 ({sandbox.bin / 'python3'})"


def test_a_recipe_refuses_a_broken_stack_before_starting_anything(sandbox):
    # The stand-ins' metadata (tests/stand_ins/pylib) is the vLLM 0.11 stack; transformers 5.19.0 goes in front.
    fake = sandbox.tmp / "fake"
    fake_dist(fake, "transformers", "5.19.0")
    result = sandbox.run("countdown_3gpu.sh", PYTHONPATH=f"{fake}:{STAND_INS / 'pylib'}")
    assert_refused(result, "countdown_3gpu.sh", "vLLM 0.11.0 cannot load tokenizers under transformers 5.19.0",
                   "pip install 'transformers==4.57.6'")  # fmt: skip
    sandbox.assert_nothing_started()


def test_only_what_the_recipe_uses_is_refused(sandbox):
    fake = sandbox.tmp / "fake"
    fake_dist(fake, "torch", "2.8.0+cpu")  # a CPU torch on a box whose nvidia-smi lists 3 GPUs
    pythonpath = f"{fake}:{STAND_INS / 'pylib'}"
    assert_refused(sandbox.run("countdown_1gpu.sh", PYTHONPATH=pythonpath), "countdown_1gpu.sh",
                   "torch 2.8.0+cpu is a CPU build but this machine has 3 NVIDIA GPU(s)")  # fmt: skip
    sandbox.assert_nothing_started()
    cpu = helpers.plan("countdown_cpu_smoke", repo=REPO, MASTER_PORT=sandbox.env["MASTER_PORT"])
    with sandbox.environment(PYTHONPATH=pythonpath):  # the CPU recipe runs on a CPU torch, GPUs or not
        assert check_host(cpu, helpers.console()) == str(sandbox.bin / "python3")
