"""Time and peak memory of a plain ``python -m swift_plugins watch`` on a long log (200,000 step lines).

The log is the healthy H100 run's 150 step lines (``tests/data/h100_grpo_logging.jsonl``) repeated with their
steps renumbered, about 1.3 KB a line as ms-swift writes them, without a summary line; the command runs in a
child process and its peak resident memory is the child's ``ru_maxrss``.

    python benchmarks/bench_watch_read.py [--lines 200000]

Prints the log's size, the command's CPU and wall time, its peak memory and its summary line.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

H100 = Path(__file__).resolve().parent.parent / "tests" / "data" / "h100_grpo_logging.jsonl"


def write_long_log(path: Path, lines: int) -> None:
    """``lines`` step lines made from the H100 run's, numbered 1..lines."""
    steps = [json.loads(line) for line in H100.read_text().splitlines()]
    steps = [record for record in steps if "global_step/max_steps" in record and "train_runtime" not in record]
    with path.open("w") as file:
        for step in range(1, lines + 1):
            record = dict(steps[(step - 1) % len(steps)], **{"global_step/max_steps": f"{step}/{lines}"})
            file.write(json.dumps(record) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=200_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        log = Path(folder) / "logging.jsonl"
        write_long_log(log, args.lines)
        start = time.perf_counter()
        result = subprocess.run(
            [sys.executable, "-m", "swift_plugins", "watch", str(log)], capture_output=True, text=True, check=False
        )
        seconds = time.perf_counter() - start
        usage = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu, peak = usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024  # ru_maxrss: KiB on Linux
        print(f"log: {args.lines} lines, {log.stat().st_size / 2**20:.0f} MiB")
        print(f"watch: {cpu:.1f} s CPU, {seconds:.1f} s wall, peak memory {peak:.0f} MiB, exit {result.returncode}")
        print(f"stdout: {result.stdout.strip()}")
        print(f"stderr: {result.stderr.strip()[:300]}")


if __name__ == "__main__":
    main()
