"""Held-out evaluation on CPU: ``python -m swift_plugins evaluate`` through transformers and through vLLM.

Each variant evaluates the same puzzles with the same model (greedy, 76 new tokens, as the demo), the whole command
timed, start-up included (loading swift and the model; vLLM's engine start and compilation): CPU seconds of the
command and its children, and wall seconds. The baseline is transformers in float32 at the demo's batch of 50,
measured in the same run; every variant's answers are compared with the baseline's, puzzle by puzzle.

    python benchmarks/bench_evaluate_cpu.py output/cpu_demo/sft/checkpoint-36 \\
        --data output/cpu_demo/data/puzzles.test.jsonl --variants vllm-float32 vllm-bfloat16 vllm-float32-compiled

With ``--trained`` (a later checkpoint, e.g. GRPO's), each variant also evaluates it, and the table gives the change
it measures, trained minus ``model`` paired by puzzle with its 95% interval: whether a variant changes the demo's
conclusion, not only its answers. ``--baseline vllm-float32`` skips the slow transformers baseline.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from swift_plugins.core.intervals import paired_difference
from swift_plugins.core.processes import children_cpu_seconds
from swift_plugins.demo.plan import model_args

OFFLINE = {"HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
# name -> (evaluate's --backend, the dtype swift infer loads the model in, more swift flags); evaluate runs
# vLLM eager on a CPU (--vllm_enforce_eager true): "-compiled" lets vLLM compile its graphs, as it does by default
VARIANTS = {
    "transformers-float32": ("transformers", "float32", ()),
    "vllm-float32": ("vllm", "float32", ()),
    "vllm-bfloat16": ("vllm", "bfloat16", ()),
    "vllm-float32-compiled": ("vllm", "float32", ("--vllm_enforce_eager", "false")),
    "transformers-bfloat16": ("transformers", "bfloat16", ()),
}
BASELINE = "transformers-float32"


def run_variant(name: str, model: str, data: Path, out: Path, batch_size: int) -> dict:
    """CPU and wall seconds of one ``evaluate`` command, its accuracy, and its answers and verdicts by puzzle."""
    backend, dtype, flags = VARIANTS[name]
    command = [sys.executable, "-m", "swift_plugins", "evaluate", model, "--task", "countdown", "--data", str(data),
               "--out", str(out), "--max-new-tokens", "76", "--batch-size", str(batch_size), "--backend", backend,
               "--quiet", "--", *model_args(dtype), *flags]  # fmt: skip
    started, cpu = time.monotonic(), children_cpu_seconds()
    result = subprocess.run(command, capture_output=True, text=True, env={**os.environ, **OFFLINE})
    if result.returncode != 0:
        sys.exit(f"bench_evaluate_cpu: {name} failed: {result.stderr[-800:]}")
    cpu, wall = children_cpu_seconds() - cpu, time.monotonic() - started
    answers, correct = {}, {}
    rows = (out / "results.jsonl").read_text().splitlines()
    verdicts = (out / "examples.jsonl").read_text().splitlines()  # one a result row, in its order
    for line, verdict in zip(rows, verdicts, strict=True):
        row = json.loads(line)
        prompt = next(m["content"] for m in row["messages"] if m["role"] == "user")
        answers[prompt], correct[prompt] = row["response"], json.loads(verdict)["verdict"] == "correct"
    accuracy = json.loads((out / "score.json").read_text())["accuracy"]
    print(f"{name} {model}: {cpu:.0f} CPU-s, {wall:.0f} s, accuracy {accuracy:.1%}", file=sys.stderr)
    return {"cpu_seconds": cpu, "seconds": wall, "accuracy": accuracy, "answers": answers, "correct": correct}


def change(before: dict, after: dict) -> str:
    """``after``'s accuracy minus ``before``'s, paired by puzzle: points and the 95% interval."""
    prompts = sorted(before["correct"])
    difference, (low, high) = paired_difference([before["correct"][p] for p in prompts],
                                                [after["correct"][p] for p in prompts])  # fmt: skip
    return f"{difference * 100:+.1f} [{low * 100:.1f}, {high * 100:.1f}]"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model", help="a model folder or checkpoint (the demo's SFT checkpoint answers like GRPO's)")
    parser.add_argument("--data", type=Path, required=True, help="held-out puzzles (puzzles.test.jsonl)")
    parser.add_argument("--puzzles", type=int, default=200, help="evaluate the first N puzzles of --data")
    parser.add_argument("--batch-size", type=int, default=50, help="transformers' batch (the demo's: 50)")
    parser.add_argument("--baseline", choices=list(VARIANTS), default=BASELINE)
    parser.add_argument("--variants", nargs="+", choices=list(VARIANTS), default=["vllm-float32", "vllm-bfloat16"])
    parser.add_argument("--trained", help="a later checkpoint of the same run: each variant's paired change to it")
    args = parser.parse_args(argv)
    names = [args.baseline, *(name for name in args.variants if name != args.baseline)]
    results, trained = {}, {}
    with tempfile.TemporaryDirectory() as scratch:
        data = Path(scratch) / "puzzles.jsonl"
        data.write_text("".join(args.data.read_text().splitlines(keepends=True)[: args.puzzles]))
        for name in names:
            results[name] = run_variant(name, args.model, data, Path(scratch) / name, args.batch_size)
            if args.trained:
                trained[name] = run_variant(name, args.trained, data, Path(scratch) / f"{name}-trained",
                                            args.batch_size)  # fmt: skip
    base = results[args.baseline]
    print(f"{args.puzzles} puzzles; speed = the baseline's seconds / this variant's, start-up included")
    header = ["variant", "CPU seconds", "speed (CPU)", "wall seconds", "speed (wall)", "accuracy",
              "answers unlike the baseline", *(["change to --trained, paired"] if trained else [])]  # fmt: skip
    print(f"| {' | '.join(header)} |", f"|{'---|' * len(header)}", sep="\n")
    for name, r in results.items():
        changed = sum(r["answers"][prompt] != answer for prompt, answer in base["answers"].items())
        cells = [f"{name}{' (the baseline)' if name == args.baseline else ''}", f"{r['cpu_seconds']:.0f}",
                 f"{base['cpu_seconds'] / r['cpu_seconds']:.2f}x", f"{r['seconds']:.0f}",
                 f"{base['seconds'] / r['seconds']:.2f}x", f"{r['accuracy']:.1%}",
                 f"{changed} of {len(base['answers'])}", *([change(r, trained[name])] if trained else [])]  # fmt: skip
        print(f"| {' | '.join(cells)} |")


if __name__ == "__main__":
    main()
