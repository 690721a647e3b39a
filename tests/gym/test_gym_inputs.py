"""What a new user types and feeds the gym commands: typed settings, rows that cannot be scored, files that are not
UTF-8. Each is refused in one line before anything is scored or asked of a model, never a traceback."""

import json
import re
import subprocess
import sys

import pytest
from reasoning_gym import create_dataset

from swift_plugins.core.errors import DataError, SettingError
from swift_plugins.core.files import held_out_path, read_rows
from swift_plugins.gym.data import check_row
from swift_plugins.gym.generator import generate
from swift_plugins.gym.settings import check_config, parse_settings
from swift_plugins.tools.evaluate import check_data

from ..helpers import REPO


@pytest.fixture(scope="module")
def rows():
    return generate("basic_arithmetic", size=2, seed=0).train


def run_cli(*argv):
    return subprocess.run([sys.executable, "-m", "swift_plugins", *argv], capture_output=True, text=True, cwd=REPO,
                          timeout=120)  # fmt: skip


def refused_in_one_line(result, *parts):
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 2 and len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    assert all(part in lines[0] for part in parts), lines[0]
    return lines[0]


def write_jsonl(path, rows):
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def test_a_bool_setting_given_as_false_is_false():
    settings = parse_settings("basic_arithmetic", ["allow_parentheses=false"])
    train = generate("basic_arithmetic", size=200, seed=0, settings=settings).train
    assert settings == {"allow_parentheses": False} and not [row for row in train if "(" in row["question"]]
    assert parse_settings("basic_arithmetic", ["allow_parentheses=True", "allow_negation=FALSE"]) == {
        "allow_parentheses": True, "allow_negation": False}  # fmt: skip


@pytest.mark.parametrize(("pair", "why"), [
    ("format_style=bogus", "format_style='bogus' must be one of 'simple', 'natural'"),
    ("max_terms=2.5", "max_terms='2.5' must be a whole number"),
    ("max_terms=1e400", "max_terms='1e400' must be a whole number"),
    ("allow_parentheses=maybe", "allow_parentheses='maybe' must be true or false"),
    ("operators=+", "operators='+' must be a list"),
    ("operators={[1]: 2}", "operators='{[1]: 2}' must be a list"),  # a literal Python cannot build: text
])  # fmt: skip
def test_a_setting_of_the_wrong_type_is_refused_in_one_line(pair, why, tmp_path):
    with pytest.raises(SettingError, match=re.escape(why)):
        parse_settings("basic_arithmetic", [pair])
    result = run_cli("gym", "generate", "basic_arithmetic", "--size", "2", "--out", str(tmp_path / "x.jsonl"), pair)
    refused_in_one_line(result, why)
    assert not (tmp_path / "x.jsonl").exists()


def test_settings_of_other_types_coerce_and_those_a_file_cannot_carry_are_refused():
    assert parse_settings("rearc", ["rng_difficulty_ranges=[(0, 0.1)]", "diff_ub=0.3"]) == {
        "rng_difficulty_ranges": [(0.0, 0.1)], "diff_ub": 0.3}  # fmt: skip
    assert parse_settings("figlet_font", ["static_word=None"]) == {"static_word": None}
    assert parse_settings("intermediate_integration", ["symbols=('X',)"]) == {"symbols": ("X",)}
    with pytest.raises(SettingError, match="transformation='upper' cannot be set: a data file cannot carry"):
        parse_settings("word_sorting", ["transformation=upper"])
    with pytest.raises(SettingError, match="p_solvable='inf' must be a finite number"):
        parse_settings("binary_alternation", ["p_solvable=inf"])


def test_a_rows_settings_are_checked_strictly_and_by_reasoning_gym():
    check_config("basic_arithmetic", '{"allow_parentheses": false, "max_terms": 3}')
    for config, why in [('{"allow_parentheses": "false"}', "allow_parentheses='false' must be true or false"),
                        ('{"max_terms": 0}', "reasoning-gym refuses it: max_terms must be >= min_terms"),
                        ('{"colour": 1}', "'colour' is not a setting of basic_arithmetic")]:  # fmt: skip
        with pytest.raises(ValueError, match=why):
            check_config("basic_arithmetic", config)


@pytest.mark.parametrize(("change", "why"), [
    ({"gym_dataset": "basic_arithmatic"}, "gym:basic_arithmatic is not a reasoning-gym dataset; closest: basic_ari"),
    ({"gym_dataset": "composite"}, "gym:composite is not served"),
    ({"gym_config": '{"max_terms": 0}'}, "reasoning-gym refuses it: max_terms must be >= min_terms"),
    ({"answer": None}, "answer must be basic_arithmetic's gold answer (non-empty text: no answer can match an empty "
                       "one), got None"),
    ({"answer": 5}, "answer must be basic_arithmetic's gold answer (non-empty text"),
    ({"answer": ""}, "answer must be basic_arithmetic's gold answer (non-empty text"),
])  # fmt: skip
def test_a_row_that_cannot_be_scored_is_refused_before_scoring(change, why, rows, tmp_path):
    data = write_jsonl(tmp_path / "rows.jsonl", [rows[0], {**rows[1], **change}])
    completions = write_jsonl(tmp_path / "c.jsonl", [{"completion": "<answer>1</answer>"}] * 2)
    result = run_cli("gym", "score", str(data), str(completions))
    refused_in_one_line(result, f"{data}:2: ", why)
    assert result.stdout == ""  # not one row scored


