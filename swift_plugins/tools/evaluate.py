"""Held-out evaluation in one call: ``swift infer`` on a task's data file (greedy, or N samples a row), then scoring.

The same command evaluates the CPU demo's checkpoints and a GPU run's, for every task of
:mod:`swift_plugins.tasks` (Countdown puzzles, word problems, ...): a plain model folder or hub
id, a swift full fine-tuning checkpoint (its ``args.json`` names the model type and template) or a
LoRA checkpoint (``adapter_config.json``: passed as ``--adapters``). vLLM is used when it is
installed and can run here (a GPU is visible, or it is vLLM's CPU build), else transformers.

>>> command = infer_command("ckpt", "eval.jsonl", "out.jsonl", backend="transformers")
>>> command[3:6], command[command.index("--temperature") + 1]
(['--model', 'ckpt', '--external_plugins'], '0')

Before swift starts, the model (a local path must exist; ``org/name`` is a hub id), every row of the data file and
a held-out data file against its training file (:func:`~swift_plugins.core.held_out.check_held_out`) are checked.
swift runs as :mod:`.swift_infer`, so each result row carries its ``finish_reason`` and token count: a response
that reached ``max_new_tokens`` counts as truncated.

With a :class:`Sampling` of N answers a row (temperature, top-k, seed), each row is asked N times in one run and
the report gives pass@1 (the mean over samples) and pass@k for every k <= N (the unbiased estimator), each with its
95% interval; every result row also says how many of its row's N answers were right (``solved``). Greedy decoding,
one answer a row, is the default.

``out_dir`` gets ``results.jsonl`` (swift's rows), ``score.json`` (the report), ``examples.jsonl``
(one scored row per response) and, with a log, ``infer.log``, all at once: they are written in a
temporary folder beside it that is renamed into place when everything succeeded, so a failed or
interrupted evaluation leaves no ``out_dir`` (nor a partial one). An existing ``out_dir`` is replaced
only if it is empty or holds a previous evaluation's files and nothing else.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import sys
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ..core.console import Console
from ..core.errors import DataError, PluginError, SettingError
from ..core.files import FOLDER, atomic_folder, check_outputs, read_rows, write_jsonl, write_text
from ..core.flags import Flags
from ..core.held_out import check_held_out, row_keys
from ..core.processes import Children
from ..core.scoring import is_correct
from ..integration.vllm_cpu import engine_args, installed_vllm, is_cpu_build
from ..tasks import task_named

__all__ = [
    "GREEDY",
    "OUTPUTS",
    "EvaluationError",
    "Sampling",
    "check_data",
    "check_model",
    "default_backend",
    "evaluate",
    "infer_command",
    "solve_counts",
    "with_data_columns",
]

PLUGIN = Path(__file__).resolve().parents[1] / "plugin.py"
OUTPUTS = ("results.jsonl", "score.json", "examples.jsonl", "infer.log")  # what an evaluation folder holds
STOP_GRACE_SECONDS = 10  # after Ctrl-C, how long swift gets to exit on SIGTERM before SIGKILL


class EvaluationError(PluginError):
    """The model or the output folder cannot be used, or ``swift infer`` failed (the message says where its log is)."""


@dataclass(frozen=True)
class Sampling:
    """How each row is answered: ``samples`` answers at ``temperature`` over the ``top_k`` likeliest tokens (None:
    all) and the ``top_p`` share of the probability, from ``seed``; temperature 0 is greedy decoding, one answer.

    >>> Sampling(samples=4).temperature, GREEDY.samples
    (1.0, 1)
    >>> Sampling(samples=4, temperature=0)
    Traceback (most recent call last):
    ...
    swift_plugins.core.errors.SettingError: --samples 4 at --temperature 0: greedy decoding gives one answer a row; \
sample with a temperature above 0
    """

    samples: int = 1
    temperature: float = 1.0
    top_k: int | None = None
    seed: int = 0
    top_p: float = 1.0

    def __post_init__(self) -> None:
        if self.samples < 1:
            raise SettingError(f"--samples {self.samples}: at least 1")
        if not (0 <= self.temperature < math.inf):
            raise SettingError(f"--temperature {self.temperature}: a number >= 0")
        if self.temperature == 0 and self.samples > 1:
            raise SettingError(
                f"--samples {self.samples} at --temperature 0: greedy decoding gives one answer a row; "
                "sample with a temperature above 0"
            )
        if self.top_k is not None and self.top_k < 1:
            raise SettingError(f"--top-k {self.top_k}: at least 1 (leave it out to sample every token)")
        if not 0 < self.top_p <= 1:
            raise SettingError(f"--top-p {self.top_p}: a share of the probability in (0, 1]")

    @property
    def greedy(self) -> bool:
        return self.temperature == 0

    def swift_args(self) -> list[str]:
        """``swift infer``'s decoding flags."""
        if self.greedy:
            return ["--temperature", "0"]
        words = ["--temperature", f"{self.temperature:g}", "--top_p", f"{self.top_p:g}", "--seed", str(self.seed)]
        return words + (["--top_k", str(self.top_k)] if self.top_k is not None else [])


