"""The cold start's worked steps: every row of a dataset that has them gets them, and they end at the gold answer."""

import re

import pytest

from swift_plugins.gym.cold_start import NO_STEPS, assistant_turn
from swift_plugins.gym.generator import generate


def _think(row):
    """The think part of the row's cold-start answer."""
    return assistant_turn(row).split("<think>\n", 1)[1].split("\n</think>", 1)[0]


@pytest.mark.parametrize(
    ("name", "settings"),
    [
        ("chain_sum", {"max_terms": 2, "max_digits": 2}),
        ("leg_counting", {"min_animals": 2, "max_animals": 2, "max_instances": 9}),
        ("letter_counting", {"min_words": 3, "max_words": 5}),
        ("letter_counting", {}),  # reasoning-gym's defaults: 5 to 15 words
    ],
)
def test_every_row_of_a_dataset_with_worked_steps_gets_them(name, settings):
    rows = generate(name, size=200, seed=7, settings=settings).train
    for row in rows:
        think = _think(row)
        assert think != NO_STEPS, row["question"]
        assert re.findall(r"-?\d+", think)[-1] == row["answer"], think  # the last step's result is the gold answer


def test_letter_counting_spells_each_word_with_its_count():
    rows = generate("letter_counting", size=50, seed=3, settings={"min_words": 3, "max_words": 5}).train
    for row in rows:
        think = _think(row)
        words = row["question"].rsplit('"', 2)[1].split()
        letter = row["question"].split('"', 2)[1]
        for word in words:
            lowered = word.lower()
            assert f'{lowered}: {" ".join(lowered)} has {lowered.count(letter)} "{letter}"' in think
        assert think.endswith(f"= {row['answer']}.")
