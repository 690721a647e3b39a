"""Before/after tables of held-out evaluations, with 95% intervals.

Each stage (base model, SFT checkpoint, GRPO checkpoint, …) is an :func:`.evaluate.evaluate`
folder of any task: ``examples.jsonl`` holds one scored greedy answer per prompt, each with the
``key`` of its prompt (a Countdown puzzle, a GSM8K question). Rates get Wilson score
intervals; the change between two stages, measured on the same prompts, gets Newcombe's interval
for a difference of *paired* proportions (method 10 of Newcombe, Statistics in Medicine 17, 1998),
which is narrower than treating the stages as independent samples when their answers agree.

>>> wilson(8, 100)
(0.0411, 0.15)
>>> paired_difference([False] * 200, [True] * 20 + [False] * 180)  # 20 of 200 prompts newly solved
(0.1, (0.0608, 0.1494))
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from itertools import pairwise
from math import sqrt
from pathlib import Path
from typing import Any

from scipy.stats import binomtest

from ..core.errors import DataError
from ..core.files import read_rows, write_text
from ..core.scoring import CORRECT

__all__ = ["compare", "format_markdown", "paired_difference", "wilson", "write_comparison"]

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
    interval = binomtest(successes, trials).proportion_ci(confidence_level=CONFIDENCE, method="wilson")
    return float(interval.low), float(interval.high)


def _outcomes(folder: Path) -> dict[str, tuple[bool, bool]]:
    """Prompt key -> (correct, well formatted) of one evaluation folder's examples."""
    path = folder / "examples.jsonl"
    if not path.is_file():
        raise DataError(f"{folder}: no examples.jsonl (is this an evaluate output folder?)")
    outcomes = {}
    for where, row in read_rows(path):
        if "key" not in row:
            raise DataError(f"{where}: no 'key' of its prompt (written by an older evaluate): evaluate again")
        key = json.dumps(row["key"])
        if key in outcomes:
            raise DataError(f"{where}: prompt {key} answered twice; compare takes one greedy answer per prompt")
        outcomes[key] = (row["verdict"] == CORRECT, bool(row["formatted"]))
    return outcomes


def compare(stages: dict[str, Path]) -> dict[str, Any]:
    """Rates with intervals per stage, and the paired change of each stage over the one before it."""
    outcomes = {name: _outcomes(Path(folder)) for name, folder in stages.items()}
    prompts = set.intersection(*(set(result) for result in outcomes.values()))
    if any(set(result) != prompts for result in outcomes.values()):
        raise DataError("the evaluations are not of the same prompts: evaluate every stage on one --data file")
    order = sorted(prompts)
    table: dict[str, Any] = {"prompts": len(order), "stages": {}, "changes": {}}
    for name, result in outcomes.items():
        correct = sum(result[p][0] for p in order)
        formatted = sum(result[p][1] for p in order)
        table["stages"][name] = {
            "correct": correct,
            "accuracy": round(correct / len(order), 4),
            "accuracy_ci95": wilson(correct, len(order)),
            "formatted": formatted,
            "format_rate": round(formatted / len(order), 4),
            "format_rate_ci95": wilson(formatted, len(order)),
        }
    for before, after in pairwise(outcomes):
        change = table["changes"][f"{after} - {before}"] = {}
        for metric, index in (("accuracy", 0), ("format_rate", 1)):
            difference, interval = paired_difference(
                [outcomes[before][p][index] for p in order], [outcomes[after][p][index] for p in order]
            )
            change[metric] = {"difference": difference, "ci95": interval}
    return table


def _percent(value: float) -> str:
    return f"{value * 100:.1f}%"


def _interval(bounds: Sequence[float]) -> str:
    return f"[{bounds[0] * 100:.1f}, {bounds[1] * 100:.1f}]"


def format_markdown(table: dict[str, Any]) -> str:
    """The comparison as a Markdown table (rates in percent, 95% intervals in brackets)."""
    lines = [
        f"Held-out prompts: {table['prompts']}, one greedy answer each; 95% intervals in brackets.",
        "",
        "| stage | format rate | accuracy |",
        "|---|---|---|",
    ]
    for name, row in table["stages"].items():
        lines.append(
            f"| {name} | {_percent(row['format_rate'])} {_interval(row['format_rate_ci95'])} "
            f"| {_percent(row['accuracy'])} ({row['correct']}/{table['prompts']}) {_interval(row['accuracy_ci95'])} |"
        )
    if table["changes"]:
        lines += ["", "| change (paired) | format rate | accuracy |", "|---|---|---|"]
        for name, change in table["changes"].items():
            cells = [
                f"{change[m]['difference'] * 100:+.1f} points {_interval(change[m]['ci95'])}"
                for m in ("format_rate", "accuracy")
            ]
            lines.append(f"| {name} | {cells[0]} | {cells[1]} |")
    return "\n".join(lines) + "\n"


def write_comparison(table: dict[str, Any], stem: Path) -> tuple[Path, Path]:
    """Write ``stem.json`` and ``stem.md`` (each complete or not at all); return both paths."""
    return (
        write_text(json.dumps(table, indent=2) + "\n", stem.with_suffix(".json")),
        write_text(format_markdown(table), stem.with_suffix(".md")),
    )
