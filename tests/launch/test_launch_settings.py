"""Unit tests of swift_plugins.launch.settings and layouts, and the task presets they read: the environment into
validated settings, the recipes as a table."""

import re

import pytest

from swift_plugins.core.flags import Flags
from swift_plugins.core.settings import parse_bool, parse_gpus, split_words
from swift_plugins.core.think_answer import SYSTEM_PROMPT
from swift_plugins.launch.catalog import GYM_SCORE_LIMITS, recipe_names
from swift_plugins.launch.layouts import LAYOUTS, RECIPES, Recipe, recipe_named
from swift_plugins.launch.recipes import smoke_builds
from swift_plugins.launch.script import recipe_help
from swift_plugins.launch.settings import SettingError, Settings
from swift_plugins.tasks import NAMES, all_tasks, task_named
from swift_plugins.watch.rules import Thresholds

from ..helpers import NO_REPO as REPO
from ..helpers import SETTING_NAMES, SHELL, settings

GSM8K = task_named("gsm8k").preset


@pytest.mark.parametrize("value, expected", [("1", True), ("yes", True), ("True", True), ("0", False), ("no", False),
                                             ("false", False), ("", False)])  # fmt: skip
def test_booleans_take_exactly_the_yes_no_words(value, expected):
    assert parse_bool("SMOKE", value) is expected
    assert settings("countdown_1gpu", DRY_RUN=value).dry_run is expected


@pytest.mark.parametrize("value", ["y", "x", "2", "on", "off", "enable"])
def test_other_words_are_refused_naming_the_setting(value):
    with pytest.raises(SettingError, match=f"DRY_RUN='{value}' is not a yes/no value"):
        settings(DRY_RUN=value)


def test_watch_set_sets_the_watchs_thresholds_over_the_runs_own():
    assert settings(WATCH_SET="stall_seconds=3600  kl_patience=9").thresholds == Thresholds().parse(
        ["stall_seconds=3600", "kl_patience=9"]
    )
    smoke = settings("countdown_cpu_smoke", SMOKE="1", WATCH_SET="kl_patience=9").thresholds
    assert smoke.kl_patience == 9 and smoke.warn_only == Thresholds.plumbing().warn_only
    with pytest.raises(SettingError) as refused:
        settings(WATCH_SET="stall_seconds=3600 kl_patience=none")
    assert str(refused.value) == "WATCH_SET: watch setting kl_patience=none: must be an integer >= 1, got 'none'"


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
    assert (s.rollout_gpus, s.train_gpus, s.world_size, s.port("ROLLOUT_PORT")) == (("2",), ("0", "1"), 2, 8000)
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


@pytest.mark.parametrize(
    "recipe, env, ports",
    [
        ("countdown_3gpu", {}, {"ROLLOUT_PORT": 8000, "ROLLOUT_GROUP_PORT": 51216, "MASTER_PORT": 29500}),
        ("gsm8k_3gpu", {}, {"ROLLOUT_PORT": 8000, "ROLLOUT_GROUP_PORT": 51216, "MASTER_PORT": 29500}),
        ("countdown_1gpu", {}, {"MASTER_PORT": 29500}),
        ("gsm8k_1gpu", {}, {"MASTER_PORT": 29500}),
        ("countdown_multinode", {"ROLE": "rollout"}, {"ROLLOUT_PORT": 8000, "ROLLOUT_GROUP_PORT": 51216}),
        ("countdown_multinode", {"ROLE": "train", "ROLLOUT_HOST": "g"},
         {"ROLLOUT_PORT": 8000, "ROLLOUT_GROUP_PORT": 51216, "MASTER_PORT": 29500}),
        ("countdown_cpu_smoke", {}, {"MASTER_PORT": 29500}),
    ],
)  # fmt: skip
def test_port_defaults_of_each_recipe(recipe, env, ports):
    assert dict(settings(recipe, **env).ports) == ports


def test_a_training_node_may_reuse_the_rollout_hosts_port_numbers_but_not_twice():
    # ROLLOUT_PORT and ROLLOUT_GROUP_PORT are bound on the rollout host, MASTER_PORT here: they may coincide.
    node = dict(ROLE="train", ROLLOUT_HOST="g")
    assert settings("countdown_multinode", **node, ROLLOUT_PORT="29500").port("MASTER_PORT") == 29500
    with pytest.raises(SettingError, match="ROLLOUT_GROUP_PORT=8000 clashes with ROLLOUT_PORT"):
        settings("countdown_multinode", **node, ROLLOUT_GROUP_PORT="8000")


