"""Gym rewards that cannot be gamed: the hack search on every served dataset, and the scorers fixed for what it found.

The rows are real reasoning-gym items: tests/fixtures/gym/rows.jsonl.gz holds 50 of every served dataset (the first
50 distinct questions from seed 0), golds.jsonl.gz 500 of each dataset this package scores itself (``--size 500
--names`` those),
both written by ``python benchmarks/bench_gym_hacks.py rows`` (generating them here would take minutes: puzzle24
and knight_swap search for their puzzles).
"""

import gzip
import json
import multiprocessing
import subprocess
import sys
from collections import defaultdict
from concurrent.futures import ProcessPoolExecutor

import pytest
from reasoning_gym import create_dataset

from swift_plugins.core.errors import SettingError
from swift_plugins.core.tags import last_answer
from swift_plugins.gym import rewards
from swift_plugins.gym.bounded import request
from swift_plugins.gym.data import entry_of
from swift_plugins.gym.entries import decode
from swift_plugins.gym.generator import check_name, dataset_names, generate
from swift_plugins.gym.guard import OWN
from swift_plugins.gym.hacks import search
from swift_plugins.gym.scorers import SCORERS, expression, score
from swift_plugins.gym.worker import score_request

from ..helpers import REPO

FIXTURES = REPO / "tests" / "fixtures" / "gym"
# Each fixed scorer's hack: an answer reasoning-gym pays without the question being solved
HACKS = {"game_of_life_halting": "maybe", "coin_flip": "0", "complex_arithmetic": "nan", "puzzle24": "1*3*5 + 9"}
# Scored with reasoning-gym's rule by the package's readers, which never run the answer (its scorer: sympy's parser)
READ = ("countdown", "polynomial_multiplication")


def load(name: str) -> dict[str, list[dict]]:
    rows = defaultdict(list)
    with gzip.open(FIXTURES / name, "rt", encoding="utf-8") as file:
        for line in file:
            row = json.loads(line)
            rows[row["gym_dataset"]].append(row)
    return dict(rows)


@pytest.fixture(scope="module")
def rows():
    return load("rows.jsonl.gz")


@pytest.fixture(scope="module")
def golds():
    return load("golds.jsonl.gz")


def entries(rows):
    return [entry_of(row["question"], row["answer"], row["metadata"]) for row in rows]


def the_rewards_scores(answers, rows):
    """What the reward's worker scores each answer as an ``<answer>`` block (this process, without the pool)."""
    return [score_request(request(row["gym_dataset"], last_answer(f"<answer>{answer}</answer>"), row)).get("score", 0.0)
            for answer, row in zip(answers, rows, strict=True)]  # fmt: skip


def full_credit_of_reasoning_gym(answers, rows):
    """reasoning-gym's own scorer, full credit only (the package's rule), an error 0; no guard: its plain datasets."""
    dataset = create_dataset(rows[0]["gym_dataset"], **decode(rows[0]["gym_config"]))

    def full(answer, entry):
        try:
            return float(dataset.score_answer(answer, entry) >= 1.0)
        except Exception:  # coin_flip's float() of a 400-digit fraction overflows
            return 0.0

    return [full(answer, entry) for answer, entry in zip(answers, entries(rows), strict=True)]


def searched(item):
    name, rows = item
    return name, search(rows, the_rewards_scores)


def test_the_fixture_is_every_served_dataset_as_gym_generate_writes_it(rows, golds):
    assert sorted(rows) == dataset_names() and {len(items) for items in rows.values()} == {50}
    for name in ("basic_arithmetic", "coin_flip", "game_of_life_halting", "complex_arithmetic"):
        assert generate(name, size=50, seed=0).train == rows[name]
        assert generate(name, size=5, seed=0).train == golds.get(name, rows[name])[:5]
    assert sorted(golds) == sorted(SCORERS) and {len(items) for items in golds.values()} == {500}


def test_no_answer_that_needs_no_solving_earns_on_any_served_dataset(rows):
    # rubiks_cube's scorer turns a cube for every answer (a third of the search's time): searched first, so that the
    # two processes end together
    order = sorted(rows.items(), key=lambda item: item[0] != "rubiks_cube")
    with ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("fork")) as pool:
        findings = dict(pool.map(searched, order))
    assert sorted(findings) == dataset_names()
    assert {name: found for name, found in findings.items() if found} == {}


@pytest.mark.parametrize("name", sorted(HACKS))
def test_the_search_finds_what_reasoning_gyms_full_credit_pays_for(name, rows):
    # the same search, on reasoning-gym's scorer: it can fail, and it finds each hack the package fixed
    probes = {finding.probe for finding in search(rows[name], full_credit_of_reasoning_gym)}
    assert any(probe.startswith(("constant", "non-finite", "another row's")) for probe in probes), probes


