"""The held-out split of ``gym generate``: no question in both splits, seeded, and random among the items drawn."""

import json

import pytest
from scipy.stats import binom

from swift_plugins.core.errors import DataError
from swift_plugins.gym.entries import encode
from swift_plugins.gym.generator import generate
from swift_plugins.gym.settings import parse_settings

from ..helpers import generated_splits

TRAIN, HELD_OUT = 400, 100
# 121 questions at most ("Calculate 4 + 7."): a few hundred items repeat some
SMALL = ["max_terms=2", "max_digits=1", "operators=('+',)", "allow_negation=False", "allow_parentheses=False"]


@pytest.fixture(scope="module")
def splits(tmp_path_factory):
    """The files of seed 0 (twice, to other paths) and of seed 1: (train bytes, held-out bytes) each."""
    return generated_splits(tmp_path_factory.mktemp("gym_held_out"), "gym", "generate", "basic_arithmetic", "--size",
                            str(TRAIN), "--test-size", str(HELD_OUT))  # fmt: skip


def questions(data):
    return [json.loads(line)["question"] for line in data.decode().splitlines()]


def test_a_seed_gives_the_same_files_and_another_seed_other_ones(splits):
    assert splits["a"] == splits["b"]
    assert splits["a"][0] != splits["c"][0] and splits["a"][1] != splits["c"][1]
    for train, held_out in splits.values():
        assert len(questions(train)) == TRAIN and len(set(questions(held_out))) == HELD_OUT
        assert not set(questions(train)) & set(questions(held_out))


def test_held_out_rows_are_chosen_at_random_among_the_items_of_the_training_seeds(splits):
    # basic_arithmetic's default questions do not repeat in 500 items: the split is a choice of 100 of them
    pool, _ = generate("basic_arithmetic", size=TRAIN + HELD_OUT, seed=0)
    position = {row["question"]: index for index, row in enumerate(pool)}
    train, held_out = (questions(data) for data in splits["a"])
    assert sorted(position[question] for question in train + held_out) == list(range(TRAIN + HELD_OUT))
    # Chosen at random, the count from the first half of the seeds is hypergeometric; its binomial interval is
    # wider, so a correct split fails it less than once in 1,000 seeds. Held out from the last seeds, it is 0.
    first_half = sum(position[question] < len(pool) / 2 for question in held_out)
    low, high = binom.interval(0.999, HELD_OUT, 0.5)
    assert low <= first_half <= high, f"{first_half} of {HELD_OUT} held-out rows from the first half of the seeds"


def test_no_question_is_in_both_splits_even_when_questions_repeat():
    settings_ = parse_settings("basic_arithmetic", SMALL)
    train, held_out = generate("basic_arithmetic", size=60, test_size=10, seed=0, settings=settings_)
    train_questions = [row["question"] for row in train]
    held_questions = {row["question"] for row in held_out}
    assert len(set(train_questions)) < len(train_questions)  # the small space repeats: the check is needed
    assert len(train) == 60 and len(held_questions) == len(held_out) == 10
    assert not set(train_questions) & held_questions
    assert generate("basic_arithmetic", size=60, test_size=10, seed=0, settings=settings_) == (train, held_out)
    assert {row["gym_config"] for row in train + held_out} == {encode(settings_)}


@pytest.mark.parametrize(
    ("test_size", "message"),
    [
        (122, "only 121 distinct questions in 1122 items, fewer than the 122 held-out ones asked for"),
        (121, "the held-out questions took 1000 training items, and only 0 of the 20000 items after those have"),
    ],
)
def test_too_few_questions_for_the_sizes_are_refused(test_size, message):
    settings_ = parse_settings("basic_arithmetic", SMALL)
    with pytest.raises(DataError, match=message):
        generate("basic_arithmetic", size=1000, test_size=test_size, seed=0, settings=settings_)
