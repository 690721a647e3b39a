"""GSM8K scoring: the report on hand-checked results, and agreement with the real lm-eval package.

The lm-eval side is the installed harness itself: its gsm8k.yaml, its filter registry, its
stop-sequence post-processing and its exact_match metric, applied to the same responses.
"""

import json
import subprocess
import sys
from importlib.resources import files

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from lm_eval.api.instance import Instance
from lm_eval.api.metrics import exact_match_hf_evaluate
from lm_eval.filters import build_filter_ensemble
from lm_eval.models.utils import postprocess_generated_text
from lm_eval.utils import apply_template

from swift_plugins.core.errors import DataError
from swift_plugins.core.files import read_rows
from swift_plugins.gsm8k.scoring import load_samples, samples_from_rows, score_samples

RESULTS = "tests/fixtures/gsm8k/results.jsonl"
# The judge's verdict of each fixture response (in file order, nine a group), read by hand against the rule of
# gsm8k/answer.py: C correct, N no answer, A ambiguous, W wrong value.
KINDS = {"C": "correct", "N": "no answer", "A": "ambiguous", "W": "wrong value"}
VERDICTS = [KINDS[code] for code in "CNCCNCCNA CNWCCNCNC NNNCNACNC NCNC" if code != " "]

TASK = yaml.safe_load((files("lm_eval") / "tasks" / "gsm8k" / "gsm8k.yaml").read_text())
METRIC = next(metric for metric in TASK["metric_list"] if metric["metric"] == "exact_match")
METRIC_KWARGS = {key: METRIC[key] for key in ("regexes_to_ignore", "ignore_case", "ignore_punctuation")}
ENSEMBLES = [
    build_filter_ensemble(entry["name"], [(step.pop("function"), step) for step in entry["filter"]])
    for entry in TASK["filter_list"]
]


def harness(response: str, reference_solution: str) -> dict[str, bool]:
    """lm-eval's verdict for each of the task's filters on one response."""
    doc = {"question": "", "answer": reference_solution}
    text = postprocess_generated_text(response, TASK["generation_kwargs"]["until"], think_end_token=None)
    instance = Instance("generate_until", doc, ("", {}), 0, resps=[text])
    verdicts = {}
    for ensemble in ENSEMBLES:
        ensemble.apply([instance])
        prediction = instance.filtered_resps[ensemble.name]
        target = apply_template(TASK["doc_to_target"], doc)
        score = exact_match_hf_evaluate([prediction], [target], **METRIC_KWARGS)["exact_match"]
        verdicts[ensemble.name] = bool(score)
    return verdicts


@pytest.fixture
def rows(repo):
    return list(read_rows(repo / RESULTS))


def test_the_harness_has_the_two_filters_we_report():
    assert [ensemble.name for ensemble in ENSEMBLES] == ["strict-match", "flexible-extract"]


def test_every_fixture_agrees_with_lm_eval(rows):
    samples = samples_from_rows(rows)
    for (where, row), sample in zip(rows, samples, strict=True):
        expected = harness(row["response"], row["labels"])
        assert (sample.strict_match, sample.flexible_extract) == (
            expected["strict-match"],
            expected["flexible-extract"],
        ), where
    # the fixtures exercise both outcomes of both metrics
    assert {(s.strict_match, s.flexible_extract) for s in samples} == {(a, b) for a in (0, 1) for b in (0, 1)}


def test_the_report_rates_are_lm_eval_means(rows):
    report = score_samples(samples_from_rows(rows))
    verdicts = [harness(row["response"], row["labels"]) for _, row in rows]
    for name, key in (("strict-match", "lm_eval_strict_match"), ("flexible-extract", "lm_eval_flexible_extract")):
        assert report[key] == round(sum(v[name] for v in verdicts) / len(verdicts), 4)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sampled_from([*"0123456789.,$-#: \nQa", "#### ", "Question:", "<|im_end|>", "</s>"]), max_size=30).map(
        "".join
    ),
    st.sampled_from(["#### 72", "2 * 500 = 1,000\n#### 1000", "#### -5", "#### 10.5"]),
)
def test_arbitrary_responses_agree_with_lm_eval(response, solution):
    (sample,) = samples_from_rows([("generated", {"response": response, "labels": solution, "question": "q"})])
    expected = harness(response, solution)
    assert (sample.strict_match, sample.flexible_extract) == (expected["strict-match"], expected["flexible-extract"])


