"""The gym task: reasoning-gym's datasets as rows and back, seeded splits, settings, a reward that cannot hang."""

import json
import logging
import os
import subprocess
import sys
import time

import pytest
from reasoning_gym import create_dataset

from swift_plugins.core.errors import DataError, SettingError
from swift_plugins.gym import rewards
from swift_plugins.gym.bounded import ScorePool, request
from swift_plugins.gym.data import GYM, NO_GOLD, entry_of
from swift_plugins.gym.entries import decode, encode
from swift_plugins.gym.generator import dataset_names, describe, generate
from swift_plugins.gym.scoring import samples_from_rows, score_samples
from swift_plugins.gym.settings import parse_settings
from swift_plugins.tasks import task_named
from swift_plugins.tools.evaluate import with_data_columns

from ..helpers import REPO, settings


@pytest.fixture(scope="module")
def countdown_row():
    return generate("countdown", size=1, seed=0).train[0]


@pytest.fixture(scope="module")
def polynomial_row():  # its scorer hangs on 9**9**9
    return generate("polynomial_multiplication", size=1, seed=0).train[0]


def tagged(answer: str) -> str:
    return f"<think>…</think><answer>{answer}</answer>"


def test_every_dataset_entry_survives_the_data_file_exactly():
    for name in dataset_names():
        dataset = create_dataset(name, size=2, seed=5)
        for entry in dataset:
            assert (entry["answer"] is None) == (name in NO_GOLD), name
            metadata = decode(json.loads(json.dumps(encode(entry["metadata"]))))
            assert metadata == entry["metadata"], name
            rebuilt = {**entry, "metadata": metadata}
            assert dataset.score_answer(entry["answer"], rebuilt) == dataset.score_answer(entry["answer"], entry)


def test_arc_grids_stay_tuples_so_the_gold_answer_scores_1():
    [row] = generate("arc_agi", size=1, seed=0).train
    entry = entry_of(row["question"], row["answer"], row["metadata"])
    assert create_dataset("arc_agi").score_answer(row["answer"], entry) == 1.0
    assert create_dataset("arc_agi").score_answer(row["answer"], json.loads(json.dumps(entry))) == 0.05


def test_settings_are_fields_of_the_datasets_config():
    with pytest.raises(SettingError, match="has no setting 'terms'; its settings: min_terms, max_terms"):
        parse_settings("basic_arithmetic", ["terms=3"])
    with pytest.raises(SettingError, match="seed is set by --seed"):
        parse_settings("basic_arithmetic", ["seed=3"])
    with pytest.raises(SettingError, match="max_terms must be >= min_terms"):
        generate("basic_arithmetic", size=1, settings={"max_terms": 0})


def test_the_registry_serves_every_dataset_by_name():
    spec = task_named("gym:basic_arithmetic")
    assert spec.name == "gym:basic_arithmetic" and spec.data is GYM
    assert spec.accuracy_reward.name == "external_gym" and spec.preset.smoke_data[:4] == (
        "swift_plugins", "gym", "generate", "basic_arithmetic")  # fmt: skip
    with pytest.raises(SettingError, match="gym:countdwn is not a reasoning-gym dataset; closest: countdown"):
        task_named("gym:countdwn")
    with pytest.raises(SettingError, match="composite is not served"):
        task_named("gym:composite")
    assert all(describe(name) for name in dataset_names()) and len(dataset_names()) >= 100


def test_the_hanging_power_scores_0_within_the_bound(polynomial_row):
    # a polynomial's scorer does not return on 9**9**9 (sympy computes the big-integer power in C)
    with ScorePool(workers=1, timeout=0.5) as pool:
        start = time.monotonic()
        name = "polynomial_multiplication"
        hung, gold = pool.score([request(name, "9**9**9", polynomial_row),
                                 request(name, polynomial_row["answer"], polynomial_row)])  # fmt: skip
        assert time.monotonic() - start < 30  # the worker's start and restart (about 1 s each, more under load)
        assert (hung.score, hung.failure) == (0.0, "timeout") and 0.5 <= hung.seconds < 5.0  # 0.5 CPU seconds
        assert (gold.score, gold.failure) == (1.0, None)  # the replaced worker scores the next one


def test_a_scorer_that_raises_scores_0_and_the_pool_is_reused(countdown_row):
    [row] = generate("complex_arithmetic", size=1, seed=0).train
    broken = {**row, "metadata": "{}"}  # its scorer reads metadata["result"], for the gold answer too
    with ScorePool(workers=2, timeout=2.0) as pool:
        first = pool.score([request("complex_arithmetic", row["answer"], broken)] * 2)
        pids = [worker.process.pid for worker in pool.workers]
        again = pool.score([request("countdown", countdown_row["answer"], countdown_row)] * 6)
        assert [worker.process.pid for worker in pool.workers] == pids and len(pids) == 2
    assert [(outcome.score, outcome.failure) for outcome in first] == [(0.0, "error: KeyError: 'result'")] * 2
    assert [outcome.score for outcome in again] == [1.0] * 6
    with ScorePool(workers=1, timeout=2.0) as pool:
        [outcome] = pool.score([request("no_such_dataset", "1", countdown_row)])
    assert (outcome.score, outcome.failure) == (0.0, "guarded: no_such_dataset was not audited (reasoning-gym 0.1.25)")


def test_the_reward_counts_its_failures_in_one_warning(polynomial_row, caplog, monkeypatch):
    monkeypatch.setenv("GYM_SCORE_TIMEOUT", "0.5")
    monkeypatch.setattr(rewards, "_POOL", None)
    columns = {key: [value] * 4 for key, value in polynomial_row.items()}
    completions = [tagged("9**9**9"), tagged(polynomial_row["answer"]), "no tags", None]
    with caplog.at_level(logging.WARNING, logger=rewards.__name__):
        scores = rewards.gym_accuracy_reward(completions, **columns)
    rewards.shared_pool().close()
    monkeypatch.setattr(rewards, "_POOL", None)
    assert scores == [0.0, 1.0, 0.0, 0.0]
    assert [record.getMessage() for record in caplog.records] == [
        "external_gym: 1 timeout of 4 completions scored 0 (first: timeout)"
    ]


