"""Gym rewards that pay every right answer: the false-negative search on every served dataset, reasoning-gym's own
scoring test cases, and settings whose gold answers the reward could not score refused in one line.

Real reasoning-gym items: tests/fixtures/gym/rows.jsonl.gz (50 of every served dataset) and golds.jsonl.gz (500 of
the datasets the package scores itself), written by ``benchmarks/bench_gym_hacks.py rows``; upstream.jsonl.gz, the
``score_answer`` calls of reasoning-gym 0.1.25's own tests (its repository at that tag), recorded by
``benchmarks/bench_gym_false_negatives.py upstream``.
"""

import ast
import gzip
import json
import multiprocessing
import subprocess
import sys
from collections import Counter
from concurrent.futures import ProcessPoolExecutor

import pytest

from swift_plugins.core.errors import DataError, SettingError
from swift_plugins.gym.data import check_row
from swift_plugins.gym.forms import FAMILIES, full_credit_of_reasoning_gym, search, through_the_reward
from swift_plugins.gym.generator import dataset_names, generate
from swift_plugins.gym.settings import check_config, parse_settings

from ..helpers import REPO
from .test_gym_hacks import load

FIXTURES = REPO / "tests" / "fixtures" / "gym"
INTEGRATION_ROWS = 20  # of the 50: sympy's check takes 10-80 ms an answer, and each gold is written in 8-9 forms
# Settings choosing the variables of the gold answers, each scored right (the others are refused)
VARIABLE_SETTINGS = [("simple_integration", ["symbols=('t',)"]), ("simple_integration", ["symbols=('X', 'y')"]),
                     ("intermediate_integration", ["symbols=('X',)"]),
                     ("polynomial_multiplication", ["variables=('a', 'b')"]),
                     ("polynomial_multiplication", ["variables=('p', 'q')", "allow_multivariate_polynomials=true",
                                                    "allow_cross_variable_product=true"])]  # fmt: skip

# reasoning-gym's test cases its scorer pays and the reward does not, each a wrong answer
STRICTER = {
    # its test's "slightly wrong" answer (the gold + 0.01) that its prefix credit pays in full for the gold 0.5:
    # 2% off, outside its own 1e-4 tolerance; the prefix credit is the hack the package's coin_flip scorer closed
    ("coin_flip", "0.51"): "0.5 + 0.01",
}


@pytest.fixture(scope="module")
def rows():
    return load("rows.jsonl.gz")


def searched(item):
    name, rows = item
    return name, search(rows, through_the_reward)


def test_every_form_of_a_right_answer_scores_1_through_the_reward_on_every_served_dataset(rows):
    samples = {name: items[:INTEGRATION_ROWS] if "integration" in name else items for name, items in rows.items()}
    with ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("fork")) as pool:
        results = dict(pool.map(searched, samples.items()))
    assert sorted(results) == dataset_names()
    assert {name: dict(missed) for name, (_, missed) in results.items() if missed} == {}
    tried = {name: found for name, (found, _) in results.items()}
    # every dataset with gold answers had its gold answer written at least one other way, and every family of
    # forms a dataset allows was written for it (the search cannot pass by writing nothing)
    assert all(tried[name]["spaces around it"] for name, items in rows.items() if items[0]["answer"])
    assert sum(sum(found.values()) for found in tried.values()) > 6000
    assert {name for name in FAMILIES if len(tried[name]) < 2} == set()


def test_the_search_finds_the_right_forms_reasoning_gyms_own_scorer_misses(rows):
    # the same search on reasoning-gym's scorer alone: it can fail, and it finds the forms the package pays beside it
    _, missed = search(rows["syllogism"], full_credit_of_reasoning_gym)
    assert {"in bold", "a trailing period", "in quotes", "lower case"} <= set(missed)
    _, missed = search(rows["list_functions"], full_credit_of_reasoning_gym)
    assert missed["list items spaced otherwise"] >= 10


@pytest.mark.parametrize(("name", "settings"), VARIABLE_SETTINGS)
def test_the_variable_names_a_setting_chooses_score_1(name, settings):
    items = generate(name, size=12, seed=0, settings=parse_settings(name, settings)).train
    tried, missed = search(items, through_the_reward)
    assert through_the_reward([row["answer"] for row in items], items) == [1.0] * len(items)
    assert sum(tried.values()) >= 3 * len(items) and missed == Counter()


