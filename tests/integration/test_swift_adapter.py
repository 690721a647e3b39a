"""The ms-swift side, with the real swift: plugin loading, registered rewards, dataset loading."""

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from swift.dataset import load_dataset
from swift.dataset.dataset_syntax import DatasetSyntax
from swift.rewards import orms

from swift_plugins.core.think_answer import think_answer_format_reward
from swift_plugins.countdown.data import HUB_IDS, DataError
from swift_plugins.countdown.rewards import countdown_accuracy_reward
from swift_plugins.integration.swift_adapter import preprocessor_class, register_spec_files
from swift_plugins.tasks import task_named

from ..countdown.test_rewards import ACCEPTED, FORMAT_CASES, REJECTED

pytestmark = pytest.mark.stack  # swift, transformers or vLLM of this venv

SPEC = task_named("countdown")
CountdownPreprocessor = preprocessor_class(SPEC.data)


def register_files(values):
    return register_spec_files(SPEC, values)


def test_rewards_are_registered_under_their_names(plugin):
    for name in (
        "external_countdown",
        "countdown_shaped",
        "think_answer_format",
        "think_answer_format_think_in_prompt",
    ):
        assert name in orms


def test_registered_accuracy_reward_matches_the_pure_function(plugin):
    cases = [case[1:4] for case in ACCEPTED + REJECTED]
    completions, nums, targets = map(list, zip(*cases, strict=True))
    reward = orms["external_countdown"](args=None)
    scored = reward(completions, nums=nums, target=targets, trainer_state=None, is_truncated=[False] * len(cases))
    assert scored == countdown_accuracy_reward(completions, nums=nums, target=targets)
    assert scored == [1.0] * len(ACCEPTED) + [0.0] * len(REJECTED)


def test_registered_format_rewards_match_the_pure_function(plugin):
    for name, think_in_prompt in (("think_answer_format", False), ("think_answer_format_think_in_prompt", True)):
        completions = [case[0] for case in FORMAT_CASES]
        scored = orms[name](args=None)(completions, nums=[[1]] * len(completions))
        assert scored == think_answer_format_reward(completions, think_in_prompt=think_in_prompt)
    assert orms["think_answer_format"].__name__ == "ThinkAnswerFormat"  # logged as rewards/ThinkAnswerFormat/mean


@pytest.mark.parametrize("use_hf", [False, True])
def test_hub_ids_use_the_countdown_preprocessor(plugin, use_hf):
    hub_id = HUB_IDS[use_hf]
    meta = DatasetSyntax.parse(f"{hub_id}#50000").get_dataset_meta(use_hf)
    assert isinstance(meta.preprocess_func, CountdownPreprocessor)


def _load(path):
    register_files([str(path)])
    dataset, _ = load_dataset([f"{path}#8"], remove_unused_columns=False, load_from_cache_file=False)
    return dataset


def test_generated_file_loads_with_prompt_nums_and_target(plugin, countdown_jsonl, countdown_rows):
    dataset = _load(countdown_jsonl)
    assert len(dataset) == 8
    known = {(tuple(r["nums"]), r["target"]) for r in countdown_rows}
    for row in dataset:
        assert (tuple(row["nums"]), row["target"]) in known
        assert all(type(n) is int for n in row["nums"]) and type(row["target"]) is int
        (message,) = row["messages"]
        assert message["role"] == "user"
        assert f"Using the numbers {row['nums']}, create an equation that equals {row['target']}." in message["content"]


def test_downloaded_hub_copy_loads_as_parquet_file_and_folder(plugin, tmp_path, countdown_rows):
    copy = tmp_path / "Countdown-Tasks-3to4"  # the layout of the hub repository
    (copy / "data").mkdir(parents=True)
    (copy / "README.md").write_text("---\nlicense: apache-2.0\n---\n")
    table = pa.table({"target": [r["target"] for r in countdown_rows], "nums": [r["nums"] for r in countdown_rows]})
    parquet = copy / "data" / "train-00000-of-00001.parquet"
    pq.write_table(table, parquet)
    for path in (parquet, copy):
        dataset = _load(path)
        assert set(dataset.column_names) >= {"messages", "nums", "target"}
        assert len(dataset) == 8


def test_relative_path_loads_as_given_on_the_command_line(plugin, countdown_jsonl, monkeypatch):
    monkeypatch.chdir(countdown_jsonl.parent)
    dataset = _load(countdown_jsonl.name)
    assert set(dataset.column_names) >= {"messages", "nums", "target"} and len(dataset) == 8


def test_missing_file_fails_clearly(plugin, tmp_path):
    with pytest.raises(DataError, match="no such file"):
        register_files([str(tmp_path / "missing.jsonl")])


def test_malformed_row_fails_naming_the_row(plugin, tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps({"nums": [1, 2], "target": 3}) + "\n" + json.dumps({"nums": "x", "target": 3}) + "\n")
    with pytest.raises(DataError, match=r"bad.jsonl: row 1: nums must be a non-empty list of integers"):
        _load(path)


def test_file_without_target_fails_naming_the_column(plugin, tmp_path):
    path = tmp_path / "no_target.jsonl"
    path.write_text(json.dumps({"nums": [1, 2], "answer": 3}) + "\n")
    with pytest.raises(DataError, match="missing \\['target'\\]"):
        _load(path)
