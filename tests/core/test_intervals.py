"""The intervals against scipy's own: Wilson's score interval is computed in closed form (scipy.stats takes most of a
command's start-up), so it is checked here against ``binomtest(...).proportion_ci(method="wilson")``."""

import pytest
from scipy.stats import binomtest

from swift_plugins.core.intervals import wilson


@pytest.mark.parametrize("trials", [*range(1, 41), 100, 400, 500, 1280])
def test_wilsons_interval_is_scipys_for_every_count(trials):
    for successes in range(trials + 1):
        scipy = binomtest(successes, trials).proportion_ci(confidence_level=0.95, method="wilson")
        assert wilson(successes, trials) == (round(scipy.low, 4), round(scipy.high, 4))

