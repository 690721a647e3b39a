"""Before/after tables of held-out evaluations, with 95% intervals.

Each stage (base model, SFT checkpoint, GRPO checkpoint, …) is an :func:`.evaluate.evaluate`
folder of any task: ``examples.jsonl`` holds each scored answer with the ``key`` of its prompt (a Countdown
puzzle, a question): one greedy answer a prompt, or N sampled ones. A stage's rate is its accuracy over
prompts (with N samples: pass@1, each prompt's share of right answers); the change between two stages is paired by
prompt. A stage may answer a part of the others' prompts (the base model its first rows: ``evaluate --limit``):
its rates are over its prompts, and each change is paired on the prompts both stages answered. The intervals are
:mod:`swift_plugins.core.intervals`'s: Wilson and Newcombe's paired interval for greedy answers, t intervals over
prompts for sampled ones. Stages answered differently (greedy against sampled, or with
different numbers of samples, or in two precisions that their ``score.json`` names) are refused: their rates are not
the same measure.

>>> from tempfile import mkdtemp
>>> folders = {name: Path(mkdtemp()) for name in ("before", "after")}
>>> for (name, folder), right in zip(folders.items(), ([0, 0, 1, 0], [1, 0, 1, 1])):
...     _ = (folder / "examples.jsonl").write_text("".join(
...         json.dumps({"key": i // 2, "verdict": "correct" if r else "wrong", "formatted": True}) + "\\n"
...         for i, r in enumerate(right)))
>>> table = compare(folders)
>>> table["samples_per_prompt"], table["stages"]["after"]["accuracy"], table["changes"]["after - before"]["accuracy"]
(2, 0.75, {'difference': 0.5, 'ci95': (0.5, 0.5)})
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Sequence
from itertools import pairwise
from pathlib import Path
from typing import Any

from ..core.errors import DataError
from ..core.files import read_rows, write_text
from ..core.intervals import paired_change, rate_interval
from ..core.scoring import CORRECT

__all__ = ["compare", "comparison_paths", "format_markdown", "write_comparison"]

def _outcomes(folder: Path) -> dict[str, list[tuple[bool, bool]]]:
    """Prompt key -> (correct, well formatted) of each answer to it, of one evaluation folder's examples."""
    path = folder / "examples.jsonl"
    if not path.is_file():
        raise DataError(f"{folder}: no examples.jsonl (is this an evaluate output folder?)")
    outcomes: dict[str, list[tuple[bool, bool]]] = defaultdict(list)
    for where, row in read_rows(path):
        missing = [field for field in ("key", "verdict", "formatted") if field not in row]
        if missing:
            raise DataError(f"{where}: no {' or '.join(map(repr, missing))} (not a row evaluate wrote): evaluate again")
        outcomes[json.dumps(row["key"])].append((row["verdict"] == CORRECT, bool(row["formatted"])))
    if not outcomes:
        raise DataError(f"{path}: no answers (an empty evaluation): evaluate again")
    return dict(outcomes)


def _answers_per_prompt(name: str, outcomes: dict[str, list[tuple[bool, bool]]]) -> int:
    counts = {len(answers) for answers in outcomes.values()}
    if len(counts) > 1:
        raise DataError(f"{name}: its prompts have {sorted(counts)} answers each; evaluate with one --samples value")
    return counts.pop()


def _precision(folder: Path) -> str | None:
    """The ``--torch_dtype`` that ``evaluate`` ran a folder's model in, where its score.json says; a score.json that
    cannot be read is refused (the evaluation is damaged), as none is not (only examples.jsonl is needed)."""
    path = folder / "score.json"
    if not path.is_file():
        return None
    try:
        report = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise DataError(f"{path}: not a readable report ({getattr(error, 'strerror', None) or error}): evaluate "
                        "again") from None  # fmt: skip
    return report.get("torch_dtype") if isinstance(report, dict) else None


