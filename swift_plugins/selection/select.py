"""Select a task's training rows by how often a model solves them: N samples a row, keep the rows in a band.

The candidates are evaluated with :func:`~swift_plugins.tools.evaluate.evaluate` (N sampled answers a row, in one
``swift infer`` run); each row's solve count decides whether it is kept (:class:`~.band.Band`). The kept rows are
written unchanged, in the candidates' order, as the task's ordinary training rows; the evaluation stays beside them
(``OUT.selection/``: its ``results.jsonl`` holds every answer and each row's count) with ``OUT.selection.json``:
the band, the sampling, the histogram of solve counts, how many rows were kept and what it cost. The same model,
candidates and seed select the same rows. The held-out files (dev and test) are never written, and candidates that
share a prompt with one, or that changed since ``generate`` held one out of them, are refused
(:func:`~swift_plugins.core.held_out.check_held_out`).

>>> from pathlib import Path
>>> check_paths("countdown", Path("d/train.jsonl"), Path("d/train.test.jsonl"))
Traceback (most recent call last):
...
swift_plugins.core.errors.SettingError: --out d/train.test.jsonl is the held-out file of d/train.jsonl: the \
selection never writes held-out rows
"""

from __future__ import annotations

import itertools
import json
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ..core.errors import DataError, SettingError
from ..core.files import FOLDER, FORMATS, check_outputs, held_out_path, read_rows, write_rows, write_text
from ..core.held_out import HELD_OUT, check_held_out
from ..core.processes import children_cpu_seconds
from ..tasks import task_named
from ..tools.evaluate import Sampling, evaluate
from .band import Band, histogram

__all__ = ["OUTPUTS", "Selection", "check_paths", "prompt_keys", "select_rows"]

OUTPUTS = ((".selection", FOLDER), (".selection.json", (".json",)))  # beside OUT: the evaluation and its summary


@dataclass(frozen=True)
class Selection:
    """What a selection did: its rows, its band and sampling, the solve counts, what it kept and cost."""

    candidates: int
    kept: int
    band: str
    sampling: dict[str, Any]
    solve_counts: dict[str, int]  # rows by how many of their answers are right (a repeated row counts each time)
    seconds: float  # wall time of the evaluation
    cpu_seconds: float  # CPU time of swift infer's processes
    completions: int

    def summary(self) -> str:
        return (
            f"kept {self.kept} of {self.candidates} rows (solved {self.band}); {self.completions} answers in "
            f"{self.seconds:.0f} s ({self.cpu_seconds:.0f} CPU-s, {self.completions / max(self.seconds, 1e-9):.1f} "
            "answers/s)"
        )


def prompt_keys(task: str, path: str | Path) -> set[str]:
    """The keys of the prompts of ``path``'s rows, as the task's scorer pairs answers by (a Countdown puzzle, a
    question): the rows are scored with an empty answer, which no scorer runs."""
    scoring = task_named(task).scoring_module()
    rows = ((where, {**row, "response": ""}) for where, row in read_rows(path))
    return {json.dumps(scoring.sample_record(sample)["key"]) for sample in scoring.samples_from_rows(rows)}


def check_paths(task: str, candidates: Path, out: Path, held_out: Sequence[Path] = ()) -> tuple[Path, ...]:
    """The held-out files to keep apart (``held_out``, else the candidates' ``.dev`` and ``.test`` siblings that
    exist), once every output is checked (:func:`~swift_plugins.core.files.check_outputs`: the candidates and the
    held-out files are inputs); :class:`SettingError` when ``out`` is a held-out file's name, :class:`DataError`
    when a held-out file may not be held out from the candidates (:func:`~swift_plugins.core.held_out.check_held_out`:
    a candidate's prompt is a held-out one, or the candidates changed since ``generate`` held it out)."""
    siblings = tuple(held_out_path(candidates, split) for split in HELD_OUT)
    if any(out.resolve() == protected.resolve() for protected in (*siblings, *held_out)):
        raise SettingError(
            f"--out {out} is the held-out file of {candidates}: the selection never writes held-out rows"
        )
    held_out = tuple(held_out) or tuple(sibling for sibling in siblings if sibling.is_file())
    outputs = [(out, FORMATS), *((out.with_name(f"{out.name}{suffix}"), formats) for suffix, formats in OUTPUTS)]
    check_outputs(outputs, inputs=[candidates, *held_out])
    for path in held_out:
        check_held_out(path, lambda rows: prompt_keys(task, rows), training=candidates)
    return held_out


def select_rows(
    model: str,
    candidates: str | Path,
    out: str | Path,
    *,
    task: str,
    band: Band,
    sampling: Sampling,
    held_out: Sequence[str | Path] = (),
    limit: int | None = None,
    **options: Any,
) -> Selection:
    """Evaluate ``model`` on ``candidates`` (their first ``limit`` rows, if given) with ``sampling`` (``band.samples``
    answers a row) and write the rows ``band`` keeps to ``out``; ``options`` go to
    :func:`~swift_plugins.tools.evaluate.evaluate`."""
    candidates, out = Path(candidates), Path(out)
    if sampling.samples != band.samples or sampling.greedy:
        raise SettingError(f"the band counts {band.samples} sampled answers a row, the sampling draws "
                           f"{sampling.samples}{' greedily' if sampling.greedy else ''}")  # fmt: skip
    check_paths(task, candidates, out, tuple(map(Path, held_out)))
    rows = [row for _, row in itertools.islice(read_rows(candidates), limit)]
    evaluation, report = (out.with_name(f"{out.name}{suffix}") for suffix, _ in OUTPUTS)
    started, before = time.monotonic(), children_cpu_seconds()
    evaluate(model, candidates, evaluation, task=task, sampling=sampling, limit=limit, quiet=True, **options)
    seconds, cpu = time.monotonic() - started, children_cpu_seconds() - before
    answers = [row["solved"] for _, row in read_rows(evaluation / "results.jsonl")]
    solved = answers[:: band.samples]
    if len(solved) != len(rows):
        raise DataError(f"{evaluation}: {len(answers)} answers for {len(rows)} rows of {band.samples} samples each")
    kept = [row for row, count in zip(rows, solved, strict=True) if band.keeps(count)]
    print(histogram(solved, band))
    # the rows' own counts, which the band judged (the evaluation's report pools a question that repeats)
    counts = {str(count): rows_solved for count, rows_solved in sorted(Counter(solved).items())}
    if not kept:
        raise DataError(f"no row of {candidates} was solved {band.describe()} times ({counts}): "
                        "widen the band, raise --samples or --temperature, or give other candidates")  # fmt: skip
    write_rows(kept, out)
    selection = Selection(len(rows), len(kept), band.describe(), asdict(sampling), counts, round(seconds, 1),
                          round(cpu, 1), len(answers))  # fmt: skip
    write_text(json.dumps(asdict(selection), indent=2) + "\n", report)
    return selection