def test_propositional_logic_pays_a_constant_and_is_refused_by_name():
    dataset = create_dataset("propositional_logic", size=100, seed=0)
    paid = sum(dataset.score_answer("(P ∨ Q)", entry) == 1.0 for entry in dataset)
    assert paid >= 75  # the refusal says 85% (measured on 300 items)
    with pytest.raises(SettingError, match=r"gym:propositional_logic is not served: any conclusion the premises"):
        check_name("propositional_logic")


@pytest.mark.parametrize("name", sorted(HACKS))
def test_each_fixed_scorer_scores_its_hack_0_and_500_gold_answers_1(name, golds):
    rows, hack = golds[name], HACKS[name]
    dataset = create_dataset(name, **decode(rows[0]["gym_config"]))
    solved = [name == "puzzle24" and sorted(entry["metadata"]["numbers"]) == [1, 3, 5, 9] for entry in entries(rows)]
    upstream = [dataset.score_answer(hack, entry) for entry in entries(rows)]
    assert sum(value == 1.0 for value, right in zip(upstream, solved, strict=True) if not right) >= 300
    assert [score(name, dataset, hack, entry) for entry in entries(rows)] == [float(right) for right in solved]
    assert [score(name, dataset, row["answer"], entry) for row, entry in zip(rows, entries(rows), strict=True)] == [
        1.0] * 500  # fmt: skip


@pytest.mark.parametrize(("name", "hack"), [("game_of_life_halting", "False"), ("coin_flip", "0"),
                                            ("complex_arithmetic", "nan")])  # fmt: skip
def test_the_issues_three_hacks_score_0_through_the_reward(name, hack, rows, fresh_pool):
    # any non-empty answer (even the wrong one of the two), 0 for a probability, nan for a complex number
    items = rows[name]
    upstream = full_credit_of_reasoning_gym([hack] * len(items), items)
    columns = {key: [row[key] for row in items] for key in items[0]}
    gold = [row["answer"] for row in items]
    truly = [hack == answer for answer in gold]  # "False" is the answer to some halting questions
    assert sum(upstream) >= 0.9 * len(items)
    assert rewards.gym_accuracy_reward([f"<answer>{hack}</answer>"] * len(items), **columns) == [
        float(right) for right in truly]  # fmt: skip
    assert rewards.gym_accuracy_reward([f"<answer>{answer}</answer>" for answer in gold], **columns) == [1.0] * 50


@pytest.mark.parametrize("name", sorted([*OWN, *READ]))
def test_a_dataset_whose_scorer_evals_pays_500_gold_answers_without_reasoning_gyms_scorer(name, golds, monkeypatch):
    # its scorer evals the answer (sympy's parser; a list one: an answer that is not the gold text): the package's
    # reading never calls it, and gives the verdicts its full credit gives (another row's answer, n_queens:
    # sometimes a valid board of this one too)
    rows = golds[name]
    dataset = create_dataset(name, **decode(rows[0]["gym_config"]))
    answers = [row["answer"] for row in rows] + [rows[(index + 1) % 500]["answer"] for index in range(500)]
    pairs = list(zip(answers, entries(rows) * 2, strict=True))
    upstream = [float(dataset.score_answer(answer, entry) >= 1.0) for answer, entry in pairs]
    monkeypatch.setattr(type(dataset), "score_answer", lambda *args: pytest.fail("reasoning-gym's scorer was called"))
    assert [score(name, dataset, answer, entry) for answer, entry in pairs] == upstream
    assert upstream[:500] == [1.0] * 500 and sum(upstream[500:]) < 50


@pytest.mark.parametrize("name", ["simple_integration", "intermediate_integration"])
def test_the_integrations_quick_numeric_check_keeps_500_gold_answers(name, golds):
    # 3*exp(6*x**2 - 5*x + 5) + C: terms of about 1e17 that cancel, which a 15-digit point cannot tell from 0
    rows = golds[name]
    dataset = create_dataset(name, **decode(rows[0]["gym_config"]))
    assert [score(name, dataset, row["answer"], entry) for row, entry in zip(rows, entries(rows), strict=True)] == [
        1.0] * 500  # fmt: skip


@pytest.mark.parametrize("name", ["simple_integration", "intermediate_integration"])
def test_the_integrations_quick_numeric_check_changes_no_verdict(name, rows):
    # the reward scores what reasoning-gym's simplify would, after a numeric check that ends wrong answers early
    items = rows[name][:20]
    dataset = create_dataset(name, **decode(items[0]["gym_config"]))
    answers = [row["answer"] for row in items] + [items[(i + 1) % 20]["answer"] for i in range(20)] + ["x + C"] * 20
    pairs = list(zip(answers, entries(items) * 3, strict=True))
    assert [score(name, dataset, answer, entry) for answer, entry in pairs] == [
        float(dataset.score_answer(answer, entry) >= 1.0) for answer, entry in pairs] == [1.0] * 20 + [0.0] * 40


