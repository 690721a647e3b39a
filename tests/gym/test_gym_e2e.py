"""End to end on CPU: colocate GRPO on a reasoning-gym task with vLLM's CPU build, through the launcher's smoke path.

``python -m swift_plugins.launch gym_cpu_smoke`` with ``TASK=gym:basic_arithmetic`` generates the gym rows and
their held-out split with ``python -m swift_plugins gym generate``, builds the tiny random model and runs real
``swift rlhf --rlhf_type grpo`` for 2 steps with the plugin's ``external_gym`` and ``think_answer_format`` rewards
(scored in the gym reward's worker pool), one evaluation on the held-out rows and a checkpoint; then
``python -m swift_plugins evaluate`` scores the checkpoint's greedy answers to the held-out rows with the same
scorer, which ``gym score`` reproduces from the responses.

``DYNAMIC_SAMPLE`` is on, with the probe plugin's ``distinct_characters`` reward beside them: its values differ
between the random model's answers, all wrong, as answers that differ only in format would (the random model never
writes the format), and the recipe's weights judge the groups on the answer alone, so every group is without spread.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from swift_plugins.tools.plot import read_steps
from swift_plugins.watch.checkpoints import newest_checkpoint

from ..helpers import REPO, SYNC_PROBE, free_port, run_real

pytestmark = pytest.mark.e2e  # the swift path is test_e2e_grpo's (run in every stack); the gym parts are pure

STEPS = 2


@pytest.fixture(scope="module")
def gym_smoke(tmp_path_factory):
    out = tmp_path_factory.mktemp("gym_smoke")
    env = {
        **os.environ,
        "TASK": "gym:basic_arithmetic",
        "OUTPUT_DIR": str(out),
        "MASTER_PORT": str(free_port()),
        "PATH": str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", ""),
        "DYNAMIC_SAMPLE": "1",
        "SYNC_PROBE_OUT": str(out / "sync_probe.jsonl"),
    }
    command = [sys.executable, "-m", "swift_plugins.launch", "gym_cpu_smoke",
               "--external_plugins", str(REPO / "swift_plugins" / "plugin.py"), str(SYNC_PROBE),
               "--reward_funcs", "external_gym", "think_answer_format", "distinct_characters",
               "--max_steps", str(STEPS), "--save_steps", str(STEPS), "--eval_steps", str(STEPS),
               "--max_completion_length", "24"]  # fmt: skip
    result = run_real(command, cwd=REPO, env=env)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return out, result


def test_grpo_runs_on_a_gym_task_and_logs_its_rewards(gym_smoke):
    out, result = gym_smoke
    checkpoint = newest_checkpoint(out)
    assert checkpoint is not None and checkpoint.name == f"checkpoint-{STEPS}"
    steps = read_steps(checkpoint.parent / "logging.jsonl")
    assert [record["step"] for record in steps] == list(range(1, STEPS + 1))
    for record in steps:
        for key in ("rewards/GymAccuracy/mean", "rewards/ThinkAnswerFormat/mean"):
            assert isinstance(record[key], float), (key, record)
    assert "SMOKE passed" in result.stderr


def test_dynamic_sampling_judges_the_answer_so_answers_differing_elsewhere_have_no_spread(gym_smoke):
    out, result = gym_smoke
    run = newest_checkpoint(out).parent
    args = json.loads((run / "args.json").read_text())
    assert args["dynamic_sample"] and args["reward_weights"] == [1.0, 0.0, 0.0]  # the answer's reward alone
    for record in read_steps(run / "logging.jsonl"):
        assert record["rewards/GymAccuracy/mean"] == 0.0  # every answer wrong
        assert record["rewards/DistinctCharacters/std"] > 0  # the answers differ beside the answer
        assert record["frac_reward_zero_std"] == 1.0, record  # and no group counts as one that teaches
    assert f"groups without reward spread (no gradient): 100% of the trained groups, over {STEPS} steps" in (
        result.stderr
    )


def test_the_smoke_data_is_gym_rows_with_a_disjoint_held_out_split(gym_smoke):
    out, _ = gym_smoke
    args = json.loads((newest_checkpoint(out).parent / "args.json").read_text())
    train, held_out = (Path(args[key][0]) for key in ("dataset", "val_dataset"))
    rows = [json.loads(line) for line in train.read_text().splitlines()]
    held = [json.loads(line) for line in held_out.read_text().splitlines()]
    assert (len(rows), len(held)) == (64, 16)
    assert {row["gym_dataset"] for row in rows + held} == {"basic_arithmetic"}
    assert not {row["question"] for row in rows} & {row["question"] for row in held}


def test_evaluate_scores_the_checkpoint_as_gym_score_does(gym_smoke, tmp_path):
    out, _ = gym_smoke
    checkpoint = newest_checkpoint(out)
    held_out = Path(json.loads((checkpoint.parent / "args.json").read_text())["val_dataset"][0])
    run = run_real([sys.executable, "-m", "swift_plugins", "evaluate", str(checkpoint), "--task",
                    "gym:basic_arithmetic", "--data", str(held_out), "--out", str(tmp_path / "eval"),
                    "--backend", "transformers", "--max-new-tokens", "16", "--quiet"], cwd=REPO)  # fmt: skip
    assert run.returncode == 0, run.stderr[-3000:]
    examples = [json.loads(line) for line in (tmp_path / "eval" / "examples.jsonl").read_text().splitlines()]
    assert len(examples) == 16 and {example["dataset"] for example in examples} == {"basic_arithmetic"}
    results = [json.loads(line) for line in (tmp_path / "eval" / "results.jsonl").read_text().splitlines()]
    completions = tmp_path / "completions.jsonl"
    completions.write_text("".join(json.dumps({"completion": row["response"]}) + "\n" for row in results))
    scored = subprocess.run([sys.executable, "-m", "swift_plugins", "gym", "score", str(held_out), str(completions)],
                            cwd=REPO, capture_output=True, text=True, timeout=300)  # fmt: skip
    rewards = [json.loads(line)["reward"] for line in scored.stdout.splitlines()]
    assert rewards == [example["score"] for example in examples]