def compare(stages: dict[str, Path]) -> dict[str, Any]:
    """Rates with intervals per stage, and the paired change of each stage over the one before it."""
    outcomes = {name: _outcomes(Path(folder)) for name, folder in stages.items()}
    precisions = {name: _precision(Path(folder)) for name, folder in stages.items()}
    if len(set(filter(None, precisions.values()))) > 1:  # bfloat16 changes a third of the greedy answers
        made = ", ".join(f"{name} {dtype}" for name, dtype in precisions.items() if dtype)
        raise DataError(f"the stages were evaluated in different precisions ({made}): evaluate every stage with one "
                        "--torch_dtype")  # fmt: skip
    prompts = set(max(outcomes.values(), key=len))
    if any(not set(result) <= prompts for result in outcomes.values()):
        raise DataError("the evaluations are not of the same prompts: evaluate every stage on one --data file "
                        "(a stage may answer its first rows only: evaluate --limit)")  # fmt: skip
    per_prompt = {name: _answers_per_prompt(name, result) for name, result in outcomes.items()}
    if len(set(per_prompt.values())) > 1:
        made = ", ".join(f"{name} {count}" for name, count in per_prompt.items())
        raise DataError(f"the stages answered each prompt a different number of times ({made}): compare stages "
                        "evaluated the same way (greedy, or the same --samples)")  # fmt: skip

    def rates(name: str, order: list[str]) -> dict[str, list[float]]:
        result = outcomes[name]
        return {metric: [sum(a[index] for a in result[p]) / len(result[p]) for p in order]
                for metric, index in (("accuracy", 0), ("format_rate", 1))}  # fmt: skip

    samples = next(iter(per_prompt.values()))
    table: dict[str, Any] = {"prompts": len(prompts), "samples_per_prompt": samples, "stages": {}, "changes": {}}
    for name, result in outcomes.items():
        answers = [answer for p in result for answer in result[p]]
        row = table["stages"][name] = {"prompts": len(result), "correct": sum(a[0] for a in answers),
                                       "formatted": sum(a[1] for a in answers)}  # fmt: skip
        for metric, values in rates(name, sorted(result)).items():
            row[metric], row[f"{metric}_ci95"] = rate_interval(values)
    for before, after in pairwise(outcomes):
        shared = sorted(set(outcomes[before]) & set(outcomes[after]))  # each change paired on the prompts both answered
        change = table["changes"][f"{after} - {before}"] = {"prompts": len(shared)}
        first, then = rates(before, shared), rates(after, shared)
        for metric in ("accuracy", "format_rate"):
            difference, interval = paired_change(first[metric], then[metric])
            change[metric] = {"difference": difference, "ci95": interval}
    return table


def _percent(value: float) -> str:
    return f"{value * 100:.1f}%"


def _interval(bounds: Sequence[float]) -> str:
    return f"[{bounds[0] * 100:.1f}, {bounds[1] * 100:.1f}]"


def format_markdown(table: dict[str, Any]) -> str:
    """The comparison as a Markdown table (rates in percent, 95% intervals in brackets)."""
    samples = table.get("samples_per_prompt", 1)
    answers = "one greedy answer each" if samples == 1 else f"{samples} sampled answers each, pass@1"
    part = [f"{name} on {row['prompts']} of them" for name, row in table["stages"].items()
            if row["prompts"] < table["prompts"]]  # fmt: skip
    lines = [
        f"Held-out prompts: {table['prompts']}{''.join(f' ({text})' for text in part)}, {answers}; "
        "95% intervals in brackets.",
        "",
        "| stage | format rate | accuracy |",
        "|---|---|---|",
    ]
    for name, row in table["stages"].items():
        lines.append(
            f"| {name} | {_percent(row['format_rate'])} {_interval(row['format_rate_ci95'])} "
            f"| {_percent(row['accuracy'])} ({row['correct']}/{row['prompts'] * samples}) "
            f"{_interval(row['accuracy_ci95'])} |"
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


def comparison_paths(out: Path) -> tuple[Path, Path]:
    """``compare --out OUT``'s two files: OUT.json and OUT.md (an OUT ending in .json or .md drops it first).

    >>> comparison_paths(Path("eval/cmp.v1")), comparison_paths(Path("cmp.json"))[1]
    ((PosixPath('eval/cmp.v1.json'), PosixPath('eval/cmp.v1.md')), PosixPath('cmp.md'))
    """
    stem = out.with_suffix("") if out.suffix in (".json", ".md") else out
    return stem.with_name(f"{stem.name}.json"), stem.with_name(f"{stem.name}.md")


def write_comparison(table: dict[str, Any], out: Path) -> tuple[Path, Path]:
    """Write the two files of :func:`comparison_paths` (each complete or not at all); return both paths."""
    json_path, markdown_path = comparison_paths(out)
    return write_text(json.dumps(table, indent=2) + "\n", json_path), write_text(format_markdown(table), markdown_path)
