"""Unit tests of swift_plugins.launch.settings and presets: the environment into validated settings."""

from pathlib import Path

import pytest

from swift_plugins.launch.presets import COUNTDOWN_SYSTEM, PRESETS
from swift_plugins.launch.settings import SettingError, Settings, parse_bool, parse_gpus, split_words

REPO = Path("/repo")


def settings(recipe="countdown_3gpu", **env):
    return Settings.from_env(recipe, {"OUTPUT_DIR": "/runs/a", **env}, REPO)


@pytest.mark.parametrize("value, expected", [("1", True), ("yes", True), ("True", True), ("0", False), ("no", False),
                                             ("false", False), ("", False)])  # fmt: skip
def test_booleans_take_exactly_the_yes_no_words(value, expected):
    assert parse_bool("SMOKE", value) is expected


@pytest.mark.parametrize("value", ["y", "x", "2", "on", "off", "enable"])
def test_other_words_are_refused_naming_the_setting(value):
    with pytest.raises(SettingError, match=f"DRY_RUN='{value}' is not a yes/no value"):
        settings(DRY_RUN=value)


def test_resume_is_auto_or_off():
    assert settings(RESUME="auto").resume and not settings(RESUME="no").resume
    with pytest.raises(SettingError, match="RESUME='yes' is not understood"):
        settings(RESUME="yes")
    with pytest.raises(SettingError, match="needs OUTPUT_DIR"):
        Settings.from_env("countdown_1gpu", {"RESUME": "auto"}, REPO)


def test_gpu_lists_and_the_inherited_assignment():
    assert parse_gpus("TRAIN_GPUS", "0,GPU-ab12", None) == ("0", "GPU-ab12")
    assert parse_gpus("TRAIN_GPUS", "2,0", "5,6,7") == ("7", "5")
    assert parse_gpus("GPU", "MIG-x", "MIG-x,MIG-y") == ("MIG-x",)
    for value, words in [("0,,1", "not a comma-separated"), ("0, 1", "not a comma-separated"), ("1,1", "twice")]:
        with pytest.raises(SettingError, match=words):
            parse_gpus("TRAIN_GPUS", value, None)
    with pytest.raises(SettingError, match="position 3 is beyond"):
        parse_gpus("TRAIN_GPUS", "3", "5,6,7")
    with pytest.raises(SettingError, match="empty"):
        parse_gpus("TRAIN_GPUS", "0", "")


def test_server_layout_defaults_and_refusals():
    s = settings()
    assert (s.rollout_gpus, s.train_gpus, s.world_size, s.rollout_port) == (("2",), ("0", "1"), 2, 8000)
    assert s.vllm_gpu_memory_utilization == "0.9" and settings("countdown_1gpu").vllm_gpu_memory_utilization == "0.45"
    for env, words in [
        ({"ROLLOUT_GPU": "1"}, "share GPU 1"),
        ({"ROLLOUT_GPU": "2,3"}, "single GPU"),
        ({"ROLLOUT_PORT": "70000"}, "ROLLOUT_PORT must be a TCP port"),
        ({"MASTER_PORT": "8000"}, "MASTER_PORT=8000 clashes with ROLLOUT_PORT"),
        ({"ROLLOUT_TIMEOUT": "0"}, "ROLLOUT_TIMEOUT must be a positive integer"),
        ({"STOP_GRACE_SECONDS": "-1"}, "STOP_GRACE_SECONDS must be a non-negative integer"),
        ({"VLLM_GPU_MEMORY_UTILIZATION": "1.5"}, r"\(0, 1\]"),
        ({"ROLLOUT_ARGS": "--port 1"}, "set ROLLOUT_PORT instead"),
    ]:
        with pytest.raises(SettingError, match=words):
            settings(**env)


@pytest.mark.parametrize("recipe", ["countdown_3gpu", "countdown_multinode"])
def test_renamed_ports_are_refused_with_the_new_names(recipe):
    with pytest.raises(SettingError, match="now ROLLOUT_PORT"):
        settings(recipe, ROLE="rollout", VLLM_PORT="8011")
    with pytest.raises(SettingError, match="ROLLOUT_GROUP_PORT=1"):
        settings(recipe, ROLE="rollout", VLLM_GROUP_PORT="1")
    # Beside ROLLOUT_PORT (or in the 1-GPU recipe) VLLM_PORT is someone else's: kept, to be unset for the children.
    assert settings(recipe, ROLE="rollout", VLLM_PORT="8011", ROLLOUT_PORT="8000").vllm_port == "8011"
    assert settings("countdown_1gpu", VLLM_PORT="8011").vllm_port == "8011"


def test_multinode_roles():
    with pytest.raises(SettingError, match="set ROLE=rollout"):
        settings("countdown_multinode")
    with pytest.raises(SettingError, match="ROLLOUT_HOST"):
        settings("countdown_multinode", ROLE="train")
    with pytest.raises(SettingError, match="MASTER_ADDR"):
        settings("countdown_multinode", ROLE="train", ROLLOUT_HOST="g", NNODES="2")
    with pytest.raises(SettingError, match="NODE_RANK=2 must be below NNODES=2"):
        settings("countdown_multinode", ROLE="train", ROLLOUT_HOST="g", NNODES="2", NODE_RANK="2", MASTER_ADDR="n")
    with pytest.raises(SettingError, match="TASK='chess'"):
        settings("countdown_multinode", ROLE="train", ROLLOUT_HOST="g", TASK="chess")
    s = settings("countdown_multinode", ROLE="train", ROLLOUT_HOST="g", NNODES="2", MASTER_ADDR="n", TASK="gsm8k")
    assert (s.world_size, s.task, s.model) == (16, "gsm8k", "Qwen/Qwen2.5-1.5B-Instruct")
    rollout = settings("countdown_multinode", ROLE="rollout", ROLLOUT_GPUS="0,1")
    assert (rollout.rollout_gpus, rollout.rollout_host) == (("0", "1"), "0.0.0.0")


def test_output_dir_default_and_smoke():
    s = Settings.from_env("gsm8k_1gpu", {"SMOKE": "1"}, REPO)
    assert s.output_dir.parent == REPO / "output" and s.output_dir.name.startswith("gsm8k_1gpu-smoke-")
    assert s.model == str(s.output_dir / "smoke" / "model") and s.dataset == "modelscope/gsm8k#64"
    assert (s.vllm_max_model_len, s.report_to) == (1024, "none")
    c = settings("countdown_1gpu", SMOKE="yes")
    assert c.dataset == "/runs/a/smoke/data/train.jsonl" and c.val_dataset == "/runs/a/smoke/data/train.test.jsonl"


def test_split_words_keeps_quoted_values_and_refuses_an_open_quote():
    assert split_words("ROLLOUT_ARGS", "--a 'x y' --b") == ("--a", "x y", "--b")
    with pytest.raises(SettingError, match="unmatched quote"):
        split_words("ROLLOUT_ARGS", "--a 'b")


def test_presets_keep_the_reference_runs():
    countdown, gsm8k = PRESETS["countdown"], PRESETS["gsm8k"]
    assert countdown.args[countdown.args.index("--system") + 1] == COUNTDOWN_SYSTEM
    for preset, world in ((countdown, 2), (gsm8k, 2)):
        words = dict(zip(preset.server_args[::2], preset.server_args[1::2], strict=True))
        completions = world * int(words["--per_device_train_batch_size"]) * int(words["--gradient_accumulation_steps"])
        assert completions == preset.reference_completions
    assert (gsm8k.vllm_max_model_len, countdown.vllm_max_model_len) == (2048, 4096)
