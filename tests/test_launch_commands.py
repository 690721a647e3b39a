"""Unit tests of swift_plugins.launch.flags and commands: argv lists, each flag once, pasteable printing."""

import shlex
from pathlib import Path

import pytest

from swift_plugins.launch.commands import (
    Command,
    colocate_commands,
    rollout_command,
    server_commands,
    train_node_command,
    trainer_flags,
)
from swift_plugins.launch.flags import Flags
from swift_plugins.launch.settings import SettingError, Settings

REPO = Path("/repo")


def settings(recipe="countdown_3gpu", **env):
    return Settings.from_env(recipe, {"OUTPUT_DIR": "/runs/a", **env}, REPO)


def names(argv):
    return [word.split("=")[0] for word in argv if word.startswith("--")]


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
    ],
)
def test_every_flag_once_and_the_last_word_wins(recipe, env):
    s = settings(recipe, **env)
    flags = trainer_flags(s, ["--max_length", "300", "--seed=7", "--max_completion_length", "100"])
    argv = flags.argv()
    assert len(names(argv)) == len(set(names(argv)))
    assert (flags.value("max_length"), flags.value("seed"), flags.value("max_completion_length")) == ("300", "7", "100")
    if s.smoke:
        assert (flags.value("max_steps"), flags.value("report_to"), flags.value("model")) == ("4", "none", s.model)


def test_server_flag_refusals_name_the_settings_of_the_layout():
    for recipe, env, fix in [
        ("countdown_3gpu", {}, "set ROLLOUT_PORT / ROLLOUT_GROUP_PORT instead"),
        ("countdown_1gpu", {}, "colocate"),
        ("countdown_multinode", {"ROLE": "train", "ROLLOUT_HOST": "g"}, "set ROLLOUT_HOST / ROLLOUT_PORT"),
    ]:
        with pytest.raises(SettingError, match=fix) as refused:
            trainer_flags(settings(recipe, **env), ["--vllm_server_port=1"])
        assert recipe == "countdown_multinode" or "ROLLOUT_HOST" not in str(refused.value)


def test_the_one_node_server_and_the_rollout_host_run_the_same_command():
    one_node, _ = server_commands(settings(), [])
    host = rollout_command(settings("countdown_multinode", ROLE="rollout", ROLLOUT_BIND_HOST="127.0.0.1"))
    assert Flags(one_node.argv[2:]).names() == Flags(host.argv[2:]).names()
    assert one_node.argv == host.argv  # the same settings give the same server
    rollout = rollout_command(settings(ROLLOUT_ARGS="--vllm_max_model_len 8192 --enforce_eager true", SMOKE="1"))
    assert names(rollout.argv).count("--vllm_max_model_len") == 1 and "--model_type" in rollout.argv
    assert Flags(rollout.argv[2:]).value("vllm_max_model_len") == "8192"


def test_environments_of_each_layout():
    rollout, trainer = server_commands(settings(no_proxy="corp", NO_PROXY="corp,other"), [])
    assert dict(trainer.env)["no_proxy"] == "corp,other,127.0.0.1,localhost" == dict(rollout.env)["NO_PROXY"]
    (colocate,) = colocate_commands(settings("countdown_1gpu", GPU="1"), [])
    assert dict(colocate.env) == {"CUDA_VISIBLE_DEVICES": "1", "NPROC_PER_NODE": "1", "MASTER_PORT": "29500"}
    node = train_node_command(settings("countdown_multinode", ROLE="train", ROLLOUT_HOST="gen0", NNODES="2",
                                       NODE_RANK="1", MASTER_ADDR="n0"), [])  # fmt: skip
    env = dict(node.env)
    assert (env["NNODES"], env["NODE_RANK"], env["NPROC_PER_NODE"]) == ("2", "1", "8")
    assert {"gen0", "n0"} <= set(env["no_proxy"].split(",")) and node.log.endswith("train-node1.log")
    assert command_environment(node)["VLLM_PORT"] is None


def command_environment(command):
    env = command.environment({"VLLM_PORT": "8000", "HOME": "/h"})
    return {"VLLM_PORT": env.get("VLLM_PORT"), "HOME": env["HOME"]}


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
