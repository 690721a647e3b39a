"""Unit tests of core.flags, core.commands and launch.commands: argv lists, each flag once, pasteable printing."""

import itertools
import re
import shlex

import pytest

from swift_plugins.core.commands import Command
from swift_plugins.core.flags import Flags
from swift_plugins.launch.checks import advise
from swift_plugins.launch.commands import rollout_command, trainer_command, trainer_flags
from swift_plugins.launch.recipes import build_plan
from swift_plugins.launch.settings import SettingError

from ..helpers import NO_REPO, console, flag_names, plan, settings


def test_flags_replace_in_place_and_keep_their_form():
    flags = Flags(["--a", "1", "--list", "x", "y", "--b=2"])
    flags.update(["--list", "z", "--a=3", "--c"])
    assert flags.argv() == ["--a=3", "--list", "z", "--b=2", "--c"]
    assert (flags.value("a"), flags.values("c"), flags.value("missing")) == ("3", [], None)
    assert Flags(["--lr", "-1"]).value("lr") == "-1"
    with pytest.raises(SettingError, match="the extra arguments: 'oops' is not a --flag"):
        Flags(["oops", "--a"], "the extra arguments")


@pytest.mark.parametrize(
    "recipe, env",
    [
        ("countdown_3gpu", {}),
        ("countdown_3gpu", {"SMOKE": "1"}),
        ("countdown_1gpu", {"SMOKE": "1"}),
        ("gsm8k_1gpu", {"SMOKE": "1", "VAL_DATASET": "none"}),
        ("countdown_multinode", {"ROLE": "train", "ROLLOUT_HOST": "g", "SMOKE": "1"}),
        ("countdown_cpu_smoke", {}),
    ],
)
def test_every_flag_once_and_the_last_word_wins(recipe, env):
    s = settings(recipe, **env)
    flags = trainer_flags(s, ["--max_length", "300", "--seed=7", "--max_completion_length", "100"])
    argv = flags.argv()
    assert len(flag_names(argv)) == len(set(flag_names(argv)))
    assert (flags.value("max_length"), flags.value("seed"), flags.value("max_completion_length")) == ("300", "7", "100")
    if s.smoke:
        assert (flags.value("max_steps"), flags.value("report_to"), flags.value("model")) == ("4", "none", s.model)


def test_server_flag_refusals_name_the_settings_of_the_layout():
    for recipe, env, fix in [
        ("countdown_3gpu", {}, "set ROLLOUT_PORT / ROLLOUT_GROUP_PORT instead"),
        ("countdown_1gpu", {}, "colocate"),
        ("countdown_multinode", {"ROLE": "train", "ROLLOUT_HOST": "g"}, "set ROLLOUT_HOST / ROLLOUT_PORT"),
        ("countdown_cpu_smoke", {}, r"colocate\) on the CPU"),
    ]:
        with pytest.raises(SettingError, match=fix) as refused:
            trainer_flags(settings(recipe, **env), ["--vllm_server_port=1"])
        assert recipe == "countdown_multinode" or "ROLLOUT_HOST" not in str(refused.value)


def test_the_one_node_server_and_the_rollout_host_run_the_same_command():
    one_node = rollout_command(settings())
    host = rollout_command(settings("countdown_multinode", ROLE="rollout", ROLLOUT_BIND_HOST="127.0.0.1"))
    assert Flags(one_node.argv[2:]).names() == Flags(host.argv[2:]).names()
    assert one_node.argv == host.argv  # the same settings give the same server
    rollout = rollout_command(settings(ROLLOUT_ARGS="--vllm_max_model_len 8192 --enforce_eager true", SMOKE="1"))
    assert flag_names(rollout.argv).count("--vllm_max_model_len") == 1 and "--model_type" in rollout.argv
    assert Flags(rollout.argv[2:]).value("vllm_max_model_len") == "8192"
    # the plugin loads in the server too (vLLM's CPU build needs it: swift_plugins.integration.vllm_cpu)
    assert Flags(one_node.argv[2:]).value("external_plugins") == str(NO_REPO / "swift_plugins" / "plugin.py")
    assert (
        one_node.title,
        rollout_command(settings("countdown_multinode", ROLE="rollout", ROLLOUT_GPUS="0,1")).title,
    ) == (
        "rollout server on GPU 2",
        "rollout server on GPUs 0,1",
    )


