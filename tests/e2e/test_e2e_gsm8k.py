"""End to end on CPU: a real ms-swift GRPO step on a local GSM8K-format file with the GSM8K rewards.

`swift rlhf --rlhf_type grpo` with the tiny model, `--external_plugins swift_plugins/plugin.py`,
`--dataset tests/fixtures/gsm8k/train.jsonl` and `--reward_funcs gsm8k_accuracy reasoning_answer_format`.
A test-only probe reward scores each row's own `final_answer` in an answer block with the package's
accuracy reward: it logs 1.0 only if swift hands the rewards each row's reference number. The step reports to
an offline wandb run (`--report_to wandb`), whose file must hold the rewards swift logged.
"""

import json
import os
import sys
import textwrap
from pathlib import Path

import pytest

from swift_plugins.core.files import read_rows
from swift_plugins.gsm8k.data import GSM8K
from swift_plugins.gsm8k.rewards import gsm8k_accuracy_reward, reasoning_answer_format_reward
from swift_plugins.gsm8k.scoring import load_samples, score_samples
from swift_plugins.tools.plot import read_steps

from ..helpers import run_real
from .wandb_file import history

# Not rerun in the GPU stacks: their trainer path is test_e2e_grpo's and their loading of GSM8K files
# test_gsm8k_data's, both run in every stack; what is left here is the package's own rewards, and wandb's logging
# (declared in the gpu and test extras), which swift's trainer drives alike in every stack.
pytestmark = pytest.mark.e2e
FIXTURES = Path("tests") / "fixtures" / "gsm8k"

PROBE_PLUGIN = '''
"""Test-only reward: each row's own reference number, in an answer block, scored by the accuracy reward."""
from swift.rewards import ORM, orms

from swift_plugins.gsm8k.rewards import gsm8k_accuracy_reward


class Gsm8kProbe(ORM):
    def __call__(self, completions, final_answer, **kwargs):
        return gsm8k_accuracy_reward([f"<answer>{f}</answer>" for f in final_answer], final_answer=final_answer)


orms["gsm8k_probe"] = Gsm8kProbe
'''


@pytest.fixture(scope="module")
def grpo_run(repo, tiny_model, tmp_path_factory):
    out = tmp_path_factory.mktemp("gsm8k_grpo")
    probe = out / "gsm8k_probe.py"
    probe.write_text(textwrap.dedent(PROBE_PLUGIN))
    command = [
        os.path.join(os.path.dirname(sys.executable), "swift"),
        "rlhf",
        "--rlhf_type", "grpo",
        "--model", str(tiny_model),
        "--model_type", "qwen2",
        "--template", "qwen2_5",
        "--check_model", "false",
        "--torch_dtype", "float32",
        "--fp16", "false",
        "--bf16", "false",
        "--external_plugins", str(repo / "swift_plugins" / "plugin.py"), str(probe),
        "--dataset", str(FIXTURES / "train.jsonl"),
        "--reward_funcs", "gsm8k_accuracy", "reasoning_answer_format", "gsm8k_probe",
        "--use_vllm", "false",
        "--tuner_type", "lora",
        "--num_generations", "4",
        "--per_device_train_batch_size", "4",
        "--max_completion_length", "24",
        "--max_steps", "1",
        "--logging_steps", "1",
        "--log_completions", "true",
        "--save_strategy", "no",
        "--report_to", "wandb",
        "--dataloader_num_workers", "0",
        "--output_dir", str(out / "run"),
    ]  # fmt: skip
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
           "WANDB_MODE": "offline", "WANDB_DIR": str(out)}  # fmt: skip
    result = run_real(command, cwd=repo, env=env)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    (run,) = sorted((out / "run").glob("v*-*"))
    return run