@pytest.mark.parametrize("recipe", ["countdown_3gpu", "countdown_multinode"])
def test_renamed_ports_are_refused_with_the_new_names(recipe):
    role = {"ROLE": "rollout"} if recipe == "countdown_multinode" else {}
    with pytest.raises(SettingError, match="now ROLLOUT_PORT"):
        settings(recipe, VLLM_PORT="8011", **role)
    with pytest.raises(SettingError, match="ROLLOUT_GROUP_PORT=1"):
        settings(recipe, VLLM_GROUP_PORT="1", **role)
    # Beside ROLLOUT_PORT (or in the 1-GPU recipe) VLLM_PORT is someone else's: kept, to be unset for the children.
    assert settings(recipe, VLLM_PORT="8011", ROLLOUT_PORT="8000", **role).vllm_port == "8011"
    assert settings("countdown_1gpu", VLLM_PORT="8011").vllm_port == "8011"


def test_multinode_roles():
    with pytest.raises(SettingError, match="set ROLE=rollout"):
        settings("countdown_multinode")
    with pytest.raises(SettingError, match="ROLE='both' is neither rollout nor train"):
        settings("countdown_multinode", ROLE="both")
    with pytest.raises(SettingError, match="ROLLOUT_HOST"):
        settings("countdown_multinode", ROLE="train")
    with pytest.raises(SettingError, match="MASTER_ADDR"):
        settings("countdown_multinode", ROLE="train", ROLLOUT_HOST="g", NNODES="2")
    with pytest.raises(SettingError, match="NODE_RANK=2 must be below NNODES=2"):
        settings("countdown_multinode", ROLE="train", ROLLOUT_HOST="g", NNODES="2", NODE_RANK="2", MASTER_ADDR="n")
    with pytest.raises(SettingError, match="TASK='chess'"):
        settings("countdown_multinode", ROLE="train", ROLLOUT_HOST="g", TASK="chess")
    s = settings("countdown_multinode", ROLE="train", ROLLOUT_HOST="g", NNODES="2", MASTER_ADDR="n", TASK="gsm8k")
    assert (s.world_size, s.task.name, s.model) == (16, "gsm8k", GSM8K.model)
    assert (s.record, settings("countdown_multinode", ROLE="train", ROLLOUT_HOST="g", NNODES="2", NODE_RANK="1",
                               MASTER_ADDR="n").record) == ("commands-train-node0", "commands-train-node1")  # fmt: skip
    rollout = settings("countdown_multinode", ROLE="rollout", ROLLOUT_GPUS="0,1")
    assert (rollout.rollout_gpus, rollout.rollout_host, rollout.record) == (("0", "1"), "0.0.0.0", "commands-rollout")
    # the server binds every interface; the launcher asks it on loopback
    assert rollout.health_url == "http://127.0.0.1:8000/health/"
    assert settings("countdown_multinode", ROLE="train", ROLLOUT_HOST="fd00::1").health_url == (
        "http://[fd00::1]:8000/health/"
    )


def test_output_dir_default_and_smoke():
    s = Settings.from_env("gsm8k_1gpu", {"SMOKE": "1"}, REPO)
    assert s.output_dir.parent == REPO / "output" and s.output_dir.name.startswith("gsm8k_1gpu-smoke-")
    assert s.model == str(s.output_dir / "smoke" / "model") and s.dataset == GSM8K.smoke_data
    assert (s.vllm_max_model_len, s.report_to) == (1024, "none")
    c = settings("countdown_1gpu", SMOKE="yes")
    assert c.dataset == "/runs/a/smoke/data/train.jsonl" and c.val_dataset == "/runs/a/smoke/data/train.test.jsonl"
    assert Settings.from_env("countdown_multinode", {"ROLE": "rollout"}, REPO).output_dir == (
        REPO / "output" / "countdown_multinode"  # the same on every host
    )


def test_the_cpu_smoke_recipe_is_always_a_smoke_run_without_gpus():
    s = Settings.from_env("countdown_cpu_smoke", {}, REPO)
    assert s.smoke and re.fullmatch(r"countdown_cpu_smoke-\d{8}-\d{6}", s.output_dir.name)  # no "-smoke" added
    assert (s.layout.name, s.rollout_gpus, s.train_gpus, s.world_size) == ("cpu", (), (), 1)
    assert s.model == str(s.output_dir / "smoke" / "model") and s.dataset == str(s.output_dir / "smoke" / "data" /
                                                                                 "train.jsonl")  # fmt: skip


def test_split_words_keeps_quoted_values_and_refuses_an_open_quote():
    assert split_words("ROLLOUT_ARGS", "--a 'x y' --b") == ("--a", "x y", "--b")
    with pytest.raises(SettingError, match="unmatched quote"):
        split_words("ROLLOUT_ARGS", "--a 'b")


