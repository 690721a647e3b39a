"""The README's table of what the eval-based reference reward (benchmarks/bench_rewards.py) gets wrong."""

import pytest

from swift_plugins.countdown.rewards import countdown_accuracy_reward

from ..helpers import REPO, load_script

bench = load_script(REPO / "benchmarks" / "bench_rewards.py")

TABLE = [  # (answer, nums, target, reference, ours)
    ("1.5*2", [1, 5, 2], 3, 1.0, 0.0),
    ("7 // 2", [7, 2], 3, 1.0, 0.0),
    ("-1 + 2 + 3", [1, 2, 3], 4, 1.0, 0.0),
    ("10000001 / 10000000", [10000001, 10000000], 1, 1.0, 0.0),
    ("(6 - 2) * 6 = 25", [6, 2, 6], 24, 1.0, 0.0),
    ("(6 - 2)\n* 6", [6, 2, 6], 24, 0.0, 1.0),
    ("(6 - 2) * 6", ["6", "2", "6"], "24", 0.0, 1.0),
]


@pytest.mark.parametrize(("answer", "nums", "target", "reference", "ours"), TABLE)
def test_reference_and_ours_on_the_known_hacks(answer, nums, target, reference, ours):
    completion = f"<think>…</think><answer>{answer}</answer>"
    assert bench.reference_reward([completion], target=[target], nums=[nums]) == [reference]
    assert countdown_accuracy_reward([completion], nums=[nums], target=[target]) == [ours]


def test_reference_hangs_on_a_power_tower():
    assert bench.reference_hangs(seconds=2.0)