def test_environments_of_each_layout():
    p = plan(no_proxy="corp", NO_PROXY="corp,other")
    assert dict(p.trainer.env)["no_proxy"] == "corp,other,127.0.0.1,localhost" == dict(p.rollout.env)["NO_PROXY"]
    colocate = plan("countdown_1gpu", GPU="1").trainer
    assert dict(colocate.env) == {"CUDA_VISIBLE_DEVICES": "1", "NPROC_PER_NODE": "1", "MASTER_PORT": "29500"}
    node = plan("countdown_multinode", ROLE="train", ROLLOUT_HOST="gen0", NNODES="2", NODE_RANK="1",
                MASTER_ADDR="n0").trainer  # fmt: skip
    env = dict(node.env)
    assert (env["NNODES"], env["NODE_RANK"], env["NPROC_PER_NODE"]) == ("2", "1", "8")
    assert {"gen0", "n0"} <= set(env["no_proxy"].split(",")) and node.log.endswith("train-node1.log")
    assert command_environment(node)["VLLM_PORT"] is None
    assert (p.trainer.title, colocate.title, node.title) == (
        "trainer on GPUs 0,1, NPROC_PER_NODE=2",
        "trainer with colocated vLLM on GPU 1",
        "trainer node 1/2 on GPUs 0,1,2,3,4,5,6,7, NPROC_PER_NODE=8",
    )


def command_environment(command):
    env = command.environment({"VLLM_PORT": "8000", "HOME": "/h"})
    return {"VLLM_PORT": env.get("VLLM_PORT"), "HOME": env["HOME"]}


def test_the_cpu_layout_trains_in_float32_with_vllm_colocated_and_no_gpu():
    p = plan("countdown_cpu_smoke", MASTER_PORT="29600")
    flags, env = p.flags, dict(p.trainer.env)
    assert env == {"MASTER_PORT": "29600"}  # no CUDA_VISIBLE_DEVICES, no NPROC_PER_NODE: one process on the CPU
    assert (flags.value("torch_dtype"), flags.value("fp16"), flags.value("bf16")) == ("float32", "false", "false")
    assert (flags.value("use_vllm"), flags.value("vllm_mode"), flags.value("vllm_enforce_eager")) == (
        "true",
        "colocate",
        "true",
    )
    assert (
        flags.value("tuner_type") == "full" and flags.value("deepspeed") is None and flags.value("sleep_level") is None
    )
    assert (flags.value("dataloader_num_workers"), flags.value("dataloader_pin_memory")) == ("0", "false")
    assert p.rollout is None and p.trainer.title == "trainer on the CPU with vLLM's CPU build colocated"
    assert p.trainer.log == "/runs/a/train.log" and flags.value("model") == "/runs/a/smoke/model"
    assert len(flag_names(p.trainer.argv)) == len(set(flag_names(p.trainer.argv)))


def test_plan_origin_names_how_the_user_set_a_flag():
    p = plan("countdown_1gpu", ["--report_to", "wandb", "--seed=3"])
    assert p.user == frozenset({"report_to", "seed"})
    assert p.origin("report_to", "wandb", "REPORT_TO") == "--report_to wandb"
    assert p.origin("model", "/m", "MODEL") == "MODEL=/m"
    assert p.origin("learning_rate", "1e-5", "") == "--learning_rate 1e-5"  # no setting: always the flag