def test_recipes_are_a_table_of_tasks_and_layouts():
    assert recipe_named("countdown_multinode") == Recipe(None, ("rollout", "train"), shared_output=True)
    assert recipe_named("countdown_cpu_smoke") == Recipe("countdown", ("cpu",), smoke=True)
    for task in NAMES:
        assert recipe_named(f"{task}_3gpu") == Recipe(task, ("server",))
        assert recipe_named(f"{task}_1gpu") == Recipe(task, ("colocate",))
        s = settings(f"{task}_1gpu")
        preset = task_named(task).preset
        assert (s.task.name, s.model, s.dataset) == (task, preset.model, preset.dataset)
        assert (s.layout, s.train_gpus, s.script) == (LAYOUTS["colocate"], ("0",), f"{task}_1gpu.sh")
    assert {layout for recipe in RECIPES.values() for layout in recipe.layouts} | {"server", "colocate"} == set(LAYOUTS)


@pytest.mark.parametrize("name", ["countdown_2gpu", "chess_1gpu", "countdown", "1gpu", "countdown_demo"])
def test_an_unknown_recipe_is_refused_naming_the_recipes(name):
    with pytest.raises(SettingError) as refused:
        recipe_named(name)
    assert str(refused.value) == (
        f"{name}: no such recipe; the recipes are countdown_multinode, countdown_cpu_smoke, countdown_3gpu, "
        "countdown_1gpu, gsm8k_3gpu, gsm8k_1gpu, and gym_3gpu, gym_1gpu, gym_cpu_smoke with TASK=gym:<name>"
    )


def test_every_entry_script_is_a_recipe_and_every_fixed_recipe_has_one():
    scripts = {path.stem for path in SHELL.glob("*.sh")}
    assert {"countdown_demo", *RECIPES} <= scripts
    for name in scripts - {"countdown_demo"}:  # the demo's script runs python -m swift_plugins.demo
        recipe_named(name)  # raises for a script the launcher does not know
    for task in NAMES:
        assert {f"{task}_3gpu", f"{task}_1gpu"} <= scripts


def documented(recipe: str) -> dict[str, str]:
    """``{NAME: its whole line}`` of the settings part of ``recipe``'s --help (wrapped lines joined)."""
    text = recipe_help(recipe).split("Settings (environment variables", 1)[1]
    return dict(re.findall(r"^  ([A-Z_]+) +(.*)$", re.sub(r"\n {30}", " ", text), re.M))


@pytest.mark.parametrize("recipe", [f"{task}_{suffix}" for task in NAMES for suffix in ("3gpu", "1gpu")])
def test_help_gives_the_defaults_the_launcher_uses(recipe):
    # each setting's "; default X" in --help against the settings of an empty environment
    s = Settings.from_env(recipe, {}, REPO)
    values = {
        "MODEL": s.model, "DATASET": s.dataset, "VLLM_MAX_MODEL_LEN": str(s.vllm_max_model_len),
        "VLLM_GPU_MEMORY_UTILIZATION": s.vllm_gpu_memory_utilization, "REPORT_TO": s.report_to,
        "ROLLOUT_TIMEOUT": str(s.rollout_timeout), "STOP_GRACE_SECONDS": str(s.stop_grace),
        "ROLLOUT_GPU": ",".join(s.rollout_gpus), "TRAIN_GPUS": ",".join(s.train_gpus), "GPU": ",".join(s.train_gpus),
        "LOG_TAIL_LINES": str(s.log_tail_lines), "WATCH": s.watch, **{name: str(port) for name, port in s.ports},
    }  # fmt: skip
    defaults = {name: re.search(r"; default (\S+?)[;]?(?: |$)", line)[1] for name, line in documented(recipe).items()}
    compared = {name: defaults[name] for name in values if name in defaults}
    assert compared == {name: values[name] for name in compared}
    assert {"MODEL", "DATASET", "VLLM_MAX_MODEL_LEN", "MASTER_PORT", "WATCH"} <= set(compared), defaults


class Spy(dict):
    """An environment that remembers every name read from it."""

    def __init__(self, values: dict) -> None:
        super().__init__(values)
        self.read: set[str] = set()

    def get(self, key, default=None):
        self.read.add(key)
        return super().get(key, default)

    def __getitem__(self, key):
        self.read.add(key)
        return super().__getitem__(key)

    def __contains__(self, key):
        self.read.add(key)
        return super().__contains__(key)


# Read, but no setting of the recipes: the scheduler's GPUs, the caller's proxy bypass, vLLM's own port (kept from
# the children) and the old name of a port (refused with the new one).
AMBIENT = {"CUDA_VISIBLE_DEVICES", "no_proxy", "NO_PROXY", "VLLM_PORT", "VLLM_GROUP_PORT"}
LAYOUT_ENV = {"countdown_multinode": [{"ROLE": "rollout"}, {"ROLE": "train", "ROLLOUT_HOST": "gen0"}],
              **{f"gym_{kind}": [{"TASK": "gym:basic_arithmetic"}] for kind in ("1gpu", "3gpu", "cpu_smoke")}}


