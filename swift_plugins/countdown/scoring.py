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
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from itertools import pairwise
from math import comb
from pathlib import Path
from typing import Any

from .data import DataError, check_row, read_rows
from .rewards import Verdict, is_well_formatted, judge

__all__ = ["Sample", "format_report", "load_samples", "samples_from_rows", "score_samples"]

_PROMPT = re.compile(r"Using the numbers \[([0-9,\s-]*)\], create an equation that equals (-?[0-9]+)")
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
    def puzzle(self) -> tuple[tuple[int, ...], int]:
        return tuple(sorted(self.nums)), self.target


def _puzzle(row: dict[str, Any], where: str) -> tuple[list[int], int]:
    if "nums" in row and "target" in row:
        return check_row(row["nums"], row["target"], where)
    prompts = [m.get("content") for m in row.get("messages") or [] if isinstance(m, dict) and m.get("role") == "user"]
    match = next((m for m in map(_PROMPT.search, filter(None, prompts)) if m), None)
    if match is None:
        raise DataError(
            f"{where}: no nums/target columns and no Countdown prompt "
            "('Using the numbers [...], create an equation that equals N') in messages"
        )
    return [int(n) for n in match[1].split(",") if n.strip()], int(match[2])


def _truncated(row: dict[str, Any], response: str) -> bool:
    """A length stop, or else a response that ends inside a think or answer block."""
    if "finish_reason" in row:
        return row["finish_reason"] == "length"
    return any(response.rfind(f"<{tag}>") > response.rfind(f"</{tag}>") for tag in ("think", "answer"))


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
                _truncated(row, response),
            )
        )
    return samples


def load_samples(paths: Sequence[str | Path], think_in_prompt: bool = False) -> list[Sample]:
    """Score every row of every result file (jsonl/json/parquet)."""
    return [sample for path in paths for sample in samples_from_rows(read_rows(path), think_in_prompt)]


def pass_at_k(samples: int, correct: int, k: int) -> float:
    """Unbiased pass@k of one puzzle with ``correct`` of ``samples`` right (Chen et al., 2021)."""
    return 1.0 if samples - correct < k else 1.0 - comb(samples - correct, k) / comb(samples, k)


def _target_bin(target: int, edges: Sequence[int]) -> str:
    for low, high in pairwise(edges):
        if low <= target < high:
            return f"{low}-{high - 1}"
    return f"{edges[-1]}+" if target >= edges[-1] else f"<{edges[0]}"


def _rate(samples: list[Sample], test) -> float:
    return round(sum(map(test, samples)) / len(samples), 4) if samples else 0.0


def _correct(sample: Sample) -> bool:
    return sample.verdict == Verdict.CORRECT.value


def score_samples(samples: list[Sample], target_edges: Sequence[int] = TARGET_EDGES) -> dict[str, Any]:
    """Accuracy, format and truncation rates, pass@k, breakdowns and failure kinds."""
    if not samples:
        raise DataError("no results to score")
    groups: dict[tuple, list[Sample]] = defaultdict(list)
    for sample in samples:
        groups[sample.puzzle].append(sample)
    by_count, by_target = defaultdict(list), defaultdict(list)
    for sample in samples:
        by_count[len(sample.nums)].append(sample)
        by_target[_target_bin(sample.target, target_edges)].append(sample)
    k_max = min(len(group) for group in groups.values())
    failures = Counter(s.verdict for s in samples if not _correct(s))
    return {
        "samples": len(samples),
        "puzzles": len(groups),
        "samples_per_puzzle": k_max if k_max == max(len(g) for g in groups.values()) else "varies",
        "accuracy": _rate(samples, _correct),
        "format_rate": _rate(samples, lambda s: s.formatted),
        "truncation_rate": _rate(samples, lambda s: s.truncated),
        "pass_at_k": {
            str(k): round(sum(pass_at_k(len(g), sum(map(_correct, g)), k) for g in groups.values()) / len(groups), 4)
            for k in sorted({1, k_max})
        },
        "accuracy_by_count": {
            str(c): {"samples": len(s), "accuracy": _rate(s, _correct)} for c, s in sorted(by_count.items())
        },
        "accuracy_by_target": {
            b: {"samples": len(s), "accuracy": _rate(s, _correct)}
            for b, s in sorted(by_target.items(), key=lambda item: _bin_order(item[0]))
        },
        "failures": dict(failures.most_common()),
    }


def _bin_order(label: str) -> int:
    digits = re.search(r"[0-9]+", label)
    return int(digits[0]) if digits else -1


def format_report(report: dict[str, Any]) -> str:
    """The report as an aligned plain-text table."""
    lines = [
        f"samples {report['samples']}   puzzles {report['puzzles']}   "
        f"samples per puzzle {report['samples_per_puzzle']}",
        "",
        f"{'accuracy':<28}{report['accuracy']:>8.2%}",
        f"{'format (think/answer)':<28}{report['format_rate']:>8.2%}",
        f"{'truncated':<28}{report['truncation_rate']:>8.2%}",
    ]
    lines += [f"{f'pass@{k}':<28}{value:>8.2%}" for k, value in report["pass_at_k"].items()]
    for title, table in (("numbers", report["accuracy_by_count"]), ("target", report["accuracy_by_target"])):
        lines += ["", f"{'accuracy by ' + title:<20}{'samples':>8}{'accuracy':>10}"]
        lines += [f"  {key:<18}{row['samples']:>8}{row['accuracy']:>10.2%}" for key, row in table.items()]
    lines += ["", f"{'failure kind':<20}{'samples':>8}{'share':>10}"]
    lines += [f"  {kind:<18}{count:>8}{count / report['samples']:>10.2%}" for kind, count in report["failures"].items()]
    return "\n".join(lines)


def sample_record(sample: Sample) -> dict[str, Any]:
    """One line of the per-example file."""
    return {**asdict(sample), "nums": list(sample.nums)}
