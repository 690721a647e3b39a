"""``TASK=gym:<name>``: the demo's plan for reasoning-gym datasets checked against ms-swift's own argument classes,
its cold-start rows scored by the trainer's rewards, the entry script's DRY_RUN, refusals and ``--help``."""

import json
import os
import re
import subprocess
import sys

import pytest

from swift_plugins.cli import build_parser
from swift_plugins.core.errors import SettingError
from swift_plugins.core.flags import Flags
from swift_plugins.demo.plan import stages
from swift_plugins.demo.settings import SETTINGS
from swift_plugins.gym.generator import generate

from ..helpers import REPO, shell_commands, unknown_to_swift
from .test_demo_plan import H100, commands, plan, run_script, swift_pairs

pytestmark = pytest.mark.stack  # swift, transformers or vLLM of this venv

# an arithmetic dataset (worked steps from its expression) and a counting one (its words spelled out)
DATASETS = ("basic_arithmetic", "letter_counting")
# every kind of think part: an expression's steps, the dataset's worked solution, none; answers that are words,
# lists and grids
COLD_START_DATASETS = (
    "basic_arithmetic", "chain_sum", "products", "gsm_symbolic", "leg_counting", "letter_counting", "spell_backward",
    "word_sorting", "word_sequence_reversal", "number_sorting", "rotate_matrix", "zebra_puzzles",
)  # fmt: skip


def test_the_gym_plans_parse_with_swift_and_use_the_gym_tasks_rewards():
    pairs = []
    for name in DATASETS:
        demo = plan(vllm_version="0.32.0", TASK=f"gym:{name}")
        assert demo.output_dir.name == "demo" and demo.held_out.name == "questions.test.jsonl"
        found = commands(demo)
        rlhf = found["rlhf"]
        assert (rlhf.value("reward_funcs"), rlhf.value("reward_weights")) == ("external_gym think_answer_format", "1 0")
        assert rlhf.value("dynamic_sample") == "true" and rlhf.value("dataset") == str(demo.data / "selected.jsonl")
        # the task's lengths: its preset's 1024 completion tokens, at most the CPU scale's 256; its vLLM length
        assert rlhf.value("max_completion_length") == "256" and rlhf.value("vllm_max_model_len") == "4096"
        assert found["sft"].value("max_length") == "2048"
        for argv in found["evaluate"]:
            assert Flags(argv[1:argv.index("--")]).value("task") == f"gym:{name}"
            assert Flags(argv[1:argv.index("--")]).value("max-new-tokens") == "256"
        # the package's own commands parse with its own parser
        generated = build_parser().parse_args(["gym", "generate", *found["generate"]])
        assert (generated.name, generated.size, generated.test_size, generated.out) == (
            name, 1500, 500, demo.rows)  # fmt: skip
        assert build_parser().parse_args(["gym", "sft-data", *found["sft-data"]]).rows == demo.rows
        (select,) = next(stage for stage in stages(demo) if stage.selection).commands
        selection = build_parser().parse_args(list(select.argv[3 : select.argv.index("--")]))
        assert (selection.task, selection.candidates, selection.max_new_tokens) == (f"gym:{name}", demo.rows, 256)
        pairs += swift_pairs(found)
    gpu = commands(plan(cuda_device=H100, TASK="gym:basic_arithmetic"))
    assert gpu["rlhf"].value("max_completion_length") == "1024"  # the GPU scale: the task's own length
    pairs += swift_pairs(gpu)
    assert unknown_to_swift(pairs) == []


def test_countdown_is_the_default_task_and_its_plan_is_unchanged():
    default, named = plan(vllm_version="0.32.0"), plan(vllm_version="0.32.0", TASK="countdown")
    shown = [[command.shell() for stage in stages(demo) for command in stage.commands] for demo in (default, named)]
    assert shown[0] == shown[1]
    assert commands(default)["rlhf"].value("reward_funcs") == "external_countdown think_answer_format"


@pytest.mark.parametrize(
    "env, message",
    [
        ({"TASK": "gsm8k"}, "TASK='gsm8k' is not a task of the demo: countdown (the default) or gym:<name>"),
        ({"TASK": "gym:basic_arithmatic"}, "gym:basic_arithmatic is not a reasoning-gym dataset; closest: "
         "basic_arithmetic"),
        ({"TASK": "gym:rush_hour"}, "TASK=gym:rush_hour: its rows have no gold answer to write the cold start from"),
        ({"MODEL": "Qwen/Qwen2.5-3B-Instruct"}, "MODEL is not a setting of countdown_demo: unset it"),
        ({"GYM_SCORE_TIMEOUT": "2"}, "GYM_SCORE_TIMEOUT is not a setting of countdown_demo: unset it"),
        ({"TASK": "gym:leg_counting", "GYM_SCORE_TIMEOUT": "inf"}, "GYM_SCORE_TIMEOUT='inf' must be a number"),
        ({"GYM_SETTINGS": "max_terms=2"}, "GYM_SETTINGS is not a setting of countdown_demo: unset it"),
        ({"TASK": "gym:chain_sum", "GYM_SETTINGS": "terms=2"}, "gym:chain_sum has no setting 'terms'; its settings:"),
        ({"TASK": "gym:chain_sum", "GYM_SETTINGS": "max_terms"}, "gym:chain_sum: expected key=value, got 'max_terms'"),
    ],
)  # fmt: skip
def test_a_bad_task_or_setting_is_refused(env, message):
    with pytest.raises(SettingError, match=re.escape(message)):
        plan(**env)