def test_the_step_logs_both_rewards_and_the_reference_reaches_them(grpo_run):
    (step,) = read_steps(grpo_run / "logging.jsonl")
    for key in ("rewards/Gsm8kAccuracy/mean", "rewards/ReasoningAnswerFormat/mean"):
        assert isinstance(step[key], float), (key, step)
    assert step["rewards/Gsm8kProbe/mean"] == 1.0  # every row's final_answer reached the rewards


def test_logged_completions_rescore_against_their_rows(repo, grpo_run):
    rows = {row["question"]: GSM8K.prepare(row, where) for where, row in read_rows(repo / FIXTURES / "train.jsonl")}
    tables = [json.loads(line) for line in Path(grpo_run / "completions.jsonl").read_text().splitlines()]
    scored = 0
    for i, (prompt, completion) in enumerate(zip(tables[0]["prompt"], tables[0]["completion"], strict=True)):
        (question,) = [q for q in rows if q in prompt]
        assert rows[question]["answer"] not in prompt  # the reference solution is never shown to the model
        final = rows[question]["final_answer"]
        assert tables[0]["Gsm8kAccuracy"][i] == gsm8k_accuracy_reward([completion], final_answer=[final])[0]
        assert tables[0]["ReasoningAnswerFormat"][i] == reasoning_answer_format_reward([completion])[0]
        scored += 1
    assert scored == 4


def test_the_step_reaches_the_offline_wandb_run_with_the_values_swift_logged(grpo_run):
    (offline_file,) = grpo_run.parent.parent.glob("wandb/offline-run-*/run-*.wandb")
    rewards = ("rewards/Gsm8kAccuracy/mean", "rewards/ReasoningAnswerFormat/mean", "rewards/Gsm8kProbe/mean")
    logged = [step for step in history(offline_file) if any(f"train/{key}" in step for key in rewards)]
    assert len(logged) == 1  # one GRPO step
    (swift_step,) = read_steps(grpo_run / "logging.jsonl")
    for key in rewards:  # the values swift logged for the step, as wandb recorded them
        assert logged[0][f"train/{key}"] == pytest.approx(swift_step[key])


@pytest.fixture(scope="module")
def infer_results(repo, tiny_model, tmp_path_factory):
    """`swift infer` of the tiny model on the GSM8K test fixture, as the README's evaluation recipe runs it."""
    out = tmp_path_factory.mktemp("gsm8k_infer") / "results.jsonl"
    command = [
        os.path.join(os.path.dirname(sys.executable), "swift"),
        "infer",
        "--model", str(tiny_model),
        "--model_type", "qwen2",
        "--template", "qwen2_5",
        "--torch_dtype", "float32",
        "--external_plugins", str(repo / "swift_plugins" / "plugin.py"),
        "--val_dataset", str(FIXTURES / "test.jsonl"),
        "--infer_backend", "transformers",
        "--max_new_tokens", "16",
        "--result_path", str(out),
    ]  # fmt: skip
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "MODELSCOPE_OFFLINE": "1"}
    result = run_real(command, cwd=repo, env=env)
    assert result.returncode == 0, result.stderr[-3000:]
    return out


def test_real_infer_results_carry_the_reference_and_score(repo, infer_results, tmp_path):
    rows = [json.loads(line) for line in infer_results.read_text().splitlines()]
    references = {row["question"]: row["answer"] for _, row in read_rows(repo / FIXTURES / "test.jsonl")}
    assert [row["labels"] for row in rows] == [references[row["messages"][1]["content"]] for row in rows]
    assert score_samples(load_samples([infer_results]))["accuracy"] == 0.0  # a random model
    (pages,) = [row for row in rows if row["labels"].endswith("#### 168")]
    pages["response"] = "<reasoning>\n12 * 14 = 168\n</reasoning>\n<answer>\n168\n</answer>\n#### 168"
    edited = tmp_path / "edited.jsonl"
    edited.write_text("".join(json.dumps(row) + "\n" for row in rows))
    report = score_samples(load_samples([edited]))
    assert report["accuracy"] == report["lm_eval_strict_match"] == round(1 / len(rows), 4)
