"""Before/after tables: interval coverage by simulation, and compare() on evaluate folders."""

import json
import random
import statistics
from pathlib import Path

import pytest

from swift_plugins.cli import main
from swift_plugins.core.errors import DataError
from swift_plugins.core.files import write_jsonl
from swift_plugins.core.intervals import paired_difference, wilson
from swift_plugins.countdown import scoring as countdown_scoring
from swift_plugins.gsm8k import scoring as gsm8k_scoring
from swift_plugins.tools.compare import compare, format_markdown


def _paired_sample(rng, n, p_before, p_after, agreement):
    """n paired outcomes; with probability ``agreement`` the after-outcome copies the before-outcome."""
    before = [rng.random() < p_before for _ in range(n)]
    # keep the after-margin at p_after: copy, or draw so that the mixture has mean p_after
    fresh = (p_after - agreement * p_before) / (1 - agreement)
    after = [b if rng.random() < agreement else rng.random() < fresh for b in before]
    return before, after


@pytest.mark.parametrize(
    ("p_before", "p_after", "agreement"), [(0.1, 0.2, 0.5), (0.3, 0.3, 0.8), (0.05, 0.15, 0.3), (0.5, 0.6, 0.0)]
)
def test_paired_interval_covers_the_true_difference_about_95_percent_of_the_time(p_before, p_after, agreement):
    rng = random.Random(1234)
    hits = 0
    runs = 500
    for _ in range(runs):
        _, (low, high) = paired_difference(*_paired_sample(rng, 200, p_before, p_after, agreement))
        hits += low <= p_after - p_before <= high
    assert 0.92 <= hits / runs <= 0.99


def test_paired_interval_is_narrower_than_independent_when_answers_agree():
    before = [True] * 30 + [False] * 170
    after = [True] * 30 + [True] * 10 + [False] * 160  # every old success kept, 10 new
    difference, (low, _) = paired_difference(before, after)
    high_b = wilson(30, 200)[1]
    low_a = wilson(40, 200)[0]
    independent_low = difference - ((0.2 - low_a) ** 2 + (high_b - 0.15) ** 2) ** 0.5
    assert difference == 0.05 and low > independent_low and low > 0


def test_wilson_interval_contains_the_rate_and_stays_in_bounds():
    for successes in (0, 1, 50, 199, 200):
        low, high = wilson(successes, 200)
        assert 0 <= low <= successes / 200 <= high <= 1


def _evaluation(folder, outcomes, scoring=countdown_scoring):
    """An evaluate folder whose examples.jsonl is written by the task's own sample_record."""
    folder.mkdir()
    samples = []
    for n, (ok, formatted) in enumerate(outcomes, 1):
        verdict = "correct" if ok else "wrong value"
        if scoring is countdown_scoring:
            samples.append(countdown_scoring.Sample(f"r:{n}", (n, 1, 2), n + 3, verdict, formatted, False))
        else:
            samples.append(gsm8k_scoring.Sample(f"r:{n}", f"Question {n}?", str(n), verdict, formatted, False, ok, ok))
    write_jsonl(map(scoring.sample_record, samples), folder / "examples.jsonl")
    return folder


def test_compare_reports_each_stage_and_the_paired_changes(tmp_path):
    base = _evaluation(tmp_path / "base", [(False, False)] * 40)
    sft = _evaluation(tmp_path / "sft", [(True, True)] * 4 + [(False, True)] * 36)
    table = compare({"base": base, "sft": sft})
    assert table["prompts"] == 40
    assert table["stages"]["sft"]["correct"] == 4 and table["stages"]["sft"]["format_rate"] == 1.0
    change = table["changes"]["sft - base"]
    assert change["format_rate"]["difference"] == 1.0 and change["format_rate"]["ci95"][0] > 0.8
    assert change["accuracy"]["difference"] == 0.1
    markdown = format_markdown(table)
    assert "| sft | 100.0% [91.2, 100.0] | 10.0% (4/40)" in markdown
    assert "| sft - base | +100.0 points" in markdown


