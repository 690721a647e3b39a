"""The score report every task shares: accuracy, format and truncation rates, pass@k, failure kinds.

A task's scorer turns result rows into samples (anything with ``key``, ``verdict``, ``formatted``
and ``truncated``: the prompt it answers, the judge's verdict, and two flags), then adds its own
breakdowns to :func:`summarise`'s figures.

>>> from types import SimpleNamespace as S
>>> samples = [S(key="q1", verdict="correct", formatted=True, truncated=False),
...            S(key="q1", verdict="no answer", formatted=False, truncated=True)]
>>> report = summarise(samples)
>>> report["accuracy"], report["pass_at_k"], report["solve_counts"], report["failures"]
(0.5, {'1': 0.5, '2': 1.0}, {'1': 1}, {'no answer': 1})
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from math import comb
from typing import Any

from .errors import DataError
from .intervals import rate_interval

__all__ = [
    "CORRECT",
    "ends_inside_block",
    "is_correct",
    "is_truncated",
    "pass_at_k",
    "rate",
    "summarise",
    "summary_lines",
    "table_lines",
]

CORRECT = "correct"  # the verdict of a right answer, whatever the task


def is_correct(sample: Any) -> bool:
    return sample.verdict == CORRECT


def pass_at_k(samples: int, correct: int, k: int) -> float:
    """Unbiased pass@k of one prompt with ``correct`` of ``samples`` right (Chen et al., 2021).

    >>> pass_at_k(4, 1, 2)
    0.5
    """
    return 1.0 if samples - correct < k else 1.0 - comb(samples - correct, k) / comb(samples, k)


def rate(samples: Sequence[Any], test: Callable[[Any], bool]) -> float:
    """The share of ``samples`` passing ``test``, rounded to 4 places (0.0 for none)."""
    return round(sum(map(test, samples)) / len(samples), 4) if samples else 0.0


def ends_inside_block(text: str, tags: Iterable[str]) -> bool:
    """Whether ``text`` opens one of the ``tags`` after its last closing: a response cut off mid-block.

    >>> ends_inside_block("<think>a</think><answer>1", ["think", "answer"])
    True
    """
    return any(text.rfind(f"<{tag}>") > text.rfind(f"</{tag}>") for tag in tags)


def is_truncated(row: dict[str, Any], response: str, tags: Iterable[str]) -> bool:
    """Whether a result row's response was cut off by the token limit.

    Rows written by ``evaluate`` carry swift's ``finish_reason`` (``"length"`` when the response
    reached ``--max_new_tokens`` tokens); in rows without one (plain ``swift infer``) a response that
    ends inside one of ``tags`` is taken as cut off, which misses a cut between blocks.

    >>> is_truncated({"finish_reason": "length"}, "<think>a</think><answer>1</answer>", ["think", "answer"])
    True
    >>> is_truncated({}, "<think>a", ["think", "answer"])
    True
    """
    reason = row.get("finish_reason")
    if reason is not None:
        return reason == "length"
    return ends_inside_block(response, tags)


def summarise(samples: Sequence[Any], unit: str = "prompt") -> dict[str, Any]:
    """The figures every task reports; samples are grouped by ``key`` (one ``unit``) for pass@k.

    pass@k is the mean over ``unit``s of each one's unbiased estimate, for every k up to the fewest samples a
    ``unit`` has, each with its 95% interval over ``unit``s (:func:`~.intervals.rate_interval`); ``solve_counts``
    counts the ``unit``s by how many of their samples are right.
    """
    if not samples:
        raise DataError("no results to score")
    groups: dict[Any, list[Any]] = defaultdict(list)
    for sample in samples:
        groups[sample.key].append(sample)
    k_max = min(len(group) for group in groups.values())
    solved = [(len(group), sum(map(is_correct, group))) for group in groups.values()]
    passes = {k: rate_interval([pass_at_k(n, c, k) for n, c in solved]) for k in range(1, k_max + 1)}
    return {
        "samples": len(samples),
        f"{unit}s": len(groups),
        f"samples_per_{unit}": k_max if k_max == max(len(g) for g in groups.values()) else "varies",
        "accuracy": rate(samples, is_correct),
        "format_rate": rate(samples, lambda s: s.formatted),
        "truncation_rate": rate(samples, lambda s: s.truncated),
        "pass_at_k": {str(k): value for k, (value, _) in passes.items()},
        "pass_at_k_ci95": {str(k): interval for k, (_, interval) in passes.items()},
        "solve_counts": {str(c): n for c, n in sorted(Counter(c for _, c in solved).items())},
        "failures": dict(Counter(s.verdict for s in samples if not is_correct(s)).most_common()),
    }


def summary_lines(
    report: dict[str, Any], format_label: str, unit: str = "prompt", rates: Sequence[tuple[str, str]] = ()
) -> list[str]:
    """The head of a report as text: counts, then accuracy, ``rates`` (label, key), format, truncation, pass@k."""
    lines = [
        f"samples {report['samples']}   {unit}s {report[unit + 's']}   "
        f"samples per {unit} {report['samples_per_' + unit]}",
        "",
        f"{'accuracy':<28}{report['accuracy']:>8.2%}",
    ]
    lines += [f"{label:<28}{report[key]:>8.2%}" for label, key in rates]
    lines += [
        f"{format_label:<28}{report['format_rate']:>8.2%}",
        f"{'truncated':<28}{report['truncation_rate']:>8.2%}",
    ]
    intervals = report.get("pass_at_k_ci95", {})
    for k, value in report["pass_at_k"].items():
        low, high = intervals.get(k, (value, value))
        lines.append(f"{f'pass@{k}':<28}{value:>8.2%}   [{low:.1%}, {high:.1%}]")
    return lines


def table_lines(title: str, rows: dict[str, Any], columns: tuple[str, str], cell: Callable[[Any], tuple]) -> list[str]:
    """A titled two-column table: ``cell(value)`` gives the (count, share) of each row."""
    lines = ["", f"{title:<20}{columns[0]:>8}{columns[1]:>10}"]
    for key, value in rows.items():
        count, share = cell(value)
        lines.append(f"  {key:<18}{count:>8}{share:>10.2%}")
    return lines
