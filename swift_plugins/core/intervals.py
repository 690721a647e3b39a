"""95% intervals of held-out rates: a rate over prompts, and the change between two stages on the same prompts.

A rate of right-or-wrong answers (one greedy answer a prompt, or pass@N) gets Wilson's score interval; a rate of
fractions (pass@k from several samples a prompt) the normal interval of a mean over prompts, the prompts being the
independent units (Miller, "Adding Error Bars to Evals", 2024). The change between two stages answered on the same
prompts gets Newcombe's interval for *paired* proportions (method 10 of Newcombe, Statistics in Medicine 17, 1998)
when both are right-or-wrong, else the normal interval of the mean paired difference; both are narrower than treating
the stages as independent samples when their answers agree.

>>> wilson(8, 100)
(0.0411, 0.15)
>>> paired_difference([False] * 200, [True] * 20 + [False] * 180)  # 20 of 200 prompts newly solved
(0.1, (0.0608, 0.1494))
>>> mean_interval([0.5, 0.25, 0.75, 0.5])
(0.5, (0.1752, 0.8248))
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from math import sqrt
from statistics import NormalDist, fmean, stdev

from .errors import DataError

__all__ = ["CONFIDENCE", "mean_interval", "paired_change", "paired_difference", "rate_interval", "wilson"]

CONFIDENCE = 0.95


def wilson(successes: int, trials: int) -> tuple[float, float]:
    """The 95% Wilson score interval of ``successes / trials``, rounded to 4 places."""
    low, high = _raw_wilson(successes, trials)
    return round(low, 4), round(high, 4)


def paired_difference(before: Sequence[bool], after: Sequence[bool]) -> tuple[float, tuple[float, float]]:
    """``after`` rate minus ``before`` rate over the same items, with Newcombe's 95% paired interval."""
    if len(before) != len(after) or not before:
        raise ValueError("paired outcomes need two equally long, non-empty sequences")
    n = len(before)
    pairs = Counter(zip(map(bool, before), map(bool, after), strict=True))
    both, only_before, only_after, neither = (pairs[key] for key in ((1, 1), (1, 0), (0, 1), (0, 0)))
    p_before, p_after = (both + only_before) / n, (both + only_after) / n
    low_b, high_b = _raw_wilson(both + only_before, n)
    low_a, high_a = _raw_wilson(both + only_after, n)
    margins = (both + only_before) * (neither + only_after) * (both + only_after) * (neither + only_before)
    cross = both * neither - only_before * only_after
    phi = 0.0 if margins == 0 else max(cross - n / 2, 0) / sqrt(margins) if cross > 0 else cross / sqrt(margins)
    difference = p_after - p_before
    low = difference - sqrt(
        max((p_after - low_a) ** 2 - 2 * phi * (p_after - low_a) * (high_b - p_before) + (high_b - p_before) ** 2, 0)
    )
    high = difference + sqrt(
        max((high_a - p_after) ** 2 - 2 * phi * (high_a - p_after) * (p_before - low_b) + (p_before - low_b) ** 2, 0)
    )
    return round(difference, 4), (round(low, 4), round(high, 4))


def _raw_wilson(successes: int, trials: int) -> tuple[float, float]:
    z = NormalDist().inv_cdf((1 + CONFIDENCE) / 2)
    rate = successes / trials
    centre = (rate + z * z / (2 * trials)) / (1 + z * z / trials)
    half = z / (1 + z * z / trials) * sqrt(rate * (1 - rate) / trials + z * z / (4 * trials * trials))
    return max(centre - half, 0.0), min(centre + half, 1.0)


def _t_quantile(degrees: int) -> float:
    """Student's t quantile of a two-sided 95% interval with ``degrees`` of freedom."""
    from scipy.stats import t  # imported here: scipy.stats alone takes most of a command's start-up

    return float(t.ppf((1 + CONFIDENCE) / 2, degrees))


def mean_interval(values: Sequence[float]) -> tuple[float, tuple[float, float]]:
    """The mean of per-prompt ``values`` in [0, 1] and its 95% interval (Student's t over prompts, kept in [0, 1])."""
    if not values:
        raise DataError("no prompts to average")
    mean = fmean(values)
    half = _t_quantile(len(values) - 1) * stdev(values) / sqrt(len(values)) if len(values) > 1 else 1.0
    return round(mean, 4), (round(max(mean - half, 0.0), 4), round(min(mean + half, 1.0), 4))


def rate_interval(values: Sequence[float]) -> tuple[float, tuple[float, float]]:
    """The rate of per-prompt ``values`` and its 95% interval: Wilson's where every value is 0 or 1, else
    :func:`mean_interval`.

    >>> rate_interval([1.0, 0.0, 0.0, 0.0])
    (0.25, (0.0456, 0.6994))
    """
    if all(value in (0, 1) for value in values):
        return round(fmean(values), 4), wilson(int(sum(values)), len(values))
    return mean_interval(values)


def paired_change(before: Sequence[float], after: Sequence[float]) -> tuple[float, tuple[float, float]]:
    """``after`` minus ``before`` over the same prompts (per-prompt rates in [0, 1]) with its 95% interval:
    :func:`paired_difference` where every value is 0 or 1, else the t interval of the mean per-prompt difference.

    >>> paired_change([0.0, 0.5, 0.25, 0.0], [0.25, 0.5, 0.75, 0.25])
    (0.25, (-0.0748, 0.5748))
    """
    if all(value in (0, 1) for value in (*before, *after)):
        return paired_difference([bool(v) for v in before], [bool(v) for v in after])
    if len(before) != len(after) or not before:
        raise ValueError("paired outcomes need two equally long, non-empty sequences")
    differences = [a - b for b, a in zip(before, after, strict=True)]
    mean = fmean(differences)
    spread = stdev(differences) if len(differences) > 1 else 0.0
    half = _t_quantile(max(len(differences) - 1, 1)) * spread / sqrt(len(differences))
    return round(mean, 4), (round(mean - half, 4), round(mean + half, 4))
