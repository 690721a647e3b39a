"""reward-collapse on simulated rewards: never fatal without a trend, however noisy the steps; still fatal on a real
fall (benchmarks/bench_watch_collapse.py measures the rates over many runs)."""

import random

import pytest

from swift_plugins.watch import judge


def simulated(levels: list[tuple[int, float]], spread: float, seed: int) -> list[dict]:
    """Step records whose accuracy (and total reward) is drawn around ``level`` for ``steps`` steps, for each
    ``(steps, level)`` in turn: a normal of that spread, clipped to [0, 1], as a small batch's accuracy swings."""
    rng = random.Random(seed)
    values = [min(1.0, max(0.0, rng.gauss(level, spread))) for steps, level in levels for _ in range(steps)]
    return [{"step": step, "reward": value, "rewards/Accuracy/mean": value} for step, value in enumerate(values, 1)]


@pytest.mark.parametrize(("mean", "spread"), [(0.5, 0.25), (0.6, 0.20)])
@pytest.mark.parametrize("seed", range(3))
def test_no_fatal_verdict_on_a_reward_without_a_trend(mean, spread, seed):
    # the 3-GPU recipe's length; before the noise margin, 39 of 40 such runs at 0.5 +- 0.25 went fatal
    verdicts = judge(simulated([(3093, mean)], spread, seed))
    assert not [verdict for verdict in verdicts if verdict.fatal], [verdict.line() for verdict in verdicts]


@pytest.mark.parametrize("seed", range(3))
def test_a_noisy_reward_that_falls_is_still_fatal(seed):
    verdicts = judge(simulated([(300, 0.5), (200, 0.1)], 0.25, seed))
    fatal = [verdict for verdict in verdicts if verdict.fatal]
    assert {verdict.rule for verdict in fatal} == {"reward-collapse"}, [verdict.line() for verdict in verdicts]
    assert 300 < fatal[0].step <= 300 + 20 + 20  # within a window plus the patience
    # before the fall; on a reward this noisy, from the last time its average was near its best: a cautious since
    assert 200 <= fatal[0].since < 300