def test_a_scorer_that_cannot_read_an_answer_scores_it_wrong_not_as_an_error(rows):
    row = rows["prime_factorization"][0]
    dataset = create_dataset("prime_factorization")
    with pytest.raises(ValueError):  # reasoning-gym's scorer raises on a word
        dataset.score_answer("unknown", entries([row])[0])
    assert score_request(request("prime_factorization", "unknown", row)) == {"score": 0.0, "seconds": pytest.approx(
        0.0, abs=1.0)}  # fmt: skip
    broken = {**row, "metadata": "{}", "answer": "not a factorization"}  # the gold fails as well: the row is broken
    assert score_request(request("prime_factorization", "unknown", broken))["error"].startswith("ValueError")


def test_another_reasoning_gym_release_is_refused_in_one_line(tmp_path, rows):
    fake = tmp_path / "reasoning_gym-0.1.26.dist-info"  # found first on the path: what importlib.metadata reads
    fake.mkdir()
    (fake / "METADATA").write_text("Metadata-Version: 2.1\nName: reasoning-gym\nVersion: 0.1.26\n")
    data, completions = tmp_path / "rows.jsonl", tmp_path / "c.jsonl"
    data.write_text(json.dumps(rows["basic_arithmetic"][0]) + "\n")
    completions.write_text(json.dumps({"completion": "<answer>1</answer>"}) + "\n")
    env = {"PYTHONPATH": f"{tmp_path}:{REPO}", "PATH": "/usr/bin:/bin"}
    result = subprocess.run([sys.executable, "-m", "swift_plugins", "gym", "score", str(data), str(completions)],
                            capture_output=True, text=True, env=env, cwd=REPO, timeout=120)  # fmt: skip
    assert result.returncode == 2 and result.stdout == "" and len(result.stderr.splitlines()) == 1
    assert "reasoning-gym 0.1.26 is installed, but the gym task's scorers are audited on 0.1.25 only" in result.stderr
    reward = subprocess.run([sys.executable, "-c", "from swift_plugins.gym.rewards import shared_pool; shared_pool()"],
                            capture_output=True, text=True, env=env, cwd=REPO, timeout=120)  # fmt: skip
    assert reward.returncode != 0 and reward.stderr.strip().splitlines()[-1].startswith(
        "swift_plugins.core.errors.SettingError: reasoning-gym 0.1.26 is installed")  # fmt: skip
    assert sorted(SCORERS) == sorted([*HACKS, "simple_integration", "intermediate_integration", *OWN, *READ])


@pytest.mark.parametrize("name", ["simple_integration", "intermediate_integration", "polynomial_multiplication"])
def test_the_package_reads_every_gold_answer_and_question_as_sympys_parser_does(name, golds):
    # expression() builds without eval what sympy's parse_expr (eval underneath) builds from the same text
    import sympy

    for entry in entries(golds[name]):
        metadata = entry["metadata"]
        if name == "polynomial_multiplication":  # reasoning-gym parses both with no names given
            names, texts = {}, (entry["answer"], metadata["polynomial_expr"])
        else:
            names = {metadata["variable"]: sympy.Symbol(metadata["variable"]), "C": sympy.Symbol("C")}
            texts = (entry["answer"], metadata["integrand"])
        for text in texts:
            assert expression(text) == sympy.parse_expr(text, local_dict=names), text


def test_countdown_pays_the_four_operations_over_its_numbers_and_the_target_exactly():
    # reasoning-gym's parser also reads a power, its digit runs split a decimal into numbers, its float comparison
    # takes a value within 1e-6 of the target
    dataset = create_dataset("countdown", size=1, seed=0)
    cases = {  # answer: numbers, target, reasoning-gym's score, the package's
        "3 * (2 + 1)": ([3, 2, 1], 9, 1.0, 1.0),
        "(1+2)*3": ([3, 2, 1], 9, 1.0, 1.0),
        "-1 + 3*2": ([3, 2, 1], 5, 1.0, 1.0),
        "3**2*1": ([3, 2, 1], 9, 1.0, 0.0),
        "3 * 2 + 1": ([3, 2, 1], 9, 0.05, 0.0),
        "3 * 3": ([3, 2, 1], 9, 0.05, 0.0),
        "1.5*6": ([1, 5, 6], 9, 1.0, 0.0),
        "10000001 / 10000000": ([10000001, 10000000], 1, 1.0, 0.0),
    }
    for answer, (numbers, target, upstream, ours) in cases.items():
        entry = {**dataset[0], "metadata": {**dataset[0]["metadata"], "numbers": numbers, "target": target}}
        assert (dataset.score_answer(answer, entry), score("countdown", dataset, answer, entry)) == (upstream, ours), \
            answer  # fmt: skip