@pytest.mark.parametrize(("name", "pair", "refused"), [
    ("simple_integration", "symbols=('theta',)", "'theta'"), ("simple_integration", "symbols=('x', 'E')", "'E'"),
    ("simple_integration", "symbols=('C',)", "'C'"), ("polynomial_multiplication", "variables=('a', 'S')", "'S'"),
    ("polynomial_multiplication", "variables=('x1',)", "'x1'"),
])  # fmt: skip
def test_a_variable_setting_the_reward_cannot_score_is_refused_at_generation_and_at_the_start_of_a_run(
    name, pair, refused
):
    with pytest.raises(SettingError, match=f"names variables the reward cannot score: {refused}"):
        parse_settings(name, [pair])
    key, _, text = pair.partition("=")
    config = json.dumps({key: list(ast.literal_eval(text))})  # a row written by hand, or by an older package
    with pytest.raises(ValueError, match=f"names variables the reward cannot score: {refused}"):
        check_config(name, config)
    row = {"gym_dataset": name, "gym_config": config, "question": "q", "answer": "1", "metadata": "{}"}
    with pytest.raises(DataError, match=r"rows.jsonl:1: gym_config .* names variables the reward cannot score"):
        check_row(row, "rows.jsonl:1")


def test_gym_generate_refuses_an_unscorable_variable_setting_in_one_line(tmp_path):
    out = tmp_path / "x.jsonl"
    result = subprocess.run([sys.executable, "-W", "ignore", "-m", "swift_plugins", "gym", "generate",
                             "polynomial_multiplication", "variables=('alpha',)", "--size", "2", "--out", str(out)],
                            capture_output=True, text=True, cwd=REPO, timeout=120)  # fmt: skip
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 2 and len(lines) == 1 and not out.exists(), result.stderr
    assert "gym:polynomial_multiplication: variables=\"('alpha',)\" names variables the reward cannot score" in lines[0]


def test_the_forms_the_reward_paid_0_before_score_1(rows):
    golds = load("golds.jsonl.gz")
    # coin_flip: 9 heads in 9 flips, 0.001953125, rounded to 4 places; the hack it closed (0) stays closed
    [nine] = [row for row in golds["coin_flip"] if row["answer"] == "0.001953125"][:1]
    assert through_the_reward(["0.0020", "0.002", "0.00195", "0", "0.0", "0.0030"], [nine] * 6) == [1, 1, 1, 0, 0, 0]
    halting = rows["game_of_life_halting"][0]
    gold, other = halting["answer"], {"True": "False", "False": "True"}[halting["answer"]]
    answers = [f"{gold}.", f"'{gold}'", f"**{gold}**", f"{other}.", f"**{other}**", f"{gold} or {other}"]
    assert through_the_reward(answers, [halting] * 6) == [1, 1, 1, 0, 0, 0]
    integration = next(row for row in rows["intermediate_integration"] if "exp(" in row["answer"])
    answers = [integration["answer"].replace("exp(", "E**(").replace("+ C", f"+ {name}") for name in ("K", "c", "C1")]
    assert through_the_reward([*answers, "x + C"], [integration] * 4) == [1, 1, 1, 0]
    # an antiderivative written with a function the gold answers do not use (as reasoning-gym's own test cases write
    # an entry: the integrand and its variable)
    written = {"gym_config": "{}", "question": "", "answer": None}
    cases = [("1/cos(x)**2", "tan(x) + K"), ("cosh(x)", "sinh(x)"), ("1/x", "ln(x) + C"), ("1/x", "log(x, 2) + C")]
    rows = [{**written, "gym_dataset": "intermediate_integration", "metadata": json.dumps(
        {"integrand": integrand, "variable": "x"})} for integrand, _ in cases]  # fmt: skip
    assert through_the_reward([answer for _, answer in cases], rows) == [1, 1, 1, 0]


def upstream_cases():
    with gzip.open(FIXTURES / "upstream.jsonl.gz", "rt", encoding="utf-8") as file:
        cases = [json.loads(line) for line in file]
    return [case for case in cases if case["gym_dataset"] in dataset_names()]


def scored_by_the_reward(cases):
    return [(case, through_the_reward([case["given"]], [case])[0]) for case in cases]


def test_reasoning_gyms_own_test_cases_score_alike_through_the_reward():
    cases = upstream_cases()
    accepted = []
    for case in cases:  # settings the package refuses (an enum, a board format) are not served as rows
        try:
            check_config(case["gym_dataset"], case["gym_config"])
            accepted.append(case)
        except ValueError:
            continue
    with ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("fork")) as pool:
        scored = [pair for chunk in pool.map(scored_by_the_reward, [accepted[0::2], accepted[1::2]]) for pair in chunk]
    unpaid = {(case["gym_dataset"], case["given"]) for case, value in scored if case["upstream"] >= 1.0 > value}
    paid_more = [(case["gym_dataset"], case["given"]) for case, value in scored if value >= 1.0 > case["upstream"]]
    assert unpaid == set(STRICTER) and paid_more == []
    assert len({case["gym_dataset"] for case in accepted}) >= 90 and len(accepted) >= 0.9 * len(cases)
    given = {(case["gym_dataset"], case["given"]) for case in accepted}
    assert {("simple_integration", "x**2 + K"), ("simple_integration", "sin(x) + D")} <= given