def test_the_rollout_host_takes_no_trainer_flags():
    assert plan("countdown_multinode", ROLE="rollout").trainer is None
    with pytest.raises(SettingError, match=r"ROLE=rollout takes no arguments \(extra swift rollout flags go in "):
        plan("countdown_multinode", ["--seed", "1"], ROLE="rollout")


def test_printed_commands_paste_back_to_the_same_argv():
    argv = ("swift", "rlhf", "--system", "line one\nit's line two", "--dataset", "a#5", "--flag")
    text = Command("t", (("A", "x y"),), argv, "/l").shell()
    words = shlex.split(text.replace(" \\\n    ", " "))
    assert words == ["env", "-u", "VLLM_PORT", "A=x y", *argv]
    assert text.count("\\\n") == 3


def test_eval_uses_a_local_dataset_sibling_test_file(tmp_path):
    data = tmp_path / "train.jsonl"
    data.write_text("")
    assert trainer_flags(settings(DATASET=str(data)), []).value("val_dataset") is None
    (tmp_path / "train.test.jsonl").write_text("")
    flags = trainer_flags(settings(DATASET=str(data)), [])
    assert (
        flags.value("val_dataset") == str(tmp_path / "train.test.jsonl") and "split_dataset_ratio" not in flags.names()
    )
    assert trainer_flags(settings(VAL_DATASET="none"), []).value("eval_strategy") == "no"


def test_trainer_command_is_the_flags_given():
    s = settings()
    flags = trainer_flags(s, ["--seed", "1"])
    assert trainer_command(s, flags).argv == ("swift", "rlhf", *flags.argv())


@pytest.mark.parametrize(
    ("recipe", "env", "gpus"),
    [
        ("countdown_3gpu", {}, "2"),  # the rollout GPU, before the server takes it
        ("countdown_1gpu", {"GPU": "1"}, "1"),  # the trainer's, before it starts
        ("countdown_multinode", {"ROLE": "rollout", "ROLLOUT_GPUS": "0,1"}, "0,1"),
        ("gym_1gpu", {"TASK": "gym:basic_arithmetic"}, "0"),
    ],
)
def test_selection_runs_where_vllm_serves_and_the_trainer_trains_on_its_rows(tmp_path, recipe, env, gpus):
    data = tmp_path / "train.jsonl"
    data.write_text('{"nums": [1, 2, 3], "target": 6}\n')
    s = settings(recipe, DATASET=str(data), SELECT_SAMPLES="8", SELECT_BAND="2-6", DYNAMIC_SAMPLE="5", **env)
    built = build_plan(s, [], console())
    argv = built.selection.argv
    assert argv[1:5] == ("-m", "swift_plugins", "select", s.model)
    assert dict(built.selection.env)["CUDA_VISIBLE_DEVICES"] == gpus
    words = dict(itertools.pairwise(argv[5:]))
    assert (words["--candidates"], words["--out"]) == (str(data), str(s.selected))
    assert (words["--samples"], words["--band"]) == ("8", "2-6")
    if built.trainer is not None:  # answered as the trainer samples, and the trainer trains on the selection
        assert (words["--temperature"], words["--top-k"], words["--max-new-tokens"]) == (
            built.flags.value("temperature"), built.flags.value("top_k"), built.flags.value("max_completion_length"))
        assert built.flags.value("dataset") == str(s.selected)
        assert (built.flags.value("dynamic_sample"), built.flags.value("max_resample_times")) == ("true", "5")


