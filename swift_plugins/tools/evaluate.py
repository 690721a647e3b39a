"""Held-out evaluation in one call: greedy ``swift infer`` on a task's data file, then the task's scoring.

The same command evaluates the CPU demo's checkpoints and a GPU run's, for every task of
:data:`SCORING` (Countdown puzzles, GSM8K questions): a plain model folder or hub
id, a swift full fine-tuning checkpoint (its ``args.json`` names the model type and template) or a
LoRA checkpoint (``adapter_config.json``: passed as ``--adapters``). vLLM is used when it is
installed and a GPU is visible, else transformers.

>>> command = infer_command("ckpt", "eval.jsonl", "out.jsonl", backend="transformers")
>>> command[:3], command[command.index("--temperature") + 1]
(['infer', '--model', 'ckpt'], '0')

Writes into ``out_dir``: ``results.jsonl`` (swift's rows), ``score.json`` (the report) and
``examples.jsonl`` (one scored row per response). Each appears only complete: swift writes to a
temporary name that is renamed when it succeeds.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..core.errors import DataError, PluginError
from ..core.files import write_jsonl, write_text

__all__ = ["SCORING", "EvaluationError", "default_backend", "evaluate", "infer_command", "scoring_of"]

PLUGIN = Path(__file__).resolve().parents[1] / "plugin.py"
# task -> its scoring module: load_samples, score_samples, sample_record, format_report
SCORING = {"countdown": "swift_plugins.countdown.scoring", "gsm8k": "swift_plugins.gsm8k.scoring"}


class EvaluationError(PluginError):
    """``swift infer`` failed or is missing; the message says where its log is."""


def scoring_of(task: str) -> Any:
    """The scoring module of ``task``.

    >>> scoring_of("gsm8k").__name__
    'swift_plugins.gsm8k.scoring'
    """
    return importlib.import_module(SCORING[task])


def default_backend() -> str:
    """``vllm`` when vLLM is installed and a CUDA device is visible, else ``transformers``."""
    if importlib.util.find_spec("vllm") is None:
        return "transformers"
    import torch

    return "vllm" if torch.cuda.is_available() else "transformers"


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
    max_new_tokens: int = 256,
    batch_size: int = 64,
    system: str | None = None,
    extra: Sequence[str] = (),
) -> list[str]:
    """The ``swift infer`` arguments (after ``swift``) of a greedy evaluation."""
    command = [
        "infer",
        *_model_arguments(model),
        "--external_plugins",
        str(PLUGIN),
        "--val_dataset",
        data,
        "--infer_backend",
        backend,
        "--temperature",
        "0",
        "--max_new_tokens",
        str(max_new_tokens),
        "--result_path",
        result_path,
    ]
    if backend == "transformers":
        command += ["--max_batch_size", str(batch_size)]
    if system is not None:
        command += ["--system", system]
    return command + list(extra)


def _swift() -> str:
    beside = Path(sys.executable).with_name("swift")
    found = str(beside) if beside.is_file() else shutil.which("swift")
    if found is None:
        raise EvaluationError("swift not found: pip install ms-swift (this package depends on it)")
    return found


def evaluate(
    model: str,
    data: str | Path,
    out_dir: str | Path,
    *,
    task: str = "countdown",
    backend: str | None = None,
    log: Path | None = None,
    **options: Any,
) -> dict[str, Any]:
    """Run ``swift infer`` greedily on ``task``'s ``data`` file, score the answers and return the report.

    ``options`` go to :func:`infer_command`. swift's output goes to ``log`` if given, else to the terminal.
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    if not Path(data).is_file():
        raise DataError(f"--data {data}: no such file")
    scoring = scoring_of(task)
    backend = backend or default_backend()
    handle, partial = tempfile.mkstemp(prefix=".results.", suffix=".jsonl", dir=out_dir)
    os.close(handle)
    os.unlink(partial)  # swift appends to an existing result file: give it a fresh name
    try:
        command = [_swift(), *infer_command(model, str(data), partial, backend=backend, **options)]
        with open(log, "w") if log else open(os.devnull, "w") as sink:
            status = subprocess.run(command, stdout=sink if log else None, stderr=subprocess.STDOUT if log else None)
        if status.returncode != 0 or not os.path.isfile(partial):
            where = f"see {log}" if log else "see its output above"
            raise EvaluationError(f"swift infer failed with status {status.returncode} on {model} ({where})")
        results = out_dir / "results.jsonl"
        os.replace(partial, results)
    finally:
        if os.path.exists(partial):
            os.unlink(partial)
    samples = scoring.load_samples([results])
    report = {"model": str(model), "task": task, "data": str(data), "backend": backend}
    report.update(scoring.score_samples(samples))
    write_jsonl(map(scoring.sample_record, samples), out_dir / "examples.jsonl")
    write_text(json.dumps(report, indent=2) + "\n", out_dir / "score.json")
    return report
