"""The held-out splits of ``countdown generate``: disjoint from training, seeded, and random among the puzzles drawn.

The puzzles are the demo's: 3 numbers of 1-10 and targets of 1-30 hold 2,025 distinct solvable puzzles, and the
demo draws 2,000 of them: 1,000 to train, 500 development puzzles for choices, 500 test puzzles for the figures.
Drawing distinct puzzles one by one reaches the ones with a repeated number last (fewer orderings of the numbers
reach them), so a split that took the last rows drawn held out mostly those.
"""

import json

import pytest
from scipy.stats import binom

from swift_plugins.countdown.data import puzzle_key

from ..helpers import generated_splits

DEMO = ("--count", "3", "--numbers", "1-10", "--targets", "1-30")
SIZES = {"train": 1000, "dev": 500, "test": 500}


@pytest.fixture(scope="module")
def splits(tmp_path_factory):
    """The files of seed 0 (twice, to other paths), of seed 1, and of seed 1 on split seed 0, by split."""
    return generated_splits(tmp_path_factory.mktemp("held_out"), "countdown", "generate", "--size", "1000",
                            "--dev-size", "500", "--test-size", "500", *DEMO, "--jobs", "1")  # fmt: skip


def rows(data):
    return [json.loads(line) for line in data.decode().splitlines()]


def keys(data):
    return [puzzle_key(row["nums"], row["target"]) for row in rows(data)]


def repeats_a_number(row):
    return len(set(row["nums"])) < len(row["nums"])


def test_no_puzzle_is_in_two_splits(splits):
    for files in splits.values():
        found = {split: set(keys(data)) for split, data in files.items()}
        assert {split: len(puzzles) for split, puzzles in found.items()} == SIZES
        assert not found["train"] & found["dev"] and not found["train"] & found["test"]
        assert not found["dev"] & found["test"]


def test_a_seed_gives_the_same_files_and_another_seed_other_ones(splits):
    assert splits["a"] == splits["b"]
    assert all(splits["a"][split] != splits["c"][split] for split in SIZES)


def test_a_split_seed_holds_out_the_same_puzzles_for_every_seed(splits):
    seed0, seed1 = splits["a"], splits["d"]
    assert seed1["dev"] == seed0["dev"] and seed1["test"] == seed0["test"]
    assert seed1["train"] != seed0["train"] and sorted(keys(seed1["train"])) == sorted(keys(seed0["train"]))


@pytest.mark.parametrize(("name", "split"), [("a", "test"), ("a", "dev"), ("c", "test")])
def test_held_out_puzzles_repeat_a_number_as_often_as_the_puzzles_drawn(splits, name, split):
    drawn = [row for data in splits[name].values() for row in rows(data)]
    held = sum(map(repeats_a_number, rows(splits[name][split])))
    share = sum(map(repeats_a_number, drawn)) / len(drawn)
    # Held out at random, the count is hypergeometric; the binomial interval around the share of all puzzles
    # drawn (about 0.36) is wider, so a correct split fails it less than once in 1,000 seeds. It spans 36% ± 7
    # points; held out last, 55% to 61% of the puzzles repeated a number.
    low, high = binom.interval(0.999, SIZES[split], share)
    assert low <= held <= high, f"{held / SIZES[split]:.1%} of {split} puzzles repeat a number, of all {share:.1%}"
