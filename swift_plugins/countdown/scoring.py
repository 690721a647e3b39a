"""Score ``swift infer`` results on Countdown puzzles with the training rewards' own judge.

A result row needs the model's ``response`` and its puzzle: ``nums``/``target`` columns if present,
else the Countdown prompt in ``messages`` (what ``swift infer`` writes: it drops extra columns).
Rows of several result files (several samples per prompt) are grouped by puzzle for pass@k.

>>> rows = [{"response": "<think>…</think><answer>6 + 2 + 6</answer>", "nums": [6, 2, 6], "target": 14},
...         {"response": "<think>…", "nums": [1, 2], "target": 3}]
>>> report = score_samples(samples_from_rows((f"example:{n}", row) for n, row in enumerate(rows, 1)))
>>> report["accuracy"], report["format_rate"], report["truncation_rate"]
(0.5, 0.5, 0.5)
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from itertools import pairwise
from pathlib import Path
from typing import Any

from ..core.errors import DataError
from ..core.files import read_rows
from ..core.scoring import is_correct, is_truncated, rate, summarise, summary_lines, table_lines
from ..core.think_answer import is_well_formatted
from .data import COUNTDOWN, check_row, puzzle_from_prompt, puzzle_key
from .rewards import judge

__all__ = ["TASK", "Sample", "format_report", "load_samples", "sample_record", "samples_from_rows", "score_samples"]

TASK = COUNTDOWN  # the task whose answers this module scores
TARGET_EDGES = (1, 10, 25, 50, 100)  # target bins: 1-9, 10-24, 25-49, 50-99, 100+


@dataclass(frozen=True)
class Sample:
    """One scored response to one puzzle; ``source`` is ``file:line``."""

    source: str
    nums: tuple[int, ...]
    target: int
    verdict: str
    formatted: bool
    truncated: bool

    @property
    def key(self) -> tuple[tuple[int, ...], int]:
        return puzzle_key(self.nums, self.target)


def _puzzle(row: dict[str, Any], where: str) -> tuple[list[int], int]:
    if "nums" in row and "target" in row:
        checked = check_row(row, where)
        return checked["nums"], checked["target"]
    prompts = [m.get("content") for m in row.get("messages") or [] if isinstance(m, dict) and m.get("role") == "user"]
    puzzle = next(filter(None, map(puzzle_from_prompt, filter(None, prompts))), None)
    if puzzle is None:
        raise DataError(
            f"{where}: no nums/target columns and no Countdown prompt "
            "('Using the numbers [...], create an equation that equals N') in messages"
        )
    return puzzle


def samples_from_rows(rows: Iterable[tuple[str, dict[str, Any]]], think_in_prompt: bool = False) -> list[Sample]:
    """Score ``(location, row)`` result rows; a row without a response or a puzzle raises :class:`DataError`."""
    samples = []
    for where, row in rows:
        response = row.get("response")
        if not isinstance(response, str):
            raise DataError(f"{where}: no 'response' text (is this a swift infer result file?)")
        nums, target = _puzzle(row, where)
        samples.append(
            Sample(
                where,
                tuple(nums),
                target,
                judge(response, nums, target).value,
                is_well_formatted(response, think_in_prompt),
                is_truncated(row, response, ("think", "answer")),
            )
        )
    return samples


def load_samples(paths: Sequence[str | Path], think_in_prompt: bool = False) -> list[Sample]:
    """Score every row of every result file (jsonl/json/parquet)."""
    return [sample for path in paths for sample in samples_from_rows(read_rows(path), think_in_prompt)]


def _target_bin(target: int, edges: Sequence[int]) -> str:
    for low, high in pairwise(edges):
        if low <= target < high:
            return f"{low}-{high - 1}"
    return f"{edges[-1]}+" if target >= edges[-1] else f"<{edges[0]}"


def _bin_order(label: str) -> int:
    digits = re.search(r"[0-9]+", label)
    return int(digits[0]) if digits else -1


def score_samples(samples: list[Sample], target_edges: Sequence[int] = TARGET_EDGES) -> dict[str, Any]:
    """Accuracy, format and truncation rates, pass@k, breakdowns by count and target, failure kinds."""
    report = summarise(samples, unit="puzzle")
    by_count, by_target = defaultdict(list), defaultdict(list)
    for sample in samples:
        by_count[len(sample.nums)].append(sample)
        by_target[_target_bin(sample.target, target_edges)].append(sample)
    failures = report.pop("failures")
    report["accuracy_by_count"] = {
        str(c): {"samples": len(s), "accuracy": rate(s, is_correct)} for c, s in sorted(by_count.items())
    }
    report["accuracy_by_target"] = {
        b: {"samples": len(s), "accuracy": rate(s, is_correct)}
        for b, s in sorted(by_target.items(), key=lambda item: _bin_order(item[0]))
    }
    report["failures"] = failures
    return report


def format_report(report: dict[str, Any]) -> str:
    """The report as an aligned plain-text table."""
    lines = summary_lines(report, "format (think/answer)", unit="puzzle")
    for title, table in (("numbers", report["accuracy_by_count"]), ("target", report["accuracy_by_target"])):
        lines += table_lines(
            f"accuracy by {title}", table, ("samples", "accuracy"), lambda r: (r["samples"], r["accuracy"])
        )
    lines += table_lines(
        "failure kind", report["failures"], ("samples", "share"), lambda count: (count, count / report["samples"])
    )
    return "\n".join(lines)


def sample_record(sample: Sample) -> dict[str, Any]:
    """One line of the per-example file; ``key`` identifies the puzzle (what ``compare`` pairs stages by): an object,
    so that a Parquet file holds it as a column of one type.

    >>> sample_record(Sample("r.jsonl:1", (6, 2, 6), 24, "correct", True, False))["key"]
    {'nums': [2, 6, 6], 'target': 24}
    """
    nums, target = sample.key
    return {**asdict(sample), "nums": list(sample.nums), "key": {"nums": list(nums), "target": target}}
