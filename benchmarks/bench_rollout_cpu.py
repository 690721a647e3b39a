"""The demo's GRPO steps on CPU: its colocated vLLM engine in float32 and in bfloat16, the old policy's forward kept
and skipped.

Each variant runs the demo's own GRPO command (``swift rlhf`` from a finished demo's SFT checkpoint on its selected
puzzles, bfloat16 autocast where the CPU has AVX-512) for ``--steps`` steps. Two things change: the engine's dtype
(``--vllm_engine_kwargs '{"dtype": ...}'``, which the package's vLLM CPU adaptation hands the engine), and whether
ms-swift computes the old policy's log-probabilities in a forward pass of their own, as it does without the plugin
(``SWIFT_PLUGINS_OLD_POLICY_FORWARD=1``; :mod:`swift_plugins.integration.old_policy`). Seconds a step are ms-swift's
own ``step_time`` (generation, rewards and training; start-up left out); the baseline is ms-swift's own way, a
float32 engine and the old policy's forward, measured in the same run. Rollouts sample, so the variants'
completions differ: the table gives the accuracy reward each sampled too.

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
from swift_plugins.integration.old_policy import KEEP
from swift_plugins.watch.log import read_steps

# (engine dtype, the old policy's forward kept); the first is the baseline
VARIANTS = (("float32", True), ("bfloat16", True), ("bfloat16", False))
ACCURACY = "rewards/CountdownAccuracy/mean"


def run_variant(dtype: str, old_policy_forward: bool, plan: DemoPlan, steps: int, out: Path) -> dict:
    """Seconds a step and the sampled accuracy reward of ``steps`` GRPO steps with the engine in ``dtype``, the old
    policy's forward kept or skipped."""
    extra = ["--vllm_engine_kwargs", json.dumps({"dtype": dtype}), "--max_steps", str(steps),
             "--save_steps", str(10 * steps)]  # fmt: skip
    command = grpo_command(plan, output_dir=out, extra=extra)
    environment = {**command.environment(os.environ), KEEP: "1" if old_policy_forward else "0"}
    result = subprocess.run(command.argv, env=environment, capture_output=True, text=True)
    name = f"{dtype}, old-policy forward {'kept' if old_policy_forward else 'skipped'}"
    if result.returncode != 0:
        sys.exit(f"bench_rollout_cpu: {name} failed: {result.stderr[-800:]}")
    ran = [step for step in read_steps(out / "logging.jsonl") if "step_time" in step]
    seconds = [step["step_time"] for step in ran]
    print(f"{name}: {', '.join(f'{s:.0f}' for s in seconds)} s a step", file=sys.stderr)
    return {"seconds": seconds, "reward": sum(step[ACCURACY] for step in ran) / len(ran)}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--demo-dir", type=Path, required=True, help="a finished CPU demo's folder")
    parser.add_argument("--steps", type=int, default=4, help="GRPO steps a variant")
    args = parser.parse_args(argv)
    plan = DemoPlan.from_folder(args.demo_dir, cpu_capability=detect_hardware()[3])
    os.environ["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"  # the venv's swift
    with tempfile.TemporaryDirectory() as scratch:
        results = {variant: run_variant(*variant, plan, args.steps, Path(scratch) / f"{variant[0]}-{variant[1]}")
                   for variant in VARIANTS}  # fmt: skip
    base = sum(results[VARIANTS[0]]["seconds"]) / args.steps
    print(f"{args.steps} GRPO steps of {plan.completions_per_step()} completions, training "
          f"{'bfloat16 autocast' if plan.bf16 else 'float32'}; speed = the baseline's seconds a step / this one's")
    print("| engine | old policy's forward | seconds a step | speed | sampled accuracy reward |")
    print("|---|---|---|---|---|")
    for (dtype, old_policy_forward), r in results.items():
        mean = sum(r["seconds"]) / args.steps
        kept = "kept" if old_policy_forward else "skipped"
        print(f"| {dtype} | {kept} | {mean:.1f} | {base / mean:.2f}x | {r['reward']:.3f} |")


if __name__ == "__main__":
    main()
