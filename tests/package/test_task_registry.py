"""The task registry: every tool looks tasks up by name, so a new task is one subpackage and one registry line.

The new-task test copies the package, adds a toy task ``echo`` (repeat a word inside answer tags) as one
subpackage and its name as one line of ``swift_plugins/tasks.py``, changes no other file, and runs it through
data, reward, score, the plugin, the command line, ``evaluate``'s checks, the launcher's and the demo's DRY_RUN and
the import floors, each in a process of the copy.
"""

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from swift_plugins.core.errors import SettingError
from swift_plugins.tasks import NAMES, all_tasks, registered, task_named

ECHO = {
    "__init__.py": '''
        """Echo: repeat a word inside answer tags (a toy task for the registry test)."""
        from dataclasses import replace

        from ..core.errors import DataError
        from ..core.rewards import SHARED
        from ..core.task import Demo, Preset, Reward, Task, TaskSpec

        def check_row(row, where):
            if not isinstance(row.get("word"), str) or not row["word"]:
                raise DataError(f"{where}: word must be non-empty text, got {row.get('word')!r}")
            return {"word": row["word"]}

        def messages(row):
            return [{"role": "user", "content": f"Repeat the word {row['word']} inside <answer></answer> tags."}]

        ECHO = Task(name="Echo", columns=("word",), check_row=check_row, messages=messages)
        PRESET = Preset(
            model="Qwen/Qwen2.5-0.5B-Instruct", dataset="echo.jsonl",
            args=("--max_length", "256", "--max_completion_length", "16", "--num_generations", "4",
                  "--max_steps", "10"),
            server_args=("--per_device_train_batch_size", "4", "--per_device_eval_batch_size", "4"),
            colocate_args=("--per_device_train_batch_size", "4", "--per_device_eval_batch_size", "4"),
            reference_completions=8, eval_steps=5, vllm_max_model_len=512, smoke_data="echo#8",
        )
        REWARDS = (Reward("echo_exact", "swift_plugins.echo.rewards:echo_reward", "EchoExact", accuracy=True),
                   replace(SHARED[2], weight=1.0))  # answer_tag, trained on
        SPEC = TaskSpec(name="echo", data=ECHO, rewards=REWARDS, scoring="swift_plugins.echo.scoring",
                        preset=PRESET, system_prompt=None, held_out_hint="rows of words",
                        cli="swift_plugins.echo.cli",
                        demo=Demo(generate=("swift_plugins", "echo", "generate"),
                                  sft_data=("swift_plugins", "echo", "sft-data"), unit="words",
                                  answers="echoed words", completion_tokens=16, sft_length=64))
    ''',
    "rewards.py": '''
        from ..core.tags import last_answer

        def echo_reward(completions, word, **kwargs):
            return [1.0 if last_answer(c) is not None and last_answer(c).strip() == w else 0.0
                    for c, w in zip(completions, word)]
    ''',
    "scoring.py": '''
        from types import SimpleNamespace

        from ..core.scoring import CORRECT, summarise, summary_lines
        from .rewards import echo_reward

        def samples_from_rows(rows):
            samples = []
            for where, row in rows:
                right = echo_reward([row["response"]], [row["word"]])[0] == 1.0
                samples.append(SimpleNamespace(source=where, key=row["word"], verdict=CORRECT if right else "wrong",
                                               formatted="<answer>" in row["response"], truncated=False))
            return samples

        def score_samples(samples):
            return summarise(samples, unit="word")

        def sample_record(sample):
            return vars(sample)

        def format_report(report):
            return "\\n".join(summary_lines(report, "answer tags", unit="word"))
    ''',
    "cli.py": '''
        import json
        from pathlib import Path

        def _generate(args):
            words = [f"word{index}" for index in range(args.size)]
            Path(args.out).write_text("".join(json.dumps({"word": word}) + "\\n" for word in words))

        def add_command(parent):
            echo = parent.add_parser("echo", help="echo rows: generate")
            commands = echo.add_subparsers(dest="task_command", required=True)
            generate = commands.add_parser("generate", help="write word rows")
            for name in ("--size", "--dev-size", "--test-size", "--seed", "--split-seed"):
                generate.add_argument(name, type=int, default=0)
            generate.add_argument("--out", required=True)
            generate.add_argument("--quiet", action="store_true")
            generate.set_defaults(run=_generate)
            return echo
    ''',
}

THROUGH_THE_TASK = """
import json, sys
from swift_plugins.tasks import task_named

echo = task_named("echo")
row = echo.data.prepare({"word": "owl"}, "rows.jsonl:1")
scoring = echo.scoring_module()
samples = scoring.samples_from_rows([("r:1", {"word": "owl", "response": "<answer>owl</answer>"}),
                                     ("r:2", {"word": "cat", "response": "dog"})])
report = scoring.score_samples(samples)
sys.argv = ["swift", "--dataset", sys.argv[1]]
import swift_plugins.plugin  # registers every task of the registry, echo included
from swift.rewards import orms
print(json.dumps({"prompt": row["messages"][0]["content"], "accuracy": report["accuracy"],
                  "reward": orms["echo_exact"]()(["<answer> owl </answer>", "owl"], word=["owl", "owl"])}))
"""


