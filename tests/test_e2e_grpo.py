"""End to end on CPU: real ms-swift GRPO steps through the CPU smoke recipe.

The tests run ``shell/countdown_cpu_smoke.sh`` once (about a minute): tiny model,
generated data, ``swift rlhf --rlhf_type grpo`` with this package's plugin, then the plot. A second,
test-only plugin adds a probe reward that scores each row's own known solution with the package's
pure reward function: it logs 1.0 only if swift hands the rewards each row's ``nums``/``target``.
"""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from swift_plugins.countdown.data import prompt_for, read_rows
from swift_plugins.countdown.rewards import countdown_accuracy_reward, think_answer_format_reward
from swift_plugins.tools.plot import read_steps

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
pytestmark = pytest.mark.e2e

REWARD_KEYS = ("rewards/CountdownAccuracy/mean", "rewards/ThinkAnswerFormat/mean")


PROBE_PLUGIN = '''
"""Test-only reward: scores each row's own known solution with the package's pure accuracy reward."""
from swift.rewards import ORM, orms

from swift_plugins.countdown.rewards import countdown_accuracy_reward


class CountdownProbe(ORM):
    def __call__(self, completions, nums, target, solution, **kwargs):
        answers = [f"<answer>{s} = {t}</answer>" for s, t in zip(solution, target, strict=True)]
        return countdown_accuracy_reward(answers, nums, target)


orms["countdown_probe"] = CountdownProbe
'''


@pytest.fixture(scope="module")
def smoke_run(repo, tmp_path_factory):
    """Runs the CPU smoke recipe for 2 GRPO steps with the probe reward added; returns its folders."""
    out = tmp_path_factory.mktemp("cpu_smoke")
    probe = out / "countdown_probe.py"
    probe.write_text(textwrap.dedent(PROBE_PLUGIN))
    bin_dir = str(Path(sys.executable).parent)  # the venv's swift and python
    env = {
        **os.environ,
        "OUTPUT_DIR": str(out),
        "MAX_STEPS": "2",
        "PATH": bin_dir + os.pathsep + os.environ.get("PATH", ""),
    }
    env.setdefault("PYTHON", sys.executable)
    extra = [
        "--max_completion_length",
        "24",
        "--external_plugins",
        str(repo / "swift_plugins" / "plugin.py"),
        str(probe),
        "--reward_funcs",
        "external_countdown",
        "think_answer_format",
        "countdown_probe",
    ]
    result = subprocess.run(
        ["bash", str(repo / "shell" / "countdown_cpu_smoke.sh"), *extra],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    runs = sorted((out / "run").glob("v*-*"))
    assert len(runs) == 1, runs
    return {"out": out, "run": runs[0], "stdout": result.stdout, "stderr": result.stderr}


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_smoke_run_finishes_with_a_checkpoint_and_a_plot(smoke_run):
    run = smoke_run["run"]
    checkpoint = run / "checkpoint-2"
    assert (checkpoint / "model.safetensors").stat().st_size > 1_000_000
    assert (checkpoint / "trainer_state.json").is_file()
    png = run / "curves.png"
    assert png.read_bytes().startswith(PNG_MAGIC) and png.stat().st_size > 10_000
    assert str(png) in smoke_run["stdout"]  # the recipe says where the curves are
    args = json.loads((run / "args.json").read_text())
    assert (args["fp16"], args["bf16"], args["torch_dtype"]) == (False, False, "float32")
    assert "listing failed" not in smoke_run["stdout"] + smoke_run["stderr"]  # no ModelScope call, no retry wait


def test_every_step_logs_the_package_rewards(smoke_run):
    steps = read_steps(smoke_run["run"] / "logging.jsonl")
    assert [record["step"] for record in steps] == [1, 2]
    for record in steps:
        for key in REWARD_KEYS:
            assert isinstance(record[key], float), (key, record)
        # the probe scores each row's known solution: 1.0 iff nums/target reached the rewards row by row
        assert record["rewards/CountdownProbe/mean"] == 1.0


def test_logged_completions_rescore_against_the_dataset_rows(smoke_run):
    rows = [row for _, row in read_rows(smoke_run["out"] / "data" / "train.jsonl")]
    by_prompt = {prompt_for(row["nums"], row["target"]): row for row in rows}
    logged = read_jsonl(smoke_run["run"] / "completions.jsonl")
    # swift 4.6 writes the last step's table twice: its log() at the end of training (the train_runtime
    # summary) appends the completions buffer again, unchanged.
    assert logged[-1] == logged[-2]
    logged = logged[:-1]
    assert [table["step"] for table in logged] == [["1"] * 4, ["2"] * 4]
    completions = 0
    for table in logged:
        for i, (prompt, completion) in enumerate(zip(table["prompt"], table["completion"], strict=True)):
            matches = [row for text, row in by_prompt.items() if text in prompt]
            assert len(matches) == 1, prompt  # each prompt is the one of exactly one generated row
            row = matches[0]
            assert table["solution"][i] == row["solution"]
            assert (
                table["CountdownAccuracy"][i]
                == countdown_accuracy_reward([completion], [row["nums"]], [row["target"]])[0]
            )
            assert table["ThinkAnswerFormat"][i] == think_answer_format_reward([completion])[0]
            assert table["CountdownProbe"][i] == 1.0
            completions += 1
    assert completions == 2 * 4  # 2 steps x 1 prompt x 4 generations