@pytest.mark.parametrize("recipe", recipe_names())
def test_help_lists_every_setting_the_recipe_reads(recipe):
    """The settings table and the launcher agree: --help lists only settings the launcher reads (GYM_SCORE_* are
    read by the rewards in the trainer), and every setting it reads is in the table, so one it reads but does not
    list for this recipe (a smoke recipe's MODEL: the tiny model trains) is refused when set, not ignored."""
    read = set()
    for env in LAYOUT_ENV.get(recipe, [{}]):
        spy = Spy(env)
        Settings.from_env(recipe, spy, REPO)
        read |= spy.read
    listed = set(documented(recipe))
    assert listed - {"GYM_SCORE_WORKERS", "GYM_SCORE_TIMEOUT"} <= read, recipe
    assert read - AMBIENT <= SETTING_NAMES, recipe
    assert {"SELECT_SAMPLES", "SELECT_BAND", "DRY_RUN"} <= listed
    if recipe_named(recipe).task is None and recipe != "countdown_multinode":
        assert {"TASK", "GYM_SCORE_WORKERS", "GYM_SCORE_TIMEOUT", "DYNAMIC_SAMPLE"} <= listed


def test_the_help_gives_the_gym_scorers_own_limits():
    from swift_plugins.gym import bounded

    assert {name: getattr(bounded, name) for name in GYM_SCORE_LIMITS} == GYM_SCORE_LIMITS


@pytest.mark.parametrize(
    ("recipe", "env", "message"),
    [
        ("countdown_3gpu", {"TASK": "gsm8k"}, "TASK is not a setting of countdown_3gpu (its task is countdown): unset "
         "it (it is read by countdown_multinode, gym_3gpu, gym_1gpu, ...)"),
        ("gsm8k_1gpu", {"ROLLOUT_GPU": "1"}, "ROLLOUT_GPU is not a setting of gsm8k_1gpu: unset it"),
        ("countdown_1gpu", {"NNODES": "2"}, "NNODES is not a setting of countdown_1gpu: unset it (it is read by "
         "countdown_multinode)"),
        ("countdown_cpu_smoke", {"MODEL": "Qwen/Qwen2.5-3B-Instruct"}, "MODEL is not a setting of countdown_cpu_smoke"),
        ("countdown_3gpu", {"GYM_SCORE_TIMEOUT": "3"}, "GYM_SCORE_TIMEOUT is not a setting of countdown_3gpu"),
    ],
)  # fmt: skip
def test_a_setting_of_another_recipe_is_refused_not_ignored(recipe, env, message):
    with pytest.raises(SettingError, match=re.escape(message)):
        Settings.from_env(recipe, env, REPO)
    Settings.from_env(recipe, {name: "" for name in env}, REPO)  # set but empty: unset


def test_presets_keep_the_reference_runs():
    assert task_named("countdown").system_prompt == SYSTEM_PROMPT and task_named("gsm8k").system_prompt is None
    for spec in all_tasks():
        preset = spec.preset
        words = Flags(preset.server_args)
        completions = (
            2 * int(words.value("per_device_train_batch_size")) * int(words.value("gradient_accumulation_steps"))
        )
        assert completions == preset.reference_completions, spec.name  # the reference ran 2 training processes
        for args in (preset.args, preset.server_args, preset.colocate_args):
            assert len(Flags(args).names()) == len([word for word in args if word.startswith("--")]), spec.name
        lengths = Flags(preset.args)
        needed = int(lengths.value("max_length")) + int(lengths.value("max_completion_length"))
        assert preset.vllm_max_model_len >= needed, spec.name  # a prompt and its completion fit in vLLM


def test_a_smoke_run_takes_the_rows_dataset_names():
    """Offline, GSM8K's smoke sample (a hub dataset) cannot load: DATASET's rows stand in, and no data is built."""
    s = settings("gsm8k_3gpu", SMOKE="1", DATASET="/data/gsm8k.jsonl", VAL_DATASET="/data/gsm8k.test.jsonl")
    assert (s.model, s.dataset, s.val_dataset) == ("/runs/a/smoke/model", "/data/gsm8k.jsonl", "/data/gsm8k.test.jsonl")
    c = settings("countdown_3gpu", SMOKE="1", DATASET="/data/countdown.jsonl")
    assert (c.dataset, c.val_dataset) == ("/data/countdown.jsonl", "")
    assert [argv[3] for argv in smoke_builds(c, "python")] == ["tiny-model"]  # the model only
