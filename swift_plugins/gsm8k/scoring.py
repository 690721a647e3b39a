"""Score ``swift infer`` results on GSM8K: the training reward's accuracy and lm-eval's two metrics.

A result row needs the model's ``response`` and its reference: a ``final_answer`` or raw ``answer``
column if present, else ``labels`` (what ``swift infer`` writes: the reference solution that the
preprocessor put in as the assistant turn). Rows are grouped by question for pass@k.

Besides accuracy by the training reward's judge, the report gives the two metrics of
lm-evaluation-harness's ``gsm8k`` task (``lm_eval/tasks/gsm8k/gsm8k.yaml``), computed the way the
harness computes them:

1. the response is cut at the task's stop sequences (``Question:``, ``</s>``, ``<|im_end|>``);
2. ``strict-match`` takes the first ``#### N`` (regex ``#### (\\-?[0-9\\.\\,]+)``), ``flexible-extract``
   the last number (regex ``(-?[$0-9.,]{2,})|(-?[0-9]+)``); no match gives ``[invalid]``;
3. ``exact_match`` compares the extraction with the reference solution after removing, from both,
   ``,`` then ``$`` then everything up to the last ``#### `` then one trailing ``.``, ignoring case.

``tests/gsm8k/test_gsm8k_scoring.py`` checks every fixture against the installed ``lm-eval`` package's own
filters and metric.

>>> harness_extract("So she has 1,000 apples.\\n#### 1,000"), harness_extract("It is 7 or 8.", "flexible-extract")
('1,000', '8.')
>>> harness_match("$1,000.", "Ann sold 2 * 500 = <<2*500=1000>>1000.\\n#### 1000")
True
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ..core.errors import DataError
from ..core.files import read_rows
from ..core.scoring import is_truncated, rate, summarise, summary_lines, table_lines
from .answer import reference_number, reference_value
from .data import GSM8K
from .rewards import judge, reasoning_answer_format_reward

__all__ = [
    "HARNESS_METRICS",
    "TASK",
    "Sample",
    "format_report",
    "harness_extract",
    "harness_match",
    "load_samples",
    "sample_record",
    "samples_from_rows",
    "score_samples",
]

TASK = GSM8K  # the task whose answers this module scores
STOP_SEQUENCES = ("Question:", "</s>", "<|im_end|>")  # gsm8k.yaml generation_kwargs.until
HARNESS_METRICS = {  # filter name -> (regex, which match: first or last)
    "strict-match": (re.compile(r"#### (\-?[0-9\.\,]+)"), 0),
    "flexible-extract": (re.compile(r"(-?[$0-9.,]{2,})|(-?[0-9]+)"), -1),
}
INVALID = "[invalid]"  # the harness's fallback when nothing matches
_IGNORED = tuple(re.compile(pattern) for pattern in (",", r"\$", r"(?s).*#### ", r"\.$"))  # in this order


def harness_extract(response: str, metric: str = "strict-match") -> str:
    """What lm-eval's ``metric`` filter extracts from a response (after its stop sequences)."""
    for stop in STOP_SEQUENCES:
        response = response.split(stop)[0]
    regex, which = HARNESS_METRICS[metric]
    matches = regex.findall(response)
    if not matches:
        return INVALID
    match = matches[which]
    if isinstance(match, tuple):  # several groups: the first that matched
        match = next((group for group in match if group), INVALID)
    return match.strip()


def _normalise(text: str) -> str:
    for pattern in _IGNORED:
        text = pattern.sub("", text)
    return text.lower()


def harness_match(extracted: str, reference: str) -> bool:
    """lm-eval's ``exact_match`` of gsm8k.yaml between an extraction and a reference solution (or number)."""
    return _normalise(extracted) == _normalise(reference)


@dataclass(frozen=True)
class Sample:
    """One scored response to one question; ``source`` is ``file:line``, ``reference`` the solution or number."""

    source: str
    question: str
    reference: str
    verdict: str
    formatted: bool
    truncated: bool
    strict_match: bool
    flexible_extract: bool

    @property
    def key(self) -> str:
        return self.question


def _reference(row: dict[str, Any], where: str) -> str:
    """The row's reference (a number, or a solution ending ``#### N``); :class:`DataError` if it states no number."""
    for column in ("final_answer", "answer", "labels"):
        value = row.get(column)
        if isinstance(value, (str, int)) and not isinstance(value, bool):
            reference = str(value)
            read = reference_value if column == "final_answer" else reference_number
            try:
                read(reference)
            except DataError as error:
                raise DataError(f"{where}: {column}: {error}") from None
            return reference
    raise DataError(f"{where}: no reference: no 'final_answer', 'answer' or 'labels' (the reference solution)")


def _question(row: dict[str, Any], where: str) -> str:
    if isinstance(row.get("question"), str):
        return row["question"]
    users = [m.get("content") for m in row.get("messages") or [] if isinstance(m, dict) and m.get("role") == "user"]
    if not users or not isinstance(users[-1], str):
        raise DataError(f"{where}: no 'question' column and no user message in messages")
    return users[-1]


def samples_from_rows(rows: Iterable[tuple[str, dict[str, Any]]]) -> list[Sample]:
    """Score ``(location, row)`` result rows; a row without a response or a reference raises :class:`DataError`."""
    samples = []
    for where, row in rows:
        response = row.get("response")
        if not isinstance(response, str):
            raise DataError(f"{where}: no 'response' text (is this a swift infer result file?)")
        reference = _reference(row, where)
        verdict = judge(response, row.get("final_answer"), reference)
        samples.append(
            Sample(
                source=where,
                question=_question(row, where),
                reference=reference,
                verdict=verdict.value,
                formatted=reasoning_answer_format_reward([response]) == [1.0],
                truncated=is_truncated(row, response, ("reasoning", "answer")),
                strict_match=harness_match(harness_extract(response, "strict-match"), reference),
                flexible_extract=harness_match(harness_extract(response, "flexible-extract"), reference),
            )
        )
    return samples


def load_samples(paths: Sequence[str | Path]) -> list[Sample]:
    """Score every row of every result file (jsonl/json/parquet)."""
    return [sample for path in paths for sample in samples_from_rows(read_rows(path))]


def score_samples(samples: list[Sample]) -> dict[str, Any]:
    """Accuracy, lm-eval's strict-match and flexible-extract, format and truncation rates, pass@k, failures."""
    report = summarise(samples, unit="question")
    failures = report.pop("failures")
    report["lm_eval_strict_match"] = rate(samples, lambda s: s.strict_match)
    report["lm_eval_flexible_extract"] = rate(samples, lambda s: s.flexible_extract)
    report["failures"] = failures
    return report


def format_report(report: dict[str, Any]) -> str:
    """The report as an aligned plain-text table."""
    harness = [
        ("lm-eval strict-match", "lm_eval_strict_match"),
        ("lm-eval flexible-extract", "lm_eval_flexible_extract"),
    ]
    lines = summary_lines(report, "format (reasoning/answer)", unit="question", rates=harness)
    lines += table_lines(
        "failure kind", report["failures"], ("samples", "share"), lambda count: (count, count / report["samples"])
    )
    return "\n".join(lines)


def sample_record(sample: Sample) -> dict[str, Any]:
    """One line of the per-example file; ``key`` identifies the question (what ``compare`` pairs stages by)."""
    return {**asdict(sample), "key": sample.key}
