"""GSM8K data with the real swift: hub ids, local files in every format, the hub layout, bad rows."""

import json
import shutil

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from swift.dataset import load_dataset
from swift.dataset.dataset_syntax import DatasetSyntax
from swift.rewards import orms

from swift_plugins.core.errors import DataError
from swift_plugins.core.files import read_rows
from swift_plugins.gsm8k.data import HUB_IDS, SYSTEM_PROMPT, plain_number
from swift_plugins.integration.swift_adapter import preprocessor_class, register_spec_files
from swift_plugins.tasks import task_named

pytestmark = pytest.mark.stack  # swift, transformers or vLLM of this venv

SPEC = task_named("gsm8k")
Gsm8kPreprocessor = preprocessor_class(SPEC.data)


def register_files(values):
    return register_spec_files(SPEC, values)

FIXTURES = "tests/fixtures/gsm8k"
FINAL_ANSWERS = ["24", "1000", "4690", "-5", "10.5", "17", "10", "80"]  # of train.jsonl, read by hand


@pytest.fixture
def train_rows(repo):
    return [row for _, row in read_rows(repo / FIXTURES / "train.jsonl")]


def _load(path):
    register_files([str(path)])
    dataset, _ = load_dataset([str(path)], remove_unused_columns=False, load_from_cache_file=False)
    return dataset


def _check_prepared(dataset, rows):
    by_question = {row["question"]: row for row in rows}
    for row in dataset:
        source = by_question[row["question"]]
        assert row["answer"] == source["answer"]
        system, user, assistant = row["messages"]
        assert (system["role"], system["content"]) == ("system", SYSTEM_PROMPT)
        assert (user["role"], user["content"]) == ("user", source["question"])
        assert (assistant["role"], assistant["content"]) == ("assistant", source["answer"])
    return {row["question"]: row["final_answer"] for row in dataset}


def test_rewards_are_registered_under_their_names(plugin):
    for name, log_name in (
        ("gsm8k_accuracy", "Gsm8kAccuracy"),
        ("reasoning_answer_format", "ReasoningAnswerFormat"),
        ("answer_tag", "AnswerTag"),
        ("answer_tag_strict", "AnswerTagStrict"),
    ):
        assert orms[name].__name__ == log_name


def test_registered_rewards_score_real_completions(plugin):
    completions = ["<reasoning>48 / 2 = 24</reasoning>\n<answer>24</answer>", "<answer>$1,000</answer>", "1000"]
    columns = {"final_answer": ["24", "1000", "1000"], "trainer_state": None, "question": ["q"] * 3}
    assert orms["gsm8k_accuracy"](args=None)(completions, **columns) == [1.0, 1.0, 0.0]
    assert orms["reasoning_answer_format"](args=None)(completions, **columns) == [1.0, 0.0, 0.0]
    assert orms["answer_tag"](args=None)(completions, **columns) == [1.0, 1.0, 0.0]
    assert orms["answer_tag_strict"](args=None)(completions, **columns) == [0.0, 1.0, 0.0]


@pytest.mark.parametrize("use_hf", [False, True])
def test_hub_ids_use_the_gsm8k_preprocessor_with_config_main(plugin, use_hf):
    meta = DatasetSyntax.parse(f"{HUB_IDS[use_hf]}#1000").get_dataset_meta(use_hf)
    assert isinstance(meta.preprocess_func, Gsm8kPreprocessor)
    assert [subset.subset for subset in meta.subsets] == ["main"]


def test_local_jsonl_keeps_the_reference_number(plugin, repo, train_rows):
    finals = _check_prepared(_load(repo / FIXTURES / "train.jsonl"), train_rows)
    assert [finals[row["question"]] for row in train_rows] == FINAL_ANSWERS


def test_json_parquet_and_the_hub_layout_load_alike(plugin, tmp_path, train_rows):
    json_file = tmp_path / "train.json"
    json_file.write_text(json.dumps(train_rows))
    table = pa.table({"question": [r["question"] for r in train_rows], "answer": [r["answer"] for r in train_rows]})
    parquet = tmp_path / "train.parquet"
    pq.write_table(table, parquet)
    hub = tmp_path / "gsm8k"  # the layout of openai/gsm8k: one folder per config, a README naming them
    (hub / "main").mkdir(parents=True)
    pq.write_table(table, hub / "main" / "train-00000-of-00001.parquet")
    pq.write_table(table.slice(0, 2), hub / "main" / "test-00000-of-00001.parquet")
    (hub / "socratic").mkdir()
    pq.write_table(table.slice(0, 3), hub / "socratic" / "train-00000-of-00001.parquet")
    (hub / "README.md").write_text(
        "---\nconfigs:\n"
        "- config_name: main\n  data_files:\n  - split: train\n    path: main/train-*\n"
        "  - split: test\n    path: main/test-*\n"
        "- config_name: socratic\n  data_files:\n  - split: train\n    path: socratic/train-*\n"
        "---\n"
    )
    for path in (json_file, parquet, hub, hub / "main" / "train-00000-of-00001.parquet"):
        dataset = _load(path)
        assert len(dataset) == 8, path  # the main config's train split only
        assert sorted(_check_prepared(dataset, train_rows).values()) == sorted(FINAL_ANSWERS)


def test_a_folder_of_one_config_without_readme_loads(plugin, tmp_path, repo, train_rows):
    (tmp_path / "main").mkdir()
    shutil.copy(repo / FIXTURES / "train.jsonl", tmp_path / "main" / "train.jsonl")
    assert len(_load(tmp_path)) == 8


def test_a_folder_mixing_configs_without_readme_is_refused(plugin, tmp_path, repo):
    for config in ("main", "socratic"):
        (tmp_path / config).mkdir()
        shutil.copy(repo / FIXTURES / "train.jsonl", tmp_path / config / "train.jsonl")
    with pytest.raises(DataError, match="pass the subfolder or the file"):
        register_files([str(tmp_path)])


def test_a_row_without_final_answer_fails_naming_the_row(plugin, repo):
    with pytest.raises(DataError, match=r"no_final_answer.jsonl: row 1: the GSM8K answer has no '#### N'"):
        _load(repo / FIXTURES / "no_final_answer.jsonl")


def test_files_of_other_tasks_are_left_alone(plugin, tmp_path, countdown_jsonl):
    half = tmp_path / "questions.jsonl"
    half.write_text(json.dumps({"question": "q", "response": "r"}) + "\n")
    assert register_files([str(countdown_jsonl), str(half)]) == []
    with pytest.raises(DataError, match="no such file or folder"):
        register_files([str(tmp_path / "missing.jsonl")])


@pytest.mark.parametrize(("text", "plain"), [("72", "72"), ("-5", "-5"), ("10.50", "10.5"), ("0.125", "0.125")])
def test_plain_number_round_trips(text, plain):
    from fractions import Fraction

    assert plain_number(Fraction(text)) == plain
