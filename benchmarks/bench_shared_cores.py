"""Two evaluations at once on a machine's shared cores, as ``make test``'s lanes run: OpenMP's wait policy.

Each of torch's and vLLM's OpenMP threads spins while it waits for the others (libgomp's default). With more busy
processes than cores, a spinning thread holds a core that another process's working thread needs. The baseline is
one ``evaluate`` alone; then two at once with the default policy, and two at once with ``OMP_WAIT_POLICY=PASSIVE``
(a waiting thread sleeps), which ``make test`` sets. Each run: SmolLM2 answering 40 held-out Countdown puzzles
(greedy, 64 new tokens, vLLM's CPU build), the command timed whole, start-up included.

    python benchmarks/bench_shared_cores.py output/cpu_demo/model
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

OFFLINE = {"HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}


def evaluate(model: str, data: Path, out: Path, env: dict[str, str]) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "swift_plugins", "evaluate", model, "--task", "countdown", "--data", str(data),
         "--out", str(out), "--max-new-tokens", "64", "--batch-size", "40", "--quiet",
         "--", "--model_type", "llama", "--template", "chatml", "--torch_dtype", "float32"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip


def timed(model: str, data: Path, folder: Path, name: str, count: int, env: dict[str, str]) -> float:
    """Wall seconds for ``count`` evaluations started together."""
    started = time.monotonic()
    runs = [evaluate(model, data, folder / f"{name}-{index}", env) for index in range(count)]
    if any(run.wait() for run in runs):
        raise SystemExit(f"an evaluation of {name} failed: rerun it by hand to see why")
    return time.monotonic() - started


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model", help="SmolLM2's folder (python -m swift_plugins smol-model DIR writes one)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        subprocess.run(
            [sys.executable, "-m", "swift_plugins", "countdown", "generate", "--size", "200", "--test-size", "40",
             "--seed", "11", "--count", "3", "--numbers", "1-10", "--targets", "1-30",
             "--out", str(folder / "puzzles.jsonl"), "--quiet"],
            check=True,
        )  # fmt: skip
        data = folder / "puzzles.test.jsonl"
        spinning = {key: value for key, value in os.environ.items() if key != "OMP_WAIT_POLICY"} | OFFLINE
        alone = timed(args.model, data, folder, "alone", 1, spinning)
        rows = [
            ("one alone (baseline)", alone),
            ("two at once, threads spin while waiting (default)", timed(args.model, data, folder, "spin", 2, spinning)),
            ("two at once, OMP_WAIT_POLICY=PASSIVE", timed(args.model, data, folder, "passive", 2,
                                                            spinning | {"OMP_WAIT_POLICY": "PASSIVE"})),
        ]  # fmt: skip
    print(f"{os.cpu_count()} cores\n| run | wall s | × one alone |\n|---|---|---|")
    for name, seconds in rows:
        print(f"| {name} | {seconds:.0f} | {seconds / alone:.2f} |")


if __name__ == "__main__":
    main()