def test_report_figures_on_hand_checked_results(repo):
    samples = load_samples([repo / RESULTS])
    assert [s.verdict for s in samples] == VERDICTS
    report = score_samples(samples)
    assert report["samples"] == 31 and report["questions"] == 11 and report["samples_per_question"] == "varies"
    assert report["accuracy"] == round(VERDICTS.count("correct") / 31, 4)
    assert report["failures"] == {"no answer": 13, "ambiguous": 2, "wrong value": 1}
    assert report["truncation_rate"] == round(2 / 31, 4)  # two rows stopped for length
    # pass@1 averages per-question accuracy; pass@2 counts a question solved by either of two samples
    by_question = {}
    for sample in samples:
        by_question.setdefault(sample.question, []).append(sample.verdict == "correct")
    assert report["pass_at_k"]["1"] == round(sum(sum(v) / len(v) for v in by_question.values()) / 11, 4)


def test_references_come_from_final_answer_answer_or_labels():
    response = "<reasoning>ok</reasoning><answer>1,000</answer>\n#### 1000"
    rows = [
        ("a", {"response": response, "final_answer": "1000", "question": "q"}),
        ("b", {"response": response, "answer": "500 * 2 = <<500*2=1000>>1000\n#### 1000", "question": "q"}),
        ("c", {"response": response, "labels": "#### 1000", "messages": [{"role": "user", "content": "q"}]}),
    ]
    samples = samples_from_rows(rows)
    assert [(s.verdict, s.strict_match, s.flexible_extract, s.question) for s in samples] == [
        ("correct", True, True, "q")
    ] * 3
    with pytest.raises(DataError, match="d: no reference"):
        samples_from_rows([("d", {"response": response, "question": "q"})])
    with pytest.raises(DataError, match="e: no 'response'"):
        samples_from_rows([("e", {"labels": "#### 1"})])


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ({"final_answer": "about 7"}, "r.jsonl:4: final_answer: the reference answer 'about 7' is not one number"),
        ({"answer": "7 apples"}, "r.jsonl:4: answer: the GSM8K answer has no '#### N' final line: '7 apples'"),
        ({"labels": "It is 7.\n#### seven"}, "r.jsonl:4: labels: the reference answer ' seven' is not one number"),
    ],
)
def test_an_unreadable_reference_is_refused_naming_the_row(row, message):
    with pytest.raises(DataError) as error:
        samples_from_rows([("r.jsonl:4", {"response": "<answer>7</answer>", "question": "q", **row})])
    assert str(error.value) == message


def test_score_command_prints_and_writes_the_report(repo, tmp_path):
    out, examples = tmp_path / "report.json", tmp_path / "examples.jsonl"
    result = subprocess.run(
        [sys.executable, "-m", "swift_plugins.gsm8k", "score", RESULTS, "--json", out, "--per-example", examples],
        capture_output=True,
        text=True,
        cwd=repo,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    report = json.loads(out.read_text())
    assert f"lm-eval strict-match          {report['lm_eval_strict_match']:.2%}" in result.stdout
    assert [json.loads(line)["verdict"] for line in examples.read_text().splitlines()] == VERDICTS
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"response": "x"}\n')
    result = subprocess.run(
        [sys.executable, "-m", "swift_plugins.gsm8k", "score", bad], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 2 and "bad.jsonl:1: no reference" in result.stderr and "Traceback" not in result.stderr
