"""End to end on CPU: colocate GRPO with vLLM's CPU build, through the plugin, via the CPU smoke recipe.

The tests run ``shell/countdown_cpu_smoke.sh`` once: the tiny model, generated puzzles, real ``swift rlhf
--rlhf_type grpo`` with vLLM colocated in the trainer, evaluation on the held-out split, a checkpoint every step,
the plot. A test-only plugin (``tests/plugins/sync_probe.py``) records vLLM's greedy answers to fixed prompts after
every weight sync and adds two rewards: one scoring each row's own solution (1.0 only if swift hands the rewards
each row's ``nums``/``target``), one that varies between the random model's completions so that the updates (at
a high learning rate) really change the model. The sync is real when vLLM's answers after each sync are those
of the checkpoint the trainer saved at that step, computed apart by transformers, and change as training goes.
"""

import json
from pathlib import Path

import pytest

from swift_plugins.core.think_answer import think_answer_format_reward
from swift_plugins.countdown.data import prompt_for, read_rows
from swift_plugins.countdown.rewards import countdown_accuracy_reward
from swift_plugins.integration import old_policy
from swift_plugins.tools.plot import read_steps
from swift_plugins.watch.checkpoints import newest_checkpoint

from ..helpers import assert_answers_follow_the_checkpoints, run_cpu_smoke

pytestmark = [pytest.mark.e2e, pytest.mark.stack, pytest.mark.vllm]

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
REWARD_KEYS = ("rewards/CountdownAccuracy/mean", "rewards/ThinkAnswerFormat/mean", "rewards/CountdownProbe/mean")
STEPS = 3


@pytest.fixture(scope="module")
def smoke_run(repo, tmp_path_factory):
    """The CPU smoke recipe for 3 steps at lr 1e-2 and beta 0 (no reference model, so the old policy's forward is
    skipped; the other recipe runs keep the recipe's beta) with the probe plugin, a checkpoint each step, one
    evaluation; its rows selected first (2 answers each; the random model solves none, so the band 0-1 keeps them
    all) and ms-swift's dynamic sampling on. DYNAMIC_SAMPLE alone would weigh the accuracy reward only (always 0 for
    the random model: no update); distinct_characters is weighed too, so that the updates change the model."""
    out = tmp_path_factory.mktemp("cpu_smoke")
    result = run_cpu_smoke(
        out, "--reward_funcs", "external_countdown", "think_answer_format", "countdown_probe", "distinct_characters",
        "--reward_weights", "1", "0", "0", "1", "--max_completion_length", "24", "--learning_rate", "1e-2",
        "--beta", "0", "--max_steps", str(STEPS), "--save_steps", "1",
        "--eval_steps", str(STEPS), SELECT_SAMPLES="2", SELECT_BAND="0-1", DYNAMIC_SAMPLE="1",
    )  # fmt: skip
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    checkpoint = newest_checkpoint(out)
    assert checkpoint is not None and checkpoint.name == f"checkpoint-{STEPS}", result.stderr[-2000:]
    return {"out": out, "run": checkpoint.parent, "stdout": result.stdout, "stderr": result.stderr}


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_the_run_trains_on_the_selected_rows_with_dynamic_sampling(smoke_run):
    out, args = smoke_run["out"], json.loads((smoke_run["run"] / "args.json").read_text())
    selection = json.loads((out / "selected.jsonl.selection.json").read_text())
    candidates = len((out / "smoke" / "data" / "train.jsonl").read_text().splitlines())
    assert (selection["candidates"], selection["kept"]) == (candidates, candidates)
    assert selection["completions"] == 2 * candidates
    assert len((out / "selected.jsonl").read_text().splitlines()) == candidates
    assert args["dataset"] == [str(out / "selected.jsonl")]
    assert (args["dynamic_sample"], args["max_resample_times"]) == (True, 1)
    assert args["reward_weights"] == [1.0, 0.0, 0.0, 1.0]
    assert "groups without reward spread (no gradient): " in smoke_run["stderr"]
    # the user's weights weigh another reward than the answer: said before the run; the end counts the fallbacks
    assert "gives distinct_characters weight with DYNAMIC_SAMPLE" in smoke_run["stderr"]
    fallbacks = smoke_run["stdout"].count("There are still std=0 groups present after")  # the trainer's log
    assert (f"dynamic sampling: {fallbacks} of {STEPS} steps trained their batch as drawn, groups without spread "
            "included (1 resampling did not replace them)") in smoke_run["stderr"]  # fmt: skip


