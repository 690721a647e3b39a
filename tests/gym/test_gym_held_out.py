"""The held-out splits of ``gym generate``: no question in two splits, seeded, random among the distinct questions
drawn, so they follow the training mix."""

import json

import pytest
from scipy.stats import binom

from swift_plugins.core.errors import DataError
from swift_plugins.gym.entries import encode
from swift_plugins.gym.generator import generate
from swift_plugins.gym.settings import parse_settings

from ..helpers import generated_splits

SIZES = {"train": 400, "dev": 50, "test": 100}
# 121 questions at most ("Calculate 4 + 7."): a few hundred items repeat some
SMALL = ["max_terms=2", "max_digits=1", "operators=('+',)", "allow_negation=False", "allow_parentheses=False"]


@pytest.fixture(scope="module")
def splits(tmp_path_factory):
    """The files of seed 0 (twice, to other paths), of seed 1, and of seed 1 on split seed 0, by split."""
    return generated_splits(tmp_path_factory.mktemp("gym_held_out"), "gym", "generate", "basic_arithmetic", "--size",
                            "400", "--dev-size", "50", "--test-size", "100")  # fmt: skip


def questions(data):
    return [json.loads(line)["question"] for line in data.decode().splitlines()]


def test_a_seed_gives_the_same_files_and_another_seed_other_ones(splits):
    assert splits["a"] == splits["b"]
    assert all(splits["a"][split] != splits["c"][split] for split in SIZES)
    for files in splits.values():
        found = {split: questions(data) for split, data in files.items()}
        assert {split: len(set(asked)) for split, asked in found.items()} == SIZES
        assert sum(map(len, found.values())) == len(set().union(*found.values()))  # no question twice


def test_a_split_seed_holds_out_the_same_questions_for_every_seed(splits):
    seed0, seed1 = splits["a"], splits["d"]
    assert seed1["dev"] == seed0["dev"] and seed1["test"] == seed0["test"]
    assert seed1["train"] != seed0["train"] and sorted(questions(seed1["train"])) == sorted(questions(seed0["train"]))


def test_held_out_rows_are_chosen_at_random_among_the_items_of_the_training_seeds(splits):
    # basic_arithmetic's default questions do not repeat in 550 items: the split is a choice of 150 of them
    pool = generate("basic_arithmetic", size=sum(SIZES.values()), seed=0).train
    position = {row["question"]: index for index, row in enumerate(pool)}
    found = {split: questions(data) for split, data in splits["a"].items()}
    assert sorted(position[question] for asked in found.values() for question in asked) == list(range(len(pool)))
    # Chosen at random, the count from the first half of the seeds is hypergeometric; its binomial interval is
    # wider, so a correct split fails it less than once in 1,000 seeds. Held out from the last seeds, it is 0.
    first_half = sum(position[question] < len(pool) / 2 for question in found["test"])
    low, high = binom.interval(0.999, SIZES["test"], 0.5)
    assert low <= first_half <= high, f"{first_half} of {SIZES['test']} held-out rows from the first half of the seeds"


def test_held_out_questions_follow_the_training_mix():
    # chain_sum's sums of one-digit numbers are few and many seeds draw each: held out once per question but
    # trained on every time, they were 33% of the held-out rows and 14% of the training rows
    settings_ = parse_settings("chain_sum", ["max_terms=2", "max_digits=2"])
    split = generate("chain_sum", size=1500, test_size=500, seed=0, settings=settings_)

    def one_digit(rows):
        return sum(json.loads(row["metadata"])["num_digits"] == 1 for row in rows)

    share = one_digit(split.train) / len(split.train)
    low, high = binom.interval(0.999, len(split.test), share)
    assert low <= one_digit(split.test) <= high


def test_no_question_is_in_both_splits_even_when_questions_repeat():
    settings_ = parse_settings("basic_arithmetic", SMALL)
    split = generate("basic_arithmetic", size=1000, test_size=10, seed=0, settings=settings_)
    train_questions = [row["question"] for row in split.train]
    held_questions = {row["question"] for row in split.test}
    assert len(set(train_questions)) == 111  # the small space repeats: every question the test rows leave
    assert len(split.train) == 1000 and len(held_questions) == len(split.test) == 10
    assert not set(train_questions) & held_questions
    assert generate("basic_arithmetic", size=1000, test_size=10, seed=0, settings=settings_) == split
    assert {row["gym_config"] for row in split.train + split.test} == {encode(settings_)}


@pytest.mark.parametrize(
    ("sizes", "message"),
    [
        ({"test_size": 122}, "only 121 distinct questions in 2018 items, fewer than the 122 held-out ones asked for"),
        ({"test_size": 61, "dev_size": 60}, "121 distinct questions in 22017 items, 121 of them held out: 0 items left "
         "for the 1000 training rows"),
    ],
)  # fmt: skip
def test_too_few_questions_for_the_sizes_are_refused(sizes, message):
    settings_ = parse_settings("basic_arithmetic", SMALL)
    with pytest.raises(DataError, match=message):
        generate("basic_arithmetic", size=1000, seed=0, settings=settings_, **sizes)