def test_compare_pairs_gsm8k_evaluations_by_question(tmp_path):
    base = _evaluation(tmp_path / "base", [(False, True)] * 20, gsm8k_scoring)
    grpo = _evaluation(tmp_path / "grpo", [(True, True)] * 5 + [(False, True)] * 15, gsm8k_scoring)
    table = compare({"base": base, "grpo": grpo})
    assert table["prompts"] == 20 and table["stages"]["grpo"]["correct"] == 5
    assert table["changes"]["grpo - base"]["accuracy"]["difference"] == 0.25


def test_compare_refuses_evaluations_of_different_prompts(tmp_path):
    base = _evaluation(tmp_path / "base", [(False, False)] * 6)
    sft = _evaluation(tmp_path / "sft", [(False, False)] * 6)
    examples = sft / "examples.jsonl"  # the same count, but one prompt that base never answered
    rows = [json.loads(line) for line in examples.read_text().splitlines()]
    write_jsonl([*rows[:-1], {**rows[-1], "key": [99, 1, 2, 102]}], examples)
    with pytest.raises(DataError, match="not of the same prompts"):
        compare({"base": base, "sft": sft})


def test_a_stage_on_the_first_prompts_is_paired_on_those(tmp_path):
    # the base model on the first 10 of 40 prompts (evaluate --limit), as the demo evaluates it
    base = _evaluation(tmp_path / "base", [(False, False)] * 10)
    sft = _evaluation(tmp_path / "sft", [(True, True)] * 5 + [(False, True)] * 5 + [(False, True)] * 30)
    grpo = _evaluation(tmp_path / "grpo", [(True, True)] * 20 + [(False, True)] * 20)
    table = compare({"base": base, "sft": sft, "grpo": grpo})
    assert table["prompts"] == 40 and [row["prompts"] for row in table["stages"].values()] == [10, 40, 40]
    assert table["stages"]["sft"]["accuracy"] == 5 / 40  # each stage's rate over its own prompts
    sft_change, grpo_change = table["changes"]["sft - base"], table["changes"]["grpo - sft"]
    assert (sft_change["prompts"], sft_change["accuracy"]["difference"]) == (10, 0.5)  # on base's 10 prompts
    assert (grpo_change["prompts"], grpo_change["accuracy"]["difference"]) == (40, 15 / 40)
    markdown = format_markdown(table)
    assert markdown.startswith("Held-out prompts: 40 (base on 10 of them), one greedy answer each")
    assert "| base | 0.0% [0.0, 27.8] | 0.0% (0/10) [0.0, 27.8] |" in markdown


def _sampled(folder: Path, right_per_puzzle: list[int], samples: int) -> Path:
    """An evaluation of ``samples`` answers to each puzzle, ``right_per_puzzle[n]`` of puzzle n's right."""
    folder.mkdir(parents=True)
    rows = [
        countdown_scoring.Sample(f"r:{n}.{s}", (n, 1, 2), n + 3, "correct" if s < right else "wrong value", True, False)
        for n, right in enumerate(right_per_puzzle)
        for s in range(samples)
    ]
    write_jsonl(map(countdown_scoring.sample_record, rows), folder / "examples.jsonl")
    return folder


def test_compare_pairs_sampled_evaluations_by_puzzle(tmp_path):
    before = _sampled(tmp_path / "before", [0, 1, 2, 0, 4, 1] * 5, 4)
    after = _sampled(tmp_path / "after", [1, 2, 2, 1, 4, 3] * 5, 4)
    table = compare({"before": before, "after": after})
    assert table["samples_per_prompt"] == 4 and table["stages"]["after"]["correct"] == 13 * 5
    assert table["stages"]["before"]["accuracy"] == round(8 / 24, 4)  # pass@1: the mean of each puzzle's share
    change = table["changes"]["after - before"]["accuracy"]
    differences = [d / 4 for d in (1, 1, 0, 1, 0, 2)] * 5  # per puzzle, paired
    assert change["difference"] == round(statistics.fmean(differences), 4)
    half = 2.045 * statistics.stdev(differences) / 30**0.5  # Student's t with 29 degrees of freedom
    assert change["ci95"] == pytest.approx((change["difference"] - half, change["difference"] + half), abs=2e-4)
    assert "4 sampled answers each, pass@1" in format_markdown(table)