def test_the_trainer_skips_the_old_policys_forward_as_each_generation_is_trained_once(smoke_run):
    # one update per generation and beta 0: the plugin's old_policy adaptation leaves the loss's ratio at 1
    assert old_policy.SKIPPED in smoke_run["stdout"] + smoke_run["stderr"]


def test_the_run_trains_with_vllm_colocated_and_says_what_it_showed(smoke_run):
    run = smoke_run["run"]
    args = json.loads((run / "args.json").read_text())
    assert (args["use_vllm"], args["vllm_mode"], args["torch_dtype"]) == (True, "colocate", "float32")
    for step in range(1, STEPS + 1):
        assert (run / f"checkpoint-{step}" / "model.safetensors").stat().st_size > 1_000_000
    png = run / "curves.png"
    assert png.read_bytes().startswith(PNG_MAGIC)
    assert "SMOKE passed" in smoke_run["stderr"] and str(png) in smoke_run["stderr"]
    assert "vLLM ran inside the trainer on the CPU" in smoke_run["stderr"]


def test_every_step_logs_the_package_rewards(smoke_run):
    steps = read_steps(smoke_run["run"] / "logging.jsonl")
    assert [record["step"] for record in steps] == list(range(1, STEPS + 1))
    for record in steps:
        for key in REWARD_KEYS:
            assert isinstance(record[key], float), (key, record)
        assert record["rewards/CountdownProbe/mean"] == 1.0  # each row's nums/target reached its reward


def test_logged_completions_rescore_against_the_dataset_rows(smoke_run):
    """Every logged table (training steps and held-out evaluations) rescores against its file's rows."""
    args = json.loads((smoke_run["run"] / "args.json").read_text())
    per_step = args["per_device_train_batch_size"] * args["gradient_accumulation_steps"]
    files = {"train": args["dataset"][0], "eval": args["val_dataset"][0]}
    by_prompt = {
        prompt_for(row["nums"], row["target"]): (split, row)
        for split, path in files.items()
        for _, row in read_rows(Path(path))
    }
    logged = read_jsonl(smoke_run["run"] / "completions.jsonl")
    # swift 4.6 writes the last table twice: its log() at the end of training (the train_runtime summary)
    # appends the completions buffer again, unchanged.
    assert logged[-1] == logged[-2]
    train_steps = []
    for table in logged[:-1]:
        splits = set()
        for i, (prompt, completion) in enumerate(zip(table["prompt"], table["completion"], strict=True)):
            ((split, row),) = [found for text, found in by_prompt.items() if text in prompt]  # exactly one row
            splits.add(split)
            assert table["solution"][i] == row["solution"]
            assert (
                table["CountdownAccuracy"][i]
                == countdown_accuracy_reward([completion], [row["nums"]], [row["target"]])[0]
            )
            assert table["ThinkAnswerFormat"][i] == think_answer_format_reward([completion])[0]
            assert table["CountdownProbe"][i] == 1.0
        (split,) = splits  # a table is one training step or one evaluation
        if split == "train":
            assert table["step"] == [table["step"][0]] * per_step
            train_steps.append(int(table["step"][0]))
    assert train_steps == list(range(1, STEPS + 1))


def test_vllm_answers_with_the_weights_the_trainer_saved_after_every_sync(smoke_run, repo):
    records = {record["step"]: record["answers"] for record in read_jsonl(smoke_run["out"] / "sync_probe.jsonl")}
    assert set(range(STEPS)) <= set(records)  # a sync before each step's generation, from step 0
    assert_answers_follow_the_checkpoints(records, smoke_run["run"], smoke_run["out"] / "smoke" / "model")
