"""Scoring result files: every figure of the report on hand-made results with known answers."""

import itertools
import json
import subprocess
import sys
from types import SimpleNamespace as S

import pytest

from swift_plugins.core.intervals import wilson
from swift_plugins.core.scoring import pass_at_k, summarise
from swift_plugins.countdown.data import DataError
from swift_plugins.countdown.scoring import load_samples, score_samples

GOOD = "<think>ok</think>\n<answer>(6 - 2) * 6 = 24</answer>\n"


def prompt(nums, target):
    return [
        {"role": "system", "content": "You are a helpful assistant."},
        {"role": "user", "content": f"Using the numbers {nums}, create an equation that equals {target}.\n..."},
        {"role": "assistant", "content": "..."},
    ]


def write(path, rows):
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


@pytest.fixture
def two_samples(tmp_path):
    """Two sample files over three puzzles, with a known verdict for each response."""
    first = write(
        tmp_path / "sample1.jsonl",
        [
            {"response": GOOD, "nums": [6, 2, 6], "target": 24},  # correct
            {"response": "<think>a</think><answer>1 + 2 + 3 + 4</answer>", "nums": [1, 2, 3, 4], "target": 24},  # wrong
            {"response": "<think>a</think><answer>50 * 2</answer>", "messages": prompt([50, 2, 1], 101)},  # numbers
        ],
    )
    second = write(
        tmp_path / "sample2.jsonl",
        [
            {"response": "<think>a</think><answer>6 * 6 - 2 ** 3</answer>", "nums": [6, 2, 6], "target": 24},  # syntax
            {
                "response": "<think>a</think><answer>1 * 2 * 3 * 4</answer>",
                "nums": [1, 2, 3, 4],
                "target": 24,
            },  # correct
            {"response": "<think>let me think about 50 and", "messages": prompt([50, 2, 1], 101)},  # truncated
        ],
    )
    return [first, second]


def test_report_figures(two_samples):
    report = score_samples(load_samples(two_samples))
    assert report["samples"] == 6 and report["puzzles"] == 3 and report["samples_per_puzzle"] == 2
    assert report["accuracy"] == round(2 / 6, 4)
    assert report["format_rate"] == round(5 / 6, 4)
    assert report["truncation_rate"] == round(1 / 6, 4)
    # pass@1 averages per-puzzle accuracy (1/2, 1/2, 0); pass@2: two puzzles solved at least once.
    assert report["pass_at_k"] == {"1": round(1 / 3, 4), "2": round(2 / 3, 4)}
    assert report["accuracy_by_count"] == {"3": {"samples": 4, "accuracy": 0.25}, "4": {"samples": 2, "accuracy": 0.5}}
    assert report["accuracy_by_target"] == {
        "10-24": {"samples": 4, "accuracy": 0.5},
        "100+": {"samples": 2, "accuracy": 0.0},
    }
    assert report["failures"] == {"wrong value": 1, "wrong numbers": 1, "illegal syntax": 1, "no answer": 1}


def test_pass_at_k_estimator():
    assert pass_at_k(4, 0, 2) == 0.0
    assert pass_at_k(4, 1, 1) == 0.25
    assert pass_at_k(4, 1, 2) == 0.5  # 1 - C(3,2)/C(4,2)
    assert pass_at_k(4, 3, 2) == 1.0


def test_think_in_prompt_changes_the_format_rate(tmp_path):
    path = write(
        tmp_path / "r.jsonl", [{"response": "reasoning</think><answer>1 + 2</answer>", "nums": [1, 2], "target": 3}]
    )
    assert score_samples(load_samples([path]))["format_rate"] == 0.0
    assert score_samples(load_samples([path], think_in_prompt=True))["format_rate"] == 1.0


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{"response": "x", "nums": [1, 2], "target": 3', r"r.jsonl:2: not valid JSON"),
        ('{"nums": [1, 2], "target": 3}', r"r.jsonl:2: no 'response' text"),
        ('{"response": "x", "messages": [{"role": "user", "content": "hi"}]}', r"r.jsonl:2: no nums/target columns"),
        ('{"response": "x", "nums": "[1, 2]", "target": 3}', r"r.jsonl:2: nums must be a non-empty list"),
        ("[1, 2]", r"r.jsonl:2: a row must be a JSON object"),
    ],
)
def test_malformed_result_files_name_the_line(tmp_path, line, message):
    path = tmp_path / "r.jsonl"
    path.write_text(json.dumps({"response": GOOD, "nums": [6, 2, 6], "target": 24}) + "\n" + line + "\n")
    with pytest.raises(DataError, match=message):
        load_samples([path])


def test_score_command_writes_report_and_per_example_file(two_samples, tmp_path):
    per_example = tmp_path / "examples.jsonl"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "swift_plugins.countdown",
            "score",
            *map(str, two_samples),
            "--per-example",
            str(per_example),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert "pass@2" in result.stdout and "wrong numbers" in result.stdout
    report = json.loads(two_samples[0].with_suffix(".score.json").read_text())
    assert report["accuracy"] == round(2 / 6, 4)
    verdicts = [json.loads(line)["verdict"] for line in per_example.read_text().splitlines()]
    assert verdicts == ["correct", "wrong value", "wrong numbers", "illegal syntax", "correct", "no answer"]


def test_score_command_refuses_an_empty_file(tmp_path):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    result = subprocess.run(
        [sys.executable, "-m", "swift_plugins.countdown", "score", str(empty)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 2 and "no results to score" in result.stderr


@pytest.mark.parametrize("samples", [1, 2, 3, 5, 6])
def test_pass_at_k_is_the_chance_that_k_of_the_samples_hold_a_right_one(samples):
    # The unbiased estimator against exact enumeration of every k-subset, for every count of right answers.
    for correct in range(samples + 1):
        right = [True] * correct + [False] * (samples - correct)
        for k in range(1, samples + 1):
            subsets = list(itertools.combinations(right, k))
            assert pass_at_k(samples, correct, k) == pytest.approx(sum(map(any, subsets)) / len(subsets))


def test_the_report_gives_pass_at_every_k_with_intervals_and_the_solve_counts():
    samples = [S(key=f"q{q}", verdict="correct" if r < q else "wrong", formatted=True, truncated=False)
               for q in range(4) for r in range(3)]  # fmt: skip  # q0 0 of 3 right, q1 1, q2 2, q3 3
    report = summarise(samples)
    assert report["samples_per_prompt"] == 3 and report["solve_counts"] == {"0": 1, "1": 1, "2": 1, "3": 1}
    assert report["pass_at_k"] == {"1": 0.5, "2": pytest.approx((0 + 2 / 3 + 1 + 1) / 4, abs=1e-4), "3": 0.75}
    assert report["pass_at_k_ci95"]["3"] == wilson(3, 4)  # right or wrong per prompt: Wilson's interval
    low, high = report["pass_at_k_ci95"]["1"]
    assert 0 <= low < 0.5 < high <= 1
