"""The demo's selection on CPU: ``python -m swift_plugins select`` with vLLM in float32 and in bfloat16.

Each variant answers the same candidate rows with the same checkpoint as the demo's selection does (8 sampled answers
a row, temperature 1, the 50 likeliest tokens, the same seed), its whole command timed, start-up included. The
baseline is float32, measured in the same run; for every variant the table gives its time, the histogram of solve
counts, the rows kept and how many of them the baseline kept too. The selection samples, so a lower precision only
has to keep rows of the same difficulty, not the same answers; ``float32-reseeded`` (float32 with the next seed) says
how many rows two draws in the same precision share.

    python benchmarks/bench_select_cpu.py output/cpu_demo/sft/checkpoint-36 \\
        --candidates output/cpu_demo/data/puzzles.jsonl --limit 160 --variants bfloat16 float32-reseeded
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

from swift_plugins.core.files import read_rows
from swift_plugins.core.processes import children_cpu_seconds
from swift_plugins.demo.plan import model_args

OFFLINE = {"HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
BASELINE = "float32"
VARIANTS = {"float32": ("float32", 0), "bfloat16": ("bfloat16", 0), "float32-reseeded": ("float32", 1)}  # dtype, +seed


def run_variant(name: str, args: argparse.Namespace, out: Path) -> dict:
    """CPU and wall seconds of one ``select`` command of variant ``name``, its histogram and the rows it kept."""
    dtype, reseed = VARIANTS[name]
    command = [sys.executable, "-m", "swift_plugins", "select", args.model, "--task", args.task,
               "--candidates", str(args.candidates), "--limit", str(args.limit), "--out", str(out),
               "--samples", str(args.samples), "--top-k", "50", "--seed", str(args.seed + reseed),
               "--max-new-tokens", str(args.max_new_tokens), "--", *model_args(dtype)]  # fmt: skip
    started, cpu = time.monotonic(), children_cpu_seconds()
    result = subprocess.run(command, capture_output=True, text=True, env={**os.environ, **OFFLINE})
    if result.returncode != 0:
        sys.exit(f"bench_select_cpu: {name} failed: {result.stderr[-800:]}")
    cpu, wall = children_cpu_seconds() - cpu, time.monotonic() - started
    report = json.loads(out.with_name(f"{out.name}.selection.json").read_text())
    kept = {json.dumps(row, sort_keys=True) for _, row in read_rows(out)}
    print(f"{name}: {cpu:.0f} CPU-s, {wall:.0f} s, kept {len(kept)}", file=sys.stderr)
    return {"cpu_seconds": cpu, "seconds": wall, "solve_counts": report["solve_counts"], "kept": kept}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model", help="the demo's SFT checkpoint")
    parser.add_argument("--candidates", type=Path, required=True, help="the demo's training rows (puzzles.jsonl)")
    parser.add_argument("--task", default="countdown")
    parser.add_argument("--limit", type=int, default=160, help="the first N candidates (the demo's: 160)")
    parser.add_argument("--samples", type=int, default=8, help="answers a row (the demo's: 8)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--max-new-tokens", type=int, default=76, help="the task's completion length (Countdown: 76)")
    parser.add_argument("--variants", nargs="+", choices=list(VARIANTS)[1:], default=["bfloat16"])
    args = parser.parse_args(argv)
    results = {}
    with tempfile.TemporaryDirectory() as scratch:
        for name in [BASELINE, *args.variants]:
            results[name] = run_variant(name, args, Path(scratch) / name / "selected.jsonl")
    base = results[BASELINE]
    print(f"{args.limit} candidates x {args.samples} answers; speed = the baseline's seconds / this variant's, "
          "start-up included")
    print("| variant | CPU seconds | speed (CPU) | wall seconds | speed (wall) | rows by solve count | kept "
          "| kept by the baseline too |")
    print("|---|---|---|---|---|---|---|---|")
    for name, r in results.items():
        counts = ", ".join(f"{solved}: {rows}" for solved, rows in sorted(r["solve_counts"].items(), key=_as_int))
        speed_cpu, speed_wall = base["cpu_seconds"] / r["cpu_seconds"], base["seconds"] / r["seconds"]
        print(f"| {name} | {r['cpu_seconds']:.0f} | {speed_cpu:.2f}x | {r['seconds']:.0f} | {speed_wall:.2f}x "
              f"| {counts} | {len(r['kept'])} | {len(r['kept'] & base['kept'])} |")


def _as_int(item: tuple[str, int]) -> int:
    return int(item[0])


if __name__ == "__main__":
    main()