def test_a_row_without_its_answer_column_is_refused_and_a_no_gold_dataset_needs_null(rows):
    without = {key: value for key, value in rows[0].items() if key != "answer"}
    with pytest.raises(DataError, match=r"rows.jsonl:1: answer must be basic_arithmetic's .*, got no answer column"):
        check_row(without, "rows.jsonl:1")
    [boxnet] = generate("boxnet", size=1, seed=0).train
    assert check_row(boxnet, "b:1")["answer"] is None
    with pytest.raises(DataError, match="b:1: answer must be null: boxnet has no gold answer"):
        check_row({**boxnet, "answer": "[]"}, "b:1")


def test_an_item_whose_gold_answer_is_empty_is_skipped_by_generate():
    [broken] = list(create_dataset("base_conversion", size=1, seed=1514))  # "convert the base-4 number  to base-10"
    assert broken["answer"] == "" and create_dataset("base_conversion").score_answer("", broken) == 0.0
    [row] = generate("base_conversion", size=1, seed=1514).train
    [following] = generate("base_conversion", size=1, seed=1515).train
    assert (row["question"], row["answer"]) == (following["question"], following["answer"]) and row["answer"]


def test_evaluate_refuses_rows_of_another_dataset_than_its_task_before_inference(rows, tmp_path):
    data = write_jsonl(tmp_path / "held.jsonl", rows)
    assert check_data("gym:basic_arithmetic", data) == 2
    with pytest.raises(DataError, match=r"held.jsonl:1: a gym:basic_arithmetic row, not one of --task gym:maze"):
        check_data("gym:maze", data)
    result = run_cli("evaluate", "no-such-model", "--task", "gym:maze", "--data", str(data), "--out",
                     str(tmp_path / "eval"))  # fmt: skip
    assert result.returncode == 2 and "Traceback" not in result.stderr and not (tmp_path / "eval").exists()


def test_files_that_are_not_utf8_are_refused_in_one_line(rows, tmp_path):
    data = write_jsonl(tmp_path / "rows.jsonl", rows)
    completions = tmp_path / "latin1.jsonl"
    completions.write_bytes(b'{"completion": "<answer>5</answer>"}\n{"completion": "caf\xe9"}\n')
    result = run_cli("gym", "score", str(data), str(completions))
    refused_in_one_line(result, f"{completions}:2: not UTF-8 text (byte 0xe9 at offset 19)")
    listed = tmp_path / "rows.json"
    listed.write_bytes(json.dumps(rows).encode().replace(b"Calculate", b"Calcul\xe9"))
    with pytest.raises(DataError, match=f"{listed}: not UTF-8 text"):
        list(read_rows(listed))


def test_generate_says_when_questions_repeat_and_where_the_held_out_rows_go(tmp_path):
    out = tmp_path / "hanoi.jsonl"
    result = run_cli("gym", "generate", "tower_of_hanoi", "--size", "200", "--test-size", "2", "--out", str(out))
    questions = [row["question"] for _, row in read_rows(out)]
    repeats = len(questions) - len(set(questions))
    assert repeats > 0 and result.stderr.strip() == (
        f"note: {repeats} of the 200 rows repeat a question ({len(set(questions))} distinct): gym:tower_of_hanoi "
        "draws from few questions at these settings")  # fmt: skip
    helped = run_cli("gym", "generate", "--help").stdout
    example = " ".join(helped.split()).partition("(x.jsonl: ")[2].partition(")")[0]
    assert example == held_out_path("x.jsonl").name and held_out_path(out).is_file()


def test_generate_names_an_answer_that_many_questions_share(tmp_path):
    # letter_counting's letter is one the text has: most of its short texts have it once
    out = tmp_path / "letters.jsonl"
    result = run_cli("gym", "generate", "letter_counting", "--size", "10", "--test-size", "100", "--out", str(out),
                     "min_words=3", "max_words=5")  # fmt: skip
    answers = [row["answer"] for _, row in read_rows(held_out_path(out))]
    ones = answers.count("1")
    assert ones >= 20 and result.stderr.strip() == (
        f"note: {ones} of the 100 held-out rows ({ones}%) have the gold answer '1': one answer to every question "
        "scores that much")  # fmt: skip
    legs = tmp_path / "legs.jsonl"
    summed = run_cli("gym", "generate", "leg_counting", "--size", "100", "--out", str(legs), "--quiet")
    assert (summed.returncode, summed.stdout, summed.stderr) == (0, "", "")
    quiet = run_cli("gym", "generate", "letter_counting", "--size", "10", "--test-size", "100", "--out",
                    str(tmp_path / "again.jsonl"), "min_words=3", "max_words=5", "--quiet")  # fmt: skip
    assert (quiet.stdout, quiet.stderr) == ("", result.stderr)  # the notes are printed with --quiet too
