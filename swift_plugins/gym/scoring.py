"""Score ``swift infer`` results on gym data with the training reward's own scorer.

A result row needs the model's ``response`` and the gym columns of its row (swift infer drops them; ``evaluate``
puts them back from the data file, the task's ``result_columns``, and each row's prompt is checked against its
question). Each response is scored exactly as the reward scores it (:func:`.rewards.score_completions`: 1 for a
correct answer, 0 otherwise). Rows are grouped by question for pass@k, and the report adds each dataset's accuracy.

>>> row = {"gym_dataset": "basic_arithmetic", "gym_config": "{}", "question": "Calculate 2 + 3.", "answer": "5",
...        "metadata": "{}"}
>>> rows = [("r:1", {**row, "response": "<think>…</think><answer>5</answer>"}), ("r:2", {**row, "response": "5"})]
>>> report = score_samples(samples_from_rows(rows))
>>> report["accuracy"], report["failures"], report["by_dataset"]["basic_arithmetic"]
(0.5, {'no answer': 1}, {'samples': 2, 'accuracy': 0.5})
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ..core.errors import DataError
from ..core.files import read_rows
from ..core.scoring import CORRECT, is_correct, is_truncated, summarise, summary_lines, table_lines
from ..core.tags import is_two_block, last_answer
from .data import GYM, check_row, prompt_for
from .rewards import score_completions

__all__ = ["TASK", "Sample", "format_report", "load_samples", "sample_record", "samples_from_rows", "score_samples"]

TASK = GYM  # the task whose answers this module scores


@dataclass(frozen=True)
class Sample:
    """One scored response to one question; ``source`` is ``file:line``, ``score`` reasoning-gym's."""

    source: str
    dataset: str
    question: str
    score: float
    verdict: str
    formatted: bool
    truncated: bool

    @property
    def key(self) -> str:
        return self.question


def _verdict(response: str, score: float, failure: str | None) -> str:
    if failure is not None:
        kind = failure.partition(":")[0]
        return kind if kind in ("timeout", "guarded") else "scorer failed"
    if score == 1.0:
        return CORRECT
    if last_answer(response) is None:
        return "no answer"
    return "wrong"


def samples_from_rows(rows: Iterable[tuple[str, dict[str, Any]]]) -> list[Sample]:
    """Score ``(location, row)`` result rows; a row without a response or its gym columns raises :class:`DataError`."""
    located, responses = [], []
    for where, row in rows:
        response = row.get("response")
        if not isinstance(response, str):
            raise DataError(f"{where}: no 'response' text (is this a swift infer result file?)")
        GYM.check_columns(row, where)
        checked = check_row(row, where)
        users = [m.get("content") for m in row.get("messages") or [] if isinstance(m, dict) and m.get("role") == "user"]
        if users and users[-1] != prompt_for(checked["question"]):
            raise DataError(f"{where}: its prompt does not ask this row's question: the results and the data differ")
        located.append((where, checked))
        responses.append(response)
    outcomes = score_completions(responses, [row for _, row in located])
    return [
        Sample(
            source=where,
            dataset=row["gym_dataset"],
            question=row["question"],
            score=outcome.score,
            verdict=_verdict(response, outcome.score, outcome.failure),
            formatted=is_two_block(response, "think"),
            truncated=is_truncated(row, response, ("think", "answer")),
        )
        for (where, row), response, outcome in zip(located, responses, outcomes, strict=True)
    ]


def load_samples(paths: Sequence[str | Path]) -> list[Sample]:
    """Score every row of every result file (jsonl/json/parquet)."""
    return [sample for path in paths for sample in samples_from_rows(read_rows(path))]


def score_samples(samples: list[Sample]) -> dict[str, Any]:
    """Accuracy (score 1), format and truncation rates, pass@k, failures, accuracy by dataset."""
    report = summarise(samples, unit="question")
    groups: dict[str, list[Sample]] = defaultdict(list)
    for sample in samples:
        groups[sample.dataset].append(sample)
    report["by_dataset"] = {
        name: {"samples": len(group), "accuracy": round(sum(map(is_correct, group)) / len(group), 4)}
        for name, group in sorted(groups.items())
    }
    return report


def format_report(report: dict[str, Any]) -> str:
    """The report as an aligned plain-text table."""
    lines = summary_lines(report, "format (think/answer)", unit="question")
    lines += table_lines(
        "failure kind", report["failures"], ("samples", "share"), lambda count: (count, count / report["samples"])
    )
    lines += table_lines(
        "dataset", report["by_dataset"], ("samples", "accuracy"), lambda value: (value["samples"], value["accuracy"])
    )
    return "\n".join(lines)


def sample_record(sample: Sample) -> dict[str, Any]:
    """One line of the per-example file; ``key`` identifies the question (what ``compare`` pairs stages by)."""
    return {**asdict(sample), "key": sample.key}
