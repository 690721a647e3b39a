"""Held-out evaluation speed on CPU: ``python -m swift_plugins evaluate`` at several batch sizes.

Each batch size evaluates the same puzzles with the same model (greedy, 76 new tokens, as the demo);
the sizes run in turn, round after round, so the machine's drift hits them alike. The ratio is against
the default batch size (64), measured in the same run. Two clocks for the whole command, start-up
(loading swift and the model) included: CPU seconds of the command and its children (what it costs,
nearly blind to other programs on a shared machine) and wall seconds (what a user waits).

    python benchmarks/bench_evaluate_cpu.py output/cpu_demo/sft/v0-<time>/checkpoint-36 \\
        --data output/cpu_demo/data/puzzles.test.jsonl --batch-sizes 64 32 100 200 --rounds 1
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BASELINE = 64
OFFLINE = {"HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def evaluate_seconds(model: str, data: Path, batch_size: int, out: Path) -> tuple[float, float]:
    """(CPU seconds, wall seconds) of one ``evaluate`` command."""
    command = [sys.executable, "-m", "swift_plugins", "evaluate", model, "--task", "countdown", "--data", str(data),
               "--out", str(out), "--max-new-tokens", "76", "--batch-size", str(batch_size), "--quiet", "--",
               "--model_type", "llama", "--template", "chatml", "--torch_dtype", "float32"]  # fmt: skip
    started, cpu = time.monotonic(), _children_cpu()
    result = subprocess.run(command, capture_output=True, text=True, env={**os.environ, **OFFLINE})
    if result.returncode != 0:
        sys.exit(f"bench_evaluate_cpu: evaluate --batch-size {batch_size} failed: {result.stderr[-500:]}")
    return _children_cpu() - cpu, time.monotonic() - started


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model", help="a model folder or checkpoint (the demo's SFT checkpoint answers like GRPO's)")
    parser.add_argument("--data", type=Path, required=True, help="held-out puzzles (puzzles.test.jsonl)")
    parser.add_argument("--puzzles", type=int, default=200, help="evaluate the first N puzzles of --data")
    parser.add_argument("--batch-sizes", type=int, nargs="+", default=[BASELINE, 32, 100, 200])
    parser.add_argument("--rounds", type=int, default=1)
    args = parser.parse_args(argv)
    sizes = [BASELINE, *(size for size in args.batch_sizes if size != BASELINE)]
    seconds: dict[int, list[tuple[float, float]]] = {size: [] for size in sizes}
    with tempfile.TemporaryDirectory() as scratch:
        data = Path(scratch) / "puzzles.jsonl"
        data.write_text("".join(args.data.read_text().splitlines(keepends=True)[: args.puzzles]))
        for round_index in range(args.rounds):
            for size in sizes:
                seconds[size].append(evaluate_seconds(args.model, data, size, Path(scratch) / f"eval-{size}"))
                cpu, wall = seconds[size][-1]
                print(f"round {round_index + 1}: batch {size}: {cpu:.0f} CPU-s, {wall:.0f} s", file=sys.stderr)

    def mean(size: int, clock: int) -> float:
        return sum(times[clock] for times in seconds[size]) / len(seconds[size])

    print(f"{args.puzzles} puzzles, mean of {args.rounds} round(s); speed = the batch-{BASELINE} time / this time")
    print("| batch size | CPU seconds | speed (CPU) | wall seconds | speed (wall) |")
    print("|---|---|---|---|---|")
    for size in sizes:
        cpu, wall = mean(size, 0), mean(size, 1)
        print(f"| {size} | {cpu:.0f} | {mean(BASELINE, 0) / cpu:.2f}x | {wall:.0f} | {mean(BASELINE, 1) / wall:.2f}x |")


if __name__ == "__main__":
    main()
