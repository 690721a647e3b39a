"""The demo's GRPO steps on CPU with its colocated vLLM engine in float32 and in bfloat16.

Each variant runs the demo's own GRPO command (``swift rlhf`` from a finished demo's SFT checkpoint on its selected
puzzles, bfloat16 autocast where the CPU has AVX-512) for ``--steps`` steps, the engine's dtype the only change
(``--vllm_engine_kwargs '{"dtype": ...}'``, which the package's vLLM CPU adaptation hands the engine). Seconds a
step are ms-swift's own ``step_time`` (generation, rewards and training; start-up left out); the baseline is the
float32 engine, measured in the same run. Rollouts sample, so the variants' completions differ: the table gives
the accuracy reward each sampled too.

    python benchmarks/bench_rollout_cpu.py --demo-dir output/cpu_demo --steps 4
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from swift_plugins.demo.plan import DemoPlan, grpo_command
from swift_plugins.demo.run import detect_hardware
from swift_plugins.watch.log import read_steps

BASELINE = "float32"
VARIANTS = ("float32", "bfloat16")
ACCURACY = "rewards/CountdownAccuracy/mean"


def run_variant(dtype: str, plan: DemoPlan, steps: int, out: Path) -> dict:
    """Seconds a step and the sampled accuracy reward of ``steps`` GRPO steps with the engine in ``dtype``."""
    extra = ["--vllm_engine_kwargs", json.dumps({"dtype": dtype}), "--max_steps", str(steps),
             "--save_steps", str(10 * steps)]  # fmt: skip
    command = grpo_command(plan, output_dir=out, extra=extra)
    result = subprocess.run(command.argv, env=command.environment(os.environ), capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"bench_rollout_cpu: {dtype} failed: {result.stderr[-800:]}")
    ran = [step for step in read_steps(out / "logging.jsonl") if "step_time" in step]
    seconds = [step["step_time"] for step in ran]
    print(f"{dtype}: {', '.join(f'{s:.0f}' for s in seconds)} s a step", file=sys.stderr)
    return {"seconds": seconds, "reward": sum(step[ACCURACY] for step in ran) / len(ran)}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--demo-dir", type=Path, required=True, help="a finished CPU demo's folder")
    parser.add_argument("--steps", type=int, default=4, help="GRPO steps a variant")
    args = parser.parse_args(argv)
    plan = DemoPlan.from_folder(args.demo_dir, cpu_capability=detect_hardware()[3])
    os.environ["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"  # the venv's swift
    with tempfile.TemporaryDirectory() as scratch:
        results = {dtype: run_variant(dtype, plan, args.steps, Path(scratch) / dtype) for dtype in VARIANTS}
    base = sum(results[BASELINE]["seconds"]) / args.steps
    print(f"{args.steps} GRPO steps of {plan.completions_per_step()} completions, training "
          f"{'bfloat16 autocast' if plan.bf16 else 'float32'}; speed = the baseline's seconds a step / this one's")
    print("| engine | seconds a step | speed | sampled accuracy reward |")
    print("|---|---|---|---|")
    for dtype, r in results.items():
        mean = sum(r["seconds"]) / args.steps
        print(f"| {dtype} | {mean:.1f} | {base / mean:.2f}x | {r['reward']:.3f} |")


if __name__ == "__main__":
    main()