@pytest.mark.parametrize(
    ("recipe", "env", "rewards"),
    [
        ("countdown_3gpu", {}, {"external_countdown": "1", "think_answer_format": "0"}),
        ("countdown_cpu_smoke", {}, {"external_countdown": "1", "think_answer_format": "0"}),
        ("gsm8k_1gpu", {}, {"gsm8k_accuracy": "1", "reasoning_answer_format": "0"}),
        ("countdown_multinode", {"ROLE": "train", "ROLLOUT_HOST": "gen0", "TASK": "gsm8k"},
         {"gsm8k_accuracy": "1", "reasoning_answer_format": "0"}),
        ("gym_1gpu", {"TASK": "gym:basic_arithmetic"}, {"external_gym": "1", "think_answer_format": "0"}),
    ],
)  # fmt: skip
def test_dynamic_sampling_judges_the_answer_alone(recipe, env, rewards):
    """ms-swift judges a group's spread on the weighted sum of its rewards: with DYNAMIC_SAMPLE only the task's
    accuracy reward weighs (the format reward is logged, at weight 0), so wrong answers that differ in format are
    no spread; without DYNAMIC_SAMPLE every reward trains, as before."""
    flags = plan(recipe, DYNAMIC_SAMPLE="2", **env).flags
    assert dict(zip(flags.values("reward_funcs"), flags.values("reward_weights"), strict=True)) == rewards
    assert plan(recipe, **env).flags.value("reward_weights") is None


def test_dynamic_sampling_warns_of_weights_that_count_another_reward_and_refuses_without_the_answer():
    said = console()
    weighed = plan("countdown_3gpu", ["--reward_weights", "2", "0.5"], said, DYNAMIC_SAMPLE="2")
    advise(weighed, said)
    assert weighed.flags.values("reward_weights") == ["2", "0.5"]  # the user's
    assert ("t.sh: warning: --reward_weights 2 0.5 gives think_answer_format weight with DYNAMIC_SAMPLE: ms-swift "
            "then counts a group whose answers differ only in think_answer_format as one that teaches") in \
        said.stream.getvalue()  # fmt: skip
    quiet = console()
    advise(plan("countdown_3gpu", ["--reward_weights", "2", "0"], quiet, DYNAMIC_SAMPLE="2"), quiet)
    assert "DYNAMIC_SAMPLE" not in quiet.stream.getvalue()
    with pytest.raises(SettingError, match=re.escape("DYNAMIC_SAMPLE judges groups on the task's accuracy reward "
                                                     "external_countdown, which --reward_funcs think_answer_format "
                                                     "lacks")):  # fmt: skip
        plan("countdown_3gpu", ["--reward_funcs", "think_answer_format"], DYNAMIC_SAMPLE="2")


def test_a_training_node_leaves_the_selection_to_the_rollout_host(tmp_path):
    data = tmp_path / "train.jsonl"
    data.write_text('{"nums": [1, 2, 3], "target": 6}\n')
    node = plan("countdown_multinode", ROLE="train", ROLLOUT_HOST="gen0", DATASET=str(data), SELECT_SAMPLES="4")
    assert node.selection is None and node.flags.value("dataset") == "/runs/a/selected.jsonl"


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"SELECT_SAMPLES": "8"}, "SELECT_SAMPLES needs DATASET to be a local file of candidate rows, got 'zouxuhong/"),
        ({"SELECT_SAMPLES": "1", "DATASET": "LOCAL"}, "SELECT_SAMPLES=1: --samples 1: a solve rate"),
        ({"SELECT_SAMPLES": "8", "SELECT_BAND": "7", "DATASET": "LOCAL"}, "SELECT_BAND=7: band '7': expected LEAST"),
        ({"SELECT_SAMPLES": "8", "SELECT_BAND": "0-8", "DATASET": "LOCAL"}, "keeps every row: nothing is selected"),
        ({"SELECT_BAND": "1-7"}, "SELECT_BAND without SELECT_SAMPLES"),
        ({"DYNAMIC_SAMPLE": "yes"}, "DYNAMIC_SAMPLE must be a non-negative integer, got 'yes'"),
    ],
)
def test_bad_selection_or_dynamic_sampling_settings_are_refused_in_one_line(tmp_path, env, message):
    data = tmp_path / "train.jsonl"
    data.write_text('{"nums": [1, 2, 3], "target": 6}\n')
    env = {key: str(data) if value == "LOCAL" else value for key, value in env.items()}
    with pytest.raises(SettingError, match=re.escape(message)):
        settings("countdown_3gpu", **env)