@pytest.fixture(scope="module")
def copy_with_echo(tmp_path_factory, repo) -> Path:
    """A copy of the checkout with the toy task: its subpackage and one line in the registry."""
    root = tmp_path_factory.mktemp("third_task")
    ignore = shutil.ignore_patterns("__pycache__")
    for folder in ("swift_plugins", "shell", "tests/package"):
        shutil.copytree(repo / folder, root / folder, ignore=ignore)
    for file in ("pyproject.toml", "tests/__init__.py"):
        shutil.copy(repo / file, root / file)
    (root / "swift_plugins" / "echo").mkdir()
    for name, text in ECHO.items():
        (root / "swift_plugins" / "echo" / name).write_text(textwrap.dedent(text).lstrip())
    registry = root / "swift_plugins" / "tasks.py"
    text = registry.read_text()
    last = f'    "{NAMES[-1]}",\n'
    assert text.count(last) == 1
    registry.write_text(text.replace(last, last + '    "echo",\n'))
    (root / "echo.jsonl").write_text(json.dumps({"word": "owl"}) + "\n")
    return root


def run_in(root: Path, *argv: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, *argv],
        cwd=root,
        env={**os.environ, "PYTHONPATH": str(root), **env},
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.stack  # the plugin registers the task with the installed ms-swift, whose reward registry scores it
def test_a_new_task_is_one_subpackage_and_one_registry_line(copy_with_echo):
    result = run_in(copy_with_echo, "-c", THROUGH_THE_TASK, str(copy_with_echo / "echo.jsonl"))
    assert result.returncode == 0, result.stderr[-3000:]
    seen = json.loads(result.stdout.strip().splitlines()[-1])
    assert seen == {"prompt": "Repeat the word owl inside <answer></answer> tags.", "accuracy": 0.5,
                    "reward": [1.0, 0.0]}  # fmt: skip


def test_evaluate_checks_the_new_tasks_rows(copy_with_echo):
    bad = copy_with_echo / "bad.jsonl"
    bad.write_text(json.dumps({"word": ""}) + "\n")
    result = run_in(copy_with_echo, "-m", "swift_plugins", "evaluate", "Qwen/Qwen2.5-0.5B-Instruct",
                    "--task", "echo", "--data", str(bad), "--out", "eval")  # fmt: skip
    assert result.returncode == 2
    assert result.stderr.strip().endswith("bad.jsonl:1: word must be non-empty text, got ''")


def test_the_command_line_lists_the_new_task(copy_with_echo):
    listed = run_in(copy_with_echo, "-m", "swift_plugins", "--help")
    assert listed.returncode == 0 and "echo" in listed.stdout.split("{", 1)[1].split("}", 1)[0].split(",")
    helped = run_in(copy_with_echo, "-m", "swift_plugins", "evaluate", "--help").stdout
    assert "countdown, gsm8k, echo or gym:<name>" in " ".join(helped.split())
    written = run_in(copy_with_echo, "-m", "swift_plugins", "echo", "generate", "--size", "3", "--out", "w.jsonl")
    assert written.returncode == 0 and len((copy_with_echo / "w.jsonl").read_text().splitlines()) == 3


def test_the_demo_plans_the_new_task(copy_with_echo):
    result = run_in(copy_with_echo, "-m", "swift_plugins.demo", DRY_RUN="1", TASK="echo", OUTPUT_DIR="demo")
    assert result.returncode == 0, result.stderr
    printed = " ".join(result.stdout.replace("\\\n", " ").split())  # the commands, unwrapped
    for words in ("swift_plugins echo generate --size 1500 --dev-size 500 --test-size 500",
                  "swift_plugins echo sft-data", "--reward_funcs echo_exact answer_tag --reward_weights 1 0",
                  "--max_completion_length 16", "demo/data/words.test.jsonl"):
        assert words in printed, words


def test_the_import_floors_hold_the_new_task(copy_with_echo):
    floors = copy_with_echo / "pyproject.toml"
    linted = subprocess.run([str(Path(sys.executable).parent / "lint-imports")], cwd=copy_with_echo,
                            capture_output=True, text=True, timeout=300)  # fmt: skip
    assert linted.returncode == 0, linted.stdout[-3000:]
    upward = copy_with_echo / "swift_plugins" / "echo" / "upward.py"
    upward.write_text("from ..tools import evaluate\n")  # a task may not import the floor above it
    try:
        linted = subprocess.run([str(Path(sys.executable).parent / "lint-imports")], cwd=copy_with_echo,
                                capture_output=True, text=True, timeout=300)  # fmt: skip
    finally:
        upward.unlink()
    assert linted.returncode == 1 and "swift_plugins.echo.upward -> swift_plugins.tools" in linted.stdout
    assert floors.read_text() == (Path(__file__).parents[2] / "pyproject.toml").read_text()  # no contract edited


def test_the_launcher_runs_the_new_task(copy_with_echo):
    result = run_in(copy_with_echo, "-m", "swift_plugins.launch", "echo_1gpu", DRY_RUN="1", OUTPUT_DIR="out",
                    DATASET=str(copy_with_echo / "echo.jsonl"))  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "--reward_funcs echo_exact answer_tag" in result.stdout and "--system" not in result.stdout
    result = run_in(copy_with_echo, "-m", "swift_plugins.launch", "countdown_multinode", DRY_RUN="1", TASK="echo",
                    ROLE="train", ROLLOUT_HOST="gen0", DATASET=str(copy_with_echo / "echo.jsonl"))  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "--reward_funcs echo_exact" in result.stdout


def test_every_registered_task_exports_what_the_tools_need():
    for task in all_tasks():
        assert task_named(task.name) is task
        scoring = task.scoring_module()
        assert all(callable(getattr(scoring, name)) for name in ("samples_from_rows", "score_samples",
                                                                 "sample_record", "format_report"))  # fmt: skip
    for task in registered():
        assert all(callable(reward.function()) for reward in task.rewards)  # imported only when asked
        assert task.cli is None or importlib.util.find_spec(task.cli) is not None
    with pytest.raises(SettingError, match="use countdown or gsm8k"):
        task_named("chess")