def test_evaluate_scores_result_rows_with_the_reward(polynomial_row):
    responses = [tagged(polynomial_row["answer"]), tagged("1 + 2"), "nothing", tagged("9**9**9")]
    rows = [(f"r:{n}", {**polynomial_row, "response": text}) for n, text in enumerate(responses)]
    report = score_samples(samples_from_rows(rows))
    assert report["accuracy"] == 0.25
    assert report["by_dataset"] == {"polynomial_multiplication": {"samples": 4, "accuracy": 0.25}}
    assert report["failures"] == {"wrong": 1, "no answer": 1, "timeout": 1}
    with pytest.raises(DataError, match="r:0: Gym data needs columns"):
        samples_from_rows([("r:0", {"response": "x", "question": "q"})])


def test_evaluate_puts_the_gym_columns_back_in_swift_infers_rows(tmp_path, countdown_row):
    # swift infer writes messages and the response, not the data's other columns
    data = tmp_path / "held.jsonl"
    data.write_text(json.dumps(countdown_row) + "\n")
    prompt = GYM.prepare(countdown_row, "held.jsonl:1")["messages"]
    result = {"messages": [*prompt, {"role": "assistant", "content": "x"}], "response": tagged(countdown_row["answer"])}
    spec = task_named("gym:countdown")
    [sample] = samples_from_rows(with_data_columns([("r:1", result)], data, spec.result_columns))
    assert (sample.verdict, sample.score, sample.formatted) == ("correct", 1.0, True)
    other = {**countdown_row, "question": "another question"}
    with pytest.raises(DataError, match="r:1: its prompt does not ask this row's question"):
        samples_from_rows([("r:1", {**result, **other})])


def run_cli(*argv, cwd=None):
    return subprocess.run([sys.executable, "-m", "swift_plugins", *argv], capture_output=True, text=True,
                          cwd=cwd or REPO, timeout=120)  # fmt: skip


def test_the_command_line_generates_and_scores_as_the_trainer(tmp_path):
    data = tmp_path / "gym.jsonl"
    result = run_cli("gym", "generate", "polynomial_multiplication", "--size", "3", "--test-size", "2", "--out",
                     str(data), "min_polynomials=2", "max_polynomials=2")  # fmt: skip
    assert result.returncode == 0, result.stderr
    rows = [json.loads(line) for line in data.read_text().splitlines()]
    assert len(rows) == 3 and len((tmp_path / "gym.test.jsonl").read_text().splitlines()) == 2
    completions = [tagged(rows[0]["answer"]), tagged("9**9**9"), "no answer"]
    (tmp_path / "c.jsonl").write_text("".join(json.dumps({"completion": c}) + "\n" for c in completions))
    result = run_cli("gym", "score", str(data), str(tmp_path / "c.jsonl"))
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert [(line["row"], line["reward"]) for line in lines] == [(0, 1.0), (1, 0.0), (2, 0.0)]
    assert lines[1]["failure"] == "timeout" and lines[1]["seconds"] >= 1.0
    refused = run_cli("gym", "generate", "polynomial_multiplication", "--size", "3", "--out", str(data), "colour=red")
    assert refused.returncode == 2 and len(refused.stderr.strip().splitlines()) == 1
    assert "gym:polynomial_multiplication has no setting 'colour'" in refused.stderr


def test_gym_list_names_every_dataset():
    result = run_cli("gym", "list")
    assert [line.split()[0] for line in result.stdout.splitlines()] == dataset_names()


def test_the_gym_recipes_need_a_gym_task():
    s = settings("gym_1gpu", TASK="gym:basic_arithmetic")
    assert (s.task.name, s.dataset, s.layout.name) == ("gym:basic_arithmetic", "data/gym-basic_arithmetic.jsonl",
                                                       "colocate")  # fmt: skip
    assert settings("countdown_multinode", TASK="gym:maze", ROLE="train", ROLLOUT_HOST="h").task.name == "gym:maze"
    with pytest.raises(SettingError, match=r"gym_3gpu needs TASK=gym:<name>, got TASK='countdown'"):
        settings("gym_3gpu", TASK="countdown")
    assert settings("gym_cpu_smoke", TASK="gym:maze").smoke


@pytest.mark.stack
def test_the_plugin_loads_gym_files_with_the_gym_preprocessor(tmp_path):
    # GSM8K's adapter also claims files with question and answer columns: the gym registration must win
    data = tmp_path / "gym.jsonl"
    train = generate("basic_arithmetic", size=4, seed=0).train
    data.write_text("".join(json.dumps(row) + "\n" for row in train))
    program = (
        "import sys, runpy\n"
        f"sys.argv = ['swift', 'rlhf', '--dataset', {str(data)!r}]\n"
        f"runpy.run_path({str(REPO / 'swift_plugins' / 'plugin.py')!r})\n"
        "from swift.dataset import load_dataset\n"
        "from swift.rewards import orms\n"
        f"train, _ = load_dataset([{str(data)!r}], remove_unused_columns=False)\n"
        "print(orms['external_gym'].__name__, train[0]['messages'][0]['content'].splitlines()[0], train[0]['answer'])"
    )
    result = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=300,
                            env={**os.environ, "PYTHONPATH": str(REPO)})  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip().splitlines()[-1] == f"GymAccuracy {train[0]['question']} {train[0]['answer']}"