def test_the_gym_settings_are_read_with_a_gym_task():
    assert plan(TASK="gym:leg_counting", GYM_SCORE_TIMEOUT="2", GYM_SCORE_WORKERS="1").task.name == "gym:leg_counting"


def test_the_datasets_settings_make_its_rows():
    chain_sum = plan(TASK="gym:chain_sum", GYM_SETTINGS="max_terms=2  max_digits=2")
    generate = commands(chain_sum)["generate"]  # after `gym generate`
    assert generate[generate.index("--split-seed") + 2 : generate.index("--out")] == ["max_terms=2", "max_digits=2"]
    assert build_parser().parse_args(["gym", "generate", *generate]).settings == ["max_terms=2", "max_digits=2"]


def test_the_cold_start_rows_score_one_under_the_trainers_rewards(tmp_path):
    """Real rows of several datasets, their cold-start rows written by the demo's command, then scored in a fresh
    interpreter as the trainer scores them: the plugin loaded, the rows loaded by swift, the registered rewards."""
    rows, answers = tmp_path / "rows.jsonl", tmp_path / "sft.jsonl"
    with rows.open("w") as out:
        for name in COLD_START_DATASETS:
            for row in generate(name, 3, 0, 0).train:
                out.write(json.dumps(row) + "\n")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    made = subprocess.run([sys.executable, "-m", "swift_plugins", "gym", "sft-data", str(rows), "--out", str(answers)],
                          capture_output=True, text=True, timeout=300, env=env)  # fmt: skip
    assert made.returncode == 0, made.stderr[-3000:]
    turns = [json.loads(line)["messages"][1]["content"] for line in answers.read_text().splitlines()]
    assert len(turns) == 3 * len(COLD_START_DATASETS)
    # the arithmetic ones, leg_counting, letter_counting and gsm_symbolic show steps
    assert sum("No worked steps" not in turn for turn in turns) >= 18
    completions = [*turns, "<think>\nNo worked steps: the answer follows.\n</think>\n<answer></answer>"]
    program = (
        "import json, sys, runpy\n"
        f"sys.argv = ['swift', 'rlhf', '--dataset', {str(rows)!r}]\n"
        f"runpy.run_path({str(REPO / 'swift_plugins' / 'plugin.py')!r})\n"
        "from swift.dataset import load_dataset\n"
        "from swift.rewards import orms\n"
        f"train, _ = load_dataset([{str(rows)!r}], remove_unused_columns=False)\n"
        "columns = {key: list(train[key]) for key in ('gym_dataset', 'gym_config', 'question', 'answer', 'metadata')}\n"
        "columns = {key: values + values[-1:] for key, values in columns.items()}\n"
        f"completions = {completions!r}\n"
        "scores = [orms[name](args=None)(completions, trainer_state=None, **columns)\n"
        "          for name in ('external_gym', 'think_answer_format')]\n"
        "print(json.dumps(scores))"
    )
    result = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=600, env=env)
    assert result.returncode == 0, result.stderr[-3000:]
    accuracy, format_rate = json.loads(result.stdout.strip().splitlines()[-1])
    # every cold-start answer scores 1.0 on both; the empty answer after them shows the call can score 0
    assert accuracy == [1.0] * len(turns) + [0.0] and format_rate == [1.0] * len(completions)


def test_the_script_prints_the_gym_plan_and_runs_nothing(tmp_path):
    result = run_script(tmp_path, DRY_RUN="1", TASK="gym:letter_counting")
    assert result.returncode == 0, result.stderr
    assert result.stderr.startswith("countdown_demo.sh: DRY_RUN: cpu scale:")
    titles = [line for line in result.stdout.splitlines() if line.startswith("# ") and "/9 " in line]
    assert len(titles) == 9 and titles[1].startswith("# 2/9 questions -> ")
    words = shell_commands(result.stdout)
    assert [w[w.index("swift") + 1] for w in words if "swift" in w] == ["sft", "rlhf"]
    package = [w[w.index("swift_plugins") + 1 :][:3] for w in words if "swift_plugins" in w]
    assert ["gym", "generate", "letter_counting"] in package and ["gym", "sft-data", str(
        tmp_path / "out" / "data" / "questions.jsonl")] in package  # fmt: skip
    assert not (tmp_path / "out").exists()


def test_a_bad_task_is_one_line_from_the_script(tmp_path):
    result = run_script(tmp_path, DRY_RUN="1", TASK="gym:basic_arithmatic")
    assert result.returncode == 1 and len(result.stderr.splitlines()) == 1, result.stderr
    assert result.stderr.startswith("countdown_demo.sh: error: gym:basic_arithmatic is not a reasoning-gym dataset")
    result = run_script(tmp_path, DRY_RUN="1", DATASET="rows.jsonl")
    assert result.returncode == 1 and len(result.stderr.splitlines()) == 1, result.stderr
    assert result.stderr.startswith("countdown_demo.sh: error: DATASET is not a setting of countdown_demo: unset it")


def test_help_lists_every_setting_of_the_table(tmp_path):
    result = run_script(tmp_path, "--help")
    assert result.returncode == 0 and result.stdout.startswith("countdown_demo.sh: ")
    listed = re.findall(r"^  ([A-Z_]+) ", result.stdout, re.M)
    assert listed == [setting.name for setting in SETTINGS] and listed[0] == "TASK"
    assert re.search(r"^  TASK +the task the model learns; default countdown; countdown or gym:<name>", result.stdout,
                     re.M)  # fmt: skip