GREEDY = Sampling(temperature=0)


def default_backend() -> str:
    """``vllm`` where vLLM is installed and can run here (a CUDA device, or vLLM's CPU build), else ``transformers``.

    On the CPU, vLLM in float32 gives the same greedy answers as transformers in float32 (200 of 200 of the demo's
    held-out puzzles) in half the time, start-up included (``benchmarks/bench_evaluate_cpu.py``).
    """
    version, cpu_distribution = installed_vllm()
    if version is None:
        return "transformers"
    if is_cpu_build(version, cpu_distribution=cpu_distribution):
        return "vllm"
    import torch

    return "vllm" if torch.cuda.is_available() else "transformers"


def check_model(model: str) -> str:
    """``model`` with ``~`` expanded; :class:`EvaluationError` if it looks like a local path that does not exist.

    A value is local when it starts with ``/``, ``.`` or ``~`` or its parent folder exists
    (``ckpt`` in the current folder, ``output/run/checkpoint-9`` under an existing ``output/run``);
    otherwise it is a hub id such as ``Qwen/Qwen2.5-3B-Instruct``, left to swift.

    >>> check_model("Qwen/Qwen2.5-3B-Instruct")
    'Qwen/Qwen2.5-3B-Instruct'
    >>> check_model("./no_such_model")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    swift_plugins.tools.evaluate.EvaluationError: model ./no_such_model: no such folder (give a model folder, ...)
    """
    path = Path(model).expanduser()
    local = model.startswith(("/", ".", "~")) or path.parent.is_dir()
    if local and not path.exists():
        raise EvaluationError(
            f"model {model}: no such folder "
            "(give a model folder, a swift checkpoint or a hub id such as Qwen/Qwen2.5-3B-Instruct)"
        )
    return str(path) if local else model


def check_data(task: str, data: str | Path) -> int:
    """The number of rows of ``data``; :class:`DataError` naming the file (and row) unless every row is ``task``'s."""
    rules = task_named(task).data
    count = 0
    try:
        for where, row in read_rows(data):
            rules.check_columns(row, where)
            dataset = rules.check_row(row, where).get("gym_dataset")
            if dataset is not None and task != f"gym:{dataset}":  # a gym task's report is of one dataset
                raise DataError(f"{where}: a gym:{dataset} row, not one of --task {task}: evaluate each dataset apart")
            count += 1
    except OSError as error:
        raise DataError(f"--data {data}: cannot read it ({error.strerror or error})") from None
    if count == 0:
        raise DataError(f"--data {data}: no rows (expected {rules.name} rows: {', '.join(rules.columns)})")
    return count


def with_data_columns(
    results: Iterable[tuple[str, dict[str, Any]]], data: str | Path, columns: Sequence[str]
) -> Iterator[tuple[str, dict[str, Any]]]:
    """swift infer's result rows with ``columns`` of the data rows they answer put back (one result per data row,
    in order: swift infer writes them so); the result's own values win.

    >>> results = [("r:1", {"response": "5", "question": "q1"})]
    >>> list(with_data_columns(results, "d.jsonl", ()))
    [('r:1', {'response': '5', 'question': 'q1'})]
    """
    if not columns:
        yield from results
        return
    for (where, row), (_, source) in zip(results, read_rows(data), strict=True):
        yield where, {**{column: source.get(column) for column in columns}, **row}


def _model_arguments(model: str) -> list[str]:
    folder = Path(model)
    if (folder / "adapter_config.json").is_file():
        return ["--adapters", model]
    return ["--model", model]


def infer_command(
    model: str,
    data: str,
    result_path: str,
    *,
    backend: str,
    sampling: Sampling = GREEDY,
    max_new_tokens: int = 256,
    batch_size: int = 64,
    system: str | None = None,
    extra: Sequence[str] = (),
) -> list[str]:
    """The command of an evaluation: ``swift infer``'s arguments, run by :mod:`.swift_infer`."""
    command = [
        sys.executable,
        "-m",
        "swift_plugins.tools.swift_infer",
        *_model_arguments(model),
        "--external_plugins",
        str(PLUGIN),
        "--val_dataset",
        data,
        "--infer_backend",
        backend,
        *sampling.swift_args(),
        "--max_new_tokens",
        str(max_new_tokens),
        "--result_path",
        result_path,
    ]
    if backend == "transformers":
        command += ["--max_batch_size", str(batch_size)]
    else:
        command += engine_args()
    if system is not None:
        command += ["--system", system]
    return command + list(extra)


def _check_out_dir(out_dir: Path) -> None:
    others = sorted(entry.name for entry in out_dir.iterdir() if entry.name not in OUTPUTS) if out_dir.is_dir() else []
    if others:
        raise EvaluationError(
            f"--out {out_dir}: holds {', '.join(others[:3])}{' …' if len(others) > 3 else ''}, "
            "not only a previous evaluation's files; give a new or empty folder"
        )