def test_compare_refuses_stages_answered_differently(tmp_path):
    greedy = _sampled(tmp_path / "greedy", [0, 1] * 5, 1)
    sampled = _sampled(tmp_path / "sampled", [0, 1] * 5, 4)
    with pytest.raises(DataError, match=r"different number of times \(greedy 1, sampled 4\)"):
        compare({"greedy": greedy, "sampled": sampled})
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "examples.jsonl").write_text("")
    with pytest.raises(DataError, match="no answers"):
        compare({"greedy": greedy, "empty": empty})


def test_compare_refuses_stages_evaluated_in_different_precisions(tmp_path):
    # bfloat16 changes a third of the greedy answers (benchmarks/bench_evaluate_cpu.py): a change between a float32
    # and a bfloat16 evaluation would mix training with rounding
    stages = {name: _evaluation(tmp_path / name, [(True, True)] * 3 + [(False, True)] * 7) for name in ("sft", "grpo")}
    for name, dtype in (("sft", "float32"), ("grpo", "bfloat16")):
        (stages[name] / "score.json").write_text(json.dumps({"torch_dtype": dtype}))
    with pytest.raises(DataError, match=r"different precisions \(sft float32, grpo bfloat16\)"):
        compare(stages)
    (stages["grpo"] / "score.json").write_text(json.dumps({"torch_dtype": "float32"}))
    assert compare(stages)["changes"]["grpo - sft"]["accuracy"]["difference"] == 0.0
    (stages["grpo"] / "score.json").unlink()  # an evaluation that names no precision is not refused
    assert compare(stages)["stages"]["grpo"]["correct"] == 3


def test_cli_writes_json_and_markdown(tmp_path, capsys):
    base = _evaluation(tmp_path / "base", [(False, False)] * 10)
    sft = _evaluation(tmp_path / "sft", [(False, True)] * 10)
    main(["compare", f"base={base}", f"sft={sft}", "--out", str(tmp_path / "comparison")])
    assert json.loads((tmp_path / "comparison.json").read_text())["stages"]["sft"]["formatted"] == 10
    assert (tmp_path / "comparison.md").read_text() in capsys.readouterr().out


def test_cli_rejects_a_stage_without_a_name(tmp_path, capsys):
    with pytest.raises(SystemExit):
        main(["compare", str(tmp_path), "--out", str(tmp_path / "c")])
    assert "expected NAME=FOLDER" in capsys.readouterr().err


def test_cli_refuses_a_stage_name_given_twice_before_reading_any_folder(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["compare", f"a={tmp_path / 'base'}", f"a={tmp_path / 'sft'}", "--out", str(tmp_path / "c")])
    assert exit_info.value.code == 2
    errors = [line for line in capsys.readouterr().err.splitlines() if "error:" in line]
    assert errors == ["python -m swift_plugins compare: error: argument NAME=FOLDER: stage name 'a' given twice: "
                      "give each stage its own name"]  # fmt: skip
    assert not (tmp_path / "c.json").exists()


def test_cli_names_an_unwritable_output_in_one_line(tmp_path, capsys):
    base = _evaluation(tmp_path / "base", [(False, False)] * 4)
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(SystemExit) as exit_info:
        main(["compare", f"base={base}", "--out", str(blocker / "comparison")])
    assert exit_info.value.code == 2
    error = capsys.readouterr().err
    assert error.startswith(f"python -m swift_plugins compare: error: {blocker / 'comparison.json'}: cannot write it (")
    assert error.count("\n") == 1
