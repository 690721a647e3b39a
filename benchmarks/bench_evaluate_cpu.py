"""Held-out evaluation speed on CPU: ``python -m swift_plugins evaluate`` at several batch sizes.

Each batch size evaluates the same puzzles with the same model (greedy, 76 new tokens, as the demo);
the sizes run in turn, round after round, so the machine's drift hits them alike. The ratio is against
the default batch size (64), measured in the same run. Wall time of the whole command, start-up
(loading swift and the model) included, as a user waits for it.

    python benchmarks/bench_evaluate_cpu.py output/cpu_demo/sft/v0-<time>/checkpoint-36 \\
        --data output/cpu_demo/data/puzzles.test.jsonl --batch-sizes 64 32 100 200 --rounds 1
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BASELINE = 64
OFFLINE = {"HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}


def evaluate_seconds(model: str, data: Path, batch_size: int, out: Path) -> float:
    command = [sys.executable, "-m", "swift_plugins", "evaluate", model, "--task", "countdown", "--data", str(data),
               "--out", str(out), "--max-new-tokens", "76", "--batch-size", str(batch_size), "--quiet", "--",
               "--model_type", "llama", "--template", "chatml", "--torch_dtype", "float32"]  # fmt: skip
    started = time.monotonic()
    result = subprocess.run(command, capture_output=True, text=True, env={**os.environ, **OFFLINE})
    if result.returncode != 0:
        sys.exit(f"bench_evaluate_cpu: evaluate --batch-size {batch_size} failed: {result.stderr[-500:]}")
    return time.monotonic() - started


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model", help="a model folder or checkpoint (the demo's SFT checkpoint answers like GRPO's)")
    parser.add_argument("--data", type=Path, required=True, help="held-out puzzles (puzzles.test.jsonl)")
    parser.add_argument("--puzzles", type=int, default=200, help="evaluate the first N puzzles of --data")
    parser.add_argument("--batch-sizes", type=int, nargs="+", default=[BASELINE, 32, 100, 200])
    parser.add_argument("--rounds", type=int, default=1)
    args = parser.parse_args(argv)
    sizes = [BASELINE, *(size for size in args.batch_sizes if size != BASELINE)]
    seconds: dict[int, list[float]] = {size: [] for size in sizes}
    with tempfile.TemporaryDirectory() as scratch:
        data = Path(scratch) / "puzzles.jsonl"
        data.write_text("".join(args.data.read_text().splitlines(keepends=True)[: args.puzzles]))
        for round_index in range(args.rounds):
            for size in sizes:
                seconds[size].append(evaluate_seconds(args.model, data, size, Path(scratch) / f"eval-{size}"))
                print(f"round {round_index + 1}: batch {size}: {seconds[size][-1]:.0f} s", file=sys.stderr)
    baseline = sum(seconds[BASELINE]) / len(seconds[BASELINE])
    print(f"| batch size | seconds, {args.puzzles} puzzles (mean of {args.rounds}) | puzzles/s | vs {BASELINE} |")
    print("|---|---|---|---|")
    for size in sizes:
        mean = sum(seconds[size]) / len(seconds[size])
        print(f"| {size} | {mean:.0f} | {args.puzzles / mean:.2f} | {baseline / mean:.2f}x |")


if __name__ == "__main__":
    main()