def _run(command: list[str], log: Path | None) -> int:
    """Run ``command`` in a session of its own, its output to ``log`` (else the terminal); on Ctrl-C or SIGTERM,
    stop its whole process tree (TERM, then KILL after a grace period) and re-raise."""
    with Children(Console("python -m swift_plugins evaluate"), grace=STOP_GRACE_SECONDS) as children:
        return children.start_process(command, None, log).wait()


def evaluate(
    model: str,
    data: str | Path,
    out_dir: str | Path,
    *,
    task: str = "countdown",
    backend: str | None = None,
    sampling: Sampling = GREEDY,
    limit: int | None = None,
    quiet: bool = False,
    **options: Any,
) -> dict[str, Any]:
    """Run ``swift infer`` on ``task``'s ``data`` file (its first ``limit`` rows, if given; ``sampling.samples``
    answers a row), score the answers and return the report.

    ``options`` go to :func:`infer_command`; ``max_new_tokens`` defaults to the task's training completion length
    (answers as long as training allowed). swift's output goes to ``out_dir/infer.log`` if ``quiet``, else to the
    terminal; when swift fails, its log is kept beside ``out_dir``.
    """
    out_dir = Path(out_dir)
    model = check_model(model)
    log = out_dir.with_name(f"{out_dir.name}.infer.log")  # where swift's log is kept when it fails
    local = model if Path(model).exists() else None  # a hub id names no file here
    check_outputs([(out_dir, FOLDER), (log if quiet else None, (".log",))], inputs=[data, local])
    check_data(task, data)
    spec = task_named(task)
    check_held_out(data, lambda rows: row_keys(rows, spec.data.columns))  # not of an older training file, nor in it
    _check_out_dir(out_dir)
    if options.get("max_new_tokens") is None:
        options["max_new_tokens"] = spec.preset.completion_tokens
    scoring = spec.scoring_module()
    backend = backend or default_backend()
    try:
        with atomic_folder(out_dir) as work, tempfile.TemporaryDirectory(prefix="evaluate-") as scratch:
            asked = _asked(data, sampling.samples, limit, Path(scratch))
            results = work / "results.jsonl"
            command = infer_command(model, str(asked), str(results), backend=backend, sampling=sampling, **options)
            status = _run(command, work / "infer.log" if quiet else None)
            if status != 0 or not results.is_file():
                where = "see its output above"
                if quiet:
                    os.replace(work / "infer.log", log)
                    where = f"see {log}"
                raise EvaluationError(f"swift infer failed with status {status} on {model} ({where})")
            final = str(out_dir / results.name)  # where the rows will be: the examples name that file
            rows = with_data_columns(read_rows(results), asked, spec.result_columns)
            samples = scoring.samples_from_rows((where.replace(str(results), final, 1), row) for where, row in rows)
            report = {"model": str(model), "task": task, "data": str(data), "backend": backend}
            dtype = Flags(options.get("extra", ())).value("torch_dtype")
            if dtype:  # what compare checks: stages paired in one precision
                report["torch_dtype"] = dtype
            if limit is not None:
                report["limit"] = limit
            if not sampling.greedy:
                report["sampling"] = asdict(sampling)
            report.update(scoring.score_samples(samples))
            if not sampling.greedy:  # each result row says how many of its row's answers are right
                solved = solve_counts(samples, sampling.samples)
                answers = [dict(row, solved=count) for (_, row), count in zip(read_rows(results), solved, strict=True)]
                write_jsonl(answers, results)
            write_jsonl(map(scoring.sample_record, samples), work / "examples.jsonl")
            write_text(json.dumps(report, indent=2) + "\n", work / "score.json")
    except OSError as error:
        raise EvaluationError(f"--out {out_dir}: cannot write it ({error.strerror or error})") from None
    return report


def _asked(data: str | Path, times: int, limit: int | None, folder: Path) -> Path:
    """``data``'s rows (its first ``limit``, if given), each ``times`` times in a row, as one jsonl file in
    ``folder``: one run asks them all; ``data`` itself when that is every row once."""
    if times == 1 and limit is None:
        return Path(data)
    path = folder / "asked.jsonl"
    write_jsonl((row for _, row in itertools.islice(read_rows(data), limit) for _ in range(times)), path)
    return path


def solve_counts(samples: Sequence[Any], per_row: int) -> list[int]:
    """For each sample, how many of its row's ``per_row`` consecutive samples are correct.

    >>> from types import SimpleNamespace as S
    >>> solve_counts([S(verdict=v) for v in ("correct", "wrong", "wrong", "wrong")], 2)
    [1, 1, 0, 0]
    """
    correct = [is_correct(sample) for sample in samples]
    counts = [sum(correct[start : start + per_row]) for start in range(0, len(correct), per_row)]
    return [count for count in counts for _ in range(per_row)]
