"""The gym reward never runs a completion as Python: the datasets whose scorer evaluates the answer are scored by the
package, which reads it without running it, and in the five sympy ones the guard refuses anything but a plain
expression unread."""

import logging

import pytest
from reasoning_gym import create_dataset

from swift_plugins.gym import rewards
from swift_plugins.gym.bounded import request
from swift_plugins.gym.data import entry_of
from swift_plugins.gym.generator import dataset_names, generate
from swift_plugins.gym.guard import ALLOWED, OWN, PLAIN, refusal
from swift_plugins.gym.scorers import SCORERS, score
from swift_plugins.gym.scoring import samples_from_rows, score_samples
from swift_plugins.gym.worker import score_request

SYMPY = ("countdown", "puzzle24", "simple_integration", "intermediate_integration", "polynomial_multiplication")
EVAL = ("binary_matrix", "spiral_matrix", "n_queens", "string_insertion")
# Each creates the file {m} when evaluated as Python (the test first proves it does, straight through score_answer).
PAYLOADS = {
    "import": "__import__('os').system('touch {m}') or 24",
    "chr-built-name": "exec(chr(95)*2+'import'+chr(95)*2+'(\"os\").system(\"touch {m}\")')",
    "exec": "exec('import os; os.system(\"touch {m}\")')",
    "attribute": "__import__('pathlib').Path('{m}').touch()",
    "getattr": "getattr(__import__('os'), 'system')('touch {m}')",
    "open": "open('{m}', 'w')",
    "lambda": "(lambda: __import__('os').system('touch {m}'))()",
    "comprehension": "[__import__('os').system('touch {m}') for _ in '1']",  # sympy's parser fails on it first
}

# Calls, builtins, dunders, quotes, brackets, attribute access, lambda, keywords, other literals, unicode digits
NOT_PLAIN = ["chr(95)", "eval(1)", "getattr(x, x)", "open(x)", "input()", "exit()", "__", "_", "'1'", '"1"', "[1]",
             "{1}", "x.real", "1 .real", "(1).real", "lambda: 1", "x if x else x", "not x", "x or 1", "1e3", "0x10",
             "1_000", "2x", "sinc(x)", "x;1", "x\\\n1", "\u0661"]  # fmt: skip


def test_the_guarded_datasets_are_exactly_those_whose_scorer_evaluates_the_answer():
    assert set(ALLOWED) == set(SYMPY) and set(EVAL) == OWN and set(SYMPY) | OWN <= set(SCORERS)
    assert not set(ALLOWED) & PLAIN and not OWN & PLAIN
    assert set(ALLOWED) | OWN | PLAIN == set(dataset_names())  # every served dataset audited, one way or the other


@pytest.mark.parametrize("name", [*SYMPY, *EVAL])
def test_code_in_an_answer_scores_0_and_never_runs(name, tmp_path, caplog, fresh_pool):
    [row] = generate(name, size=1, seed=0).train
    payloads = {kind: text for kind, text in PAYLOADS.items() if not (name in SYMPY and kind == "comprehension")}
    dataset, entry = create_dataset(name), entry_of(row["question"], row["answer"], row["metadata"])
    for kind, text in payloads.items():  # each payload is live: reasoning-gym's scorer alone runs it
        dataset.score_answer(text.format(m=tmp_path / f"direct-{kind}"), entry)
        assert (tmp_path / f"direct-{kind}").exists(), kind
    completions = [f"<answer>{text.format(m=tmp_path / kind)}</answer>" for kind, text in payloads.items()]
    columns = {key: [value] * len(completions) for key, value in row.items()}
    with caplog.at_level(logging.WARNING, logger=rewards.__name__):
        assert rewards.gym_accuracy_reward(completions, **columns) == [0.0] * len(completions)
    # behind the guard too: the package's scorer reads each answer and runs none
    answers = [text.format(m=tmp_path / f"{kind}-unguarded") for kind, text in payloads.items()]
    assert [score(name, dataset, answer, entry) for answer in answers] == [0.0] * len(answers)
    assert not [path.name for path in tmp_path.iterdir() if not path.name.startswith("direct-")]
    # the sympy datasets' payloads are refused unscored; the list datasets' are wrong answers, compared as text
    warnings = [f"external_gym: {len(completions)} guarded of {len(completions)} completions scored 0 "
                f"(first: guarded: not a plain answer for {name})"] if name in SYMPY else []  # fmt: skip
    assert [record.getMessage() for record in caplog.records] == warnings


@pytest.mark.parametrize("name", [*SYMPY, *EVAL])
def test_every_gold_answer_of_a_seeded_sample_still_scores_1_through_the_reward(name, fresh_pool):
    rows = generate(name, size=40, seed=7).train
    columns = {key: [row[key] for row in rows] for key in rows[0]}
    completions = [f"<think>…</think><answer>{row['answer']}</answer>" for row in rows]
    assert rewards.gym_accuracy_reward(completions, **columns) == [1.0] * len(rows)


@pytest.mark.parametrize("name", SYMPY)
@pytest.mark.parametrize("answer", NOT_PLAIN)
def test_only_numbers_operators_and_the_gold_answers_names_pass(name, answer):
    assert refusal(name, answer) == f"guarded: not a plain answer for {name}"


def test_plain_answers_still_reach_the_scorer():
    plain = ("(6 - 2) * 6", "24 = 6*4", "2^3 + 7 // 2", " 1.5 , .5 ")
    assert [refusal("countdown", text) for text in plain] == [None] * len(plain)


def test_a_list_answer_is_compared_with_the_gold_and_a_python_list_of_it_scores_0_unevaluated(fresh_pool):
    [row] = generate("spiral_matrix", size=1, seed=0).train
    gold_as_list = str([int(cell) for cell in row["answer"].split()])
    dataset, entry = create_dataset("spiral_matrix"), entry_of(row["question"], row["answer"], row["metadata"])
    assert dataset.score_answer(gold_as_list, entry) == 0.1  # reasoning-gym evaluates it for partial credit
    spaced = "  ".join(row["answer"].split())
    assert [score_request(request("spiral_matrix", text, row))["score"] for text in (gold_as_list, spaced)] == [0.0,
                                                                                                                1.0]


def test_the_other_served_datasets_run_no_answer_and_an_unaudited_one_refuses_every_answer(tmp_path, fresh_pool):
    assert all(refusal(name, PAYLOADS["import"]) is None for name in PLAIN)
    [row] = generate("basic_arithmetic", size=1, seed=0).train
    responses = [f"<answer>{PAYLOADS['import'].format(m=tmp_path / 'm')}</answer>", f"<answer>{row['answer']}</answer>"]
    samples = samples_from_rows([(f"r:{n}", {**row, "response": text}) for n, text in enumerate(responses)])
    assert [(sample.score, sample.verdict) for sample in samples] == [(0.0, "wrong"), (1.0, "correct")]
    assert not (tmp_path / "m").exists()  # basic_arithmetic's scorer compares text: nothing to guard
    assert refusal("propositional_logic", "(P ∨ Q)") == "guarded: propositional_logic was not audited (reasoning-gym " \
        "0.1.25)"  # fmt: skip


def test_evaluate_reports_guarded_answers_as_their_own_failure_kind(fresh_pool):
    [row] = generate("countdown", size=1, seed=0).train
    rows = [("r:0", {**row, "response": "<answer>abs(-24)</answer>"}), ("r:1", {**row, "response": "x"})]
    assert score_samples(samples_from_rows(rows))["failures"] == {"guarded": 1, "no answer": 1}
