"""Generated puzzles: solvable, distinct, reproducible, within their bounds."""

import itertools

import pytest

from swift_plugins.core.errors import SettingError
from swift_plugins.countdown.generator import CountdownConfig, generate
from swift_plugins.countdown.rewards import countdown_accuracy_reward
from swift_plugins.countdown.solver import solve


def test_every_row_is_solvable_and_its_solution_scores_one():
    rows = list(generate(CountdownConfig(), count=300, seed=1))
    assert len(rows) == 300
    for row in rows:
        assert solve(row["nums"], row["target"]) is not None
    completions = [f"<think>…</think><answer>{row['solution']} = {row['target']}</answer>" for row in rows]
    rewards = countdown_accuracy_reward(completions, [r["nums"] for r in rows], [r["target"] for r in rows])
    assert rewards == [1.0] * 300


def test_rows_are_distinct_puzzles():
    rows = list(generate(CountdownConfig(min_count=2, max_count=2, max_number=9, max_target=20), count=110, seed=3))
    keys = {(tuple(sorted(r["nums"])), r["target"]) for r in rows}
    assert len(keys) == len(rows) == 110


def test_same_seed_same_rows_whatever_the_worker_count():
    config = CountdownConfig()
    one = list(generate(config, count=5000, seed=11, jobs=1))
    assert list(generate(config, count=5000, seed=11, jobs=2)) == one
    assert list(generate(config, count=5000, seed=12, jobs=1)) != one


def test_options_bound_the_rows():
    config = CountdownConfig(min_count=2, max_count=3, min_number=10, max_number=20, min_target=20, max_target=60)
    rows = list(generate(config, count=200, seed=5))
    assert {len(r["nums"]) for r in rows} == {2, 3}
    assert all(10 <= n <= 20 for r in rows for n in r["nums"])
    assert all(20 <= r["target"] <= 60 for r in rows)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"min_count": 1}, "counts"),
        ({"max_count": 5}, "counts"),
        ({"min_count": 4, "max_count": 3}, "counts"),
        ({"min_number": 0}, "numbers"),
        ({"min_number": 50, "max_number": 10}, "numbers"),
        ({"min_target": 0}, "targets"),
    ],
)
def test_bad_config_is_refused(kwargs, message):
    with pytest.raises(ValueError, match=message):
        CountdownConfig(**kwargs)


TINY = CountdownConfig(min_count=2, max_count=2, min_number=1, max_number=2, min_target=1, max_target=3)


@pytest.mark.parametrize(
    "config", [TINY, CountdownConfig(min_count=2, max_count=4, min_number=3, max_number=7, min_target=5, max_target=9)]
)
def test_capacity_is_the_number_of_distinct_puzzles(config):
    counts = range(config.min_count, config.max_count + 1)
    values = range(config.min_number, config.max_number + 1)
    targets = range(config.min_target, config.max_target + 1)
    puzzles = {
        (tuple(sorted(nums)), t) for k in counts for nums in itertools.product(values, repeat=k) for t in targets
    }
    assert config.capacity == len(puzzles)


def test_asking_for_more_puzzles_than_the_ranges_allow_is_refused_before_any_draw():
    with pytest.raises(
        SettingError, match=r"asked for 10 puzzles, more than the 9 distinct ones allowed by 2 numbers of 1-2"
    ):
        generate(TINY, count=10, seed=0)  # not even iterated: refused at the call
    with pytest.raises(SettingError, match=r"more than the 437,206,275 distinct ones allowed by 3-4 numbers of 1-99"):
        generate(CountdownConfig(), count=10**20, seed=0)


def test_asking_for_more_than_the_solvable_puzzles_stops_with_the_count_found():
    # 9 puzzles, 6 solvable: {1,1} makes 1 and 2, {1,2} makes 1, 2 and 3, {2,2} makes 1
    with pytest.raises(
        SettingError, match=r"asked for 7 puzzles, but 2 numbers of 1-2 with targets 1-3 seem to hold only 6"
    ):
        list(generate(TINY, count=7, seed=0))
    assert len(list(generate(TINY, count=6, seed=0))) == 6
