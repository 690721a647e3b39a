"""Held-out learning per minute of CPU GRPO: which settings of the demo's GRPO stage teach SmolLM2 most in a budget.

Each setting is a real ``swift rlhf --rlhf_type grpo`` run from a CPU demo's cold-start SFT checkpoint, with the
demo's model, puzzles, rewards and GRPO flags, changing only the flags the setting names. A run is stopped when
its process tree has used ``--minutes`` of the machine (CPU seconds = minutes x 60 x cores, start-up included:
vLLM's engine start is part of what a setting costs), and its newest checkpoint is evaluated on the demo's
held-out puzzles (greedy, as the demo evaluates) and paired with the SFT checkpoint's evaluation. The baseline,
today's demo setting, runs first.

    python benchmarks/bench_grpo_cpu.py --demo-dir output/cpu_demo --minutes 10 --settings vllm vllm-lr2e-5

Prints one table (steps, seconds a step, completions, held-out accuracy and its paired change against SFT with
the 95% interval, the sampled accuracy reward in the first and last quarter of the steps, groups without reward
spread) and writes it, with every run's figures, to ``<out>/bench_grpo_cpu.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from swift_plugins.demo.plan import DemoPlan, grpo_command  # noqa: E402
from swift_plugins.tools.compare import compare  # noqa: E402
from swift_plugins.watch.checkpoints import newest_checkpoint  # noqa: E402

ACCURACY = "rewards/CountdownAccuracy/mean"
# name -> (what it changes, the flags it sets over the demo's GRPO stage); "today" generates with transformers
SETTINGS: dict[str, tuple[str, list[str]]] = {
    "today": ("the demo before vLLM: transformers generation", []),
    "vllm": ("vLLM colocate generation, eager, float32 like the trainer's weights", []),
    "vllm-topk-all": ("sampling the whole vocabulary (swift's --top_k -1)", ["--top_k", "-1"]),
    "vllm-lr2e-5": ("lr 2e-5", ["--learning_rate", "2e-5"]),
    "vllm-lr5e-5": ("lr 5e-5", ["--learning_rate", "5e-5"]),
    "vllm-g16": ("16 completions per puzzle (2 puzzles a step)", ["--num_generations", "16"]),
    "vllm-b64": ("64 completions a step (8 puzzles)", ["--per_device_train_batch_size", "64"]),
    "vllm-iter2": ("2 updates per generated batch", ["--num_iterations", "2"]),
    "vllm-lora": (
        "LoRA r16 on all linear layers, lr 1e-4",
        ["--tuner_type", "lora", "--lora_rank", "16", "--lora_alpha", "32", "--target_modules", "all-linear",
         "--learning_rate", "1e-4"],
    ),
    "vllm-fp32": ("float32 training (no bfloat16 autocast)", ["--bf16", "false", "--use_cpu", "false"]),
}


def _tree_cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of ``pid`` and its live descendants, from /proc."""
    total, pending = 0.0, [pid]
    while pending:
        current = pending.pop()
        try:
            fields = Path(f"/proc/{current}/stat").read_text().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12]) + int(fields[13]) + int(fields[14])) / os.sysconf(
                "SC_CLK_TCK"
            )
            for task in Path(f"/proc/{current}/task").iterdir():
                pending += [int(child) for child in (task / "children").read_text().split()]
        except (OSError, IndexError, ValueError):  # the process ended meanwhile
            continue
    return total


def _steps(run: Path) -> list[dict]:
    log = run / "logging.jsonl"
    rows = [json.loads(line) for line in log.read_text().splitlines() if line.strip()] if log.is_file() else []
    return [row for row in rows if ACCURACY in row]


def _quarter_means(steps: list[dict], key: str) -> tuple[float, float]:
    quarter = max(1, len(steps) // 4)
    first, last = steps[:quarter], steps[-quarter:]
    return (round(sum(r[key] for r in first) / len(first), 3), round(sum(r[key] for r in last) / len(last), 3))


def run_setting(name: str, plan: DemoPlan, out: Path, budget: float) -> dict:
    """Train ``name`` until it has used ``budget`` CPU seconds, evaluate its newest checkpoint, pair it with SFT."""
    folder = out / name
    if (folder / "measured.json").is_file():  # a finished run of an earlier invocation: evaluate and pair again
        return _finish(name, plan, folder, **json.loads((folder / "measured.json").read_text()))
    # Until the budget is spent: a checkpoint every 4 steps (the last 2 kept); the demo's rate is constant.
    extra = [*SETTINGS[name][1], "--max_steps", "1000", "--save_steps", "4", "--save_total_limit", "2"]
    command = grpo_command(replace(plan, vllm=name != "today"), output_dir=folder / "grpo", extra=extra)
    folder.mkdir(parents=True, exist_ok=True)
    started, cpu = time.monotonic(), 0.0
    with (folder / "grpo.log").open("w") as log:
        process = subprocess.Popen(command.argv, env=command.environment(os.environ), stdout=log,
                                   stderr=subprocess.STDOUT, start_new_session=True)  # fmt: skip
        while process.poll() is None and cpu < budget:
            time.sleep(1)
            cpu = max(cpu, _tree_cpu_seconds(process.pid))
        seconds = time.monotonic() - started
        if process.poll() is None:
            os.killpg(process.pid, 9)
        process.wait()
    if newest_checkpoint(folder / "grpo") is None:
        return {"setting": name, "failed": f"no checkpoint within the budget (status {process.returncode})"}
    (folder / "measured.json").write_text(json.dumps({"seconds": seconds, "cpu": cpu}))
    return _finish(name, plan, folder, seconds, cpu)


def _finish(name: str, plan: DemoPlan, folder: Path, seconds: float, cpu: float) -> dict:
    """Evaluate the newest checkpoint of ``name``'s run on the held-out puzzles and pair it with SFT's evaluation."""
    checkpoint, ran = newest_checkpoint(folder / "grpo"), _steps(folder / "grpo")
    steps = ran[: int(checkpoint.name.rsplit("-", 1)[1])]  # the evaluated checkpoint's
    evaluation = folder / "eval"
    evaluate = plan.evaluate_command(checkpoint, evaluation)
    subprocess.run(evaluate.argv, env=evaluate.environment(os.environ), check=True, stdout=subprocess.DEVNULL)
    table = compare({"sft": plan.output_dir / "eval" / "sft", name: evaluation})
    stage, change = table["stages"][name], table["changes"][f"{name} - sft"]["accuracy"]
    return {
        "setting": name,
        "changes": SETTINGS[name][0],
        "steps": len(steps),
        "seconds": round(seconds),
        "cpu_seconds": round(cpu),
        "seconds_per_step": round(seconds / max(len(ran), 1), 1),  # every step run within the budget
        "cpu_seconds_per_step": round(cpu / max(len(ran), 1), 1),
        "completions": sum(int(plan.completions_per_step(SETTINGS[name][1])) for _ in steps),
        "accuracy": stage["accuracy"],
        "correct": stage["correct"],
        "change": change["difference"],
        "interval": change["ci95"],
        "reward_first_last_quarter": _quarter_means(steps, ACCURACY),
        "zero_spread_groups": round(sum(r.get("frac_reward_zero_std", 0) for r in steps) / max(len(steps), 1), 2),
    }


def format_table(results: list[dict]) -> str:
    lines = [
        "| setting | steps | CPU-s a step (wall s) | completions | held-out accuracy | change vs SFT [95%] "
        "| accuracy reward (first -> last quarter) | zero-spread groups |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        if "failed" in r:
            lines.append(f"| {r['setting']} | {r['failed']} |")
            continue
        low, high = r["interval"]
        lines.append(
            f"| {r['setting']} ({r['changes']}) | {r['steps']} | {r['cpu_seconds_per_step']} ({r['seconds_per_step']}) "
            f"| {r['completions']} "
            f"| {r['accuracy']:.1%} | {r['change'] * 100:+.1f} [{low * 100:+.1f}, {high * 100:+.1f}] "
            f"| {r['reward_first_last_quarter'][0]:.3f} -> {r['reward_first_last_quarter'][1]:.3f} "
            f"| {r['zero_spread_groups']:.2f} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--demo-dir", type=Path, required=True, help="a finished CPU demo's folder (SFT and its eval)")
    parser.add_argument("--out", type=Path, default=REPO / "output" / "bench_grpo_cpu")
    parser.add_argument("--minutes", type=float, default=10, help="each setting's budget, in minutes of all cores")
    parser.add_argument("--settings", nargs="+", choices=list(SETTINGS), default=list(SETTINGS))
    args = parser.parse_args(argv)
    plan = DemoPlan.from_folder(args.demo_dir)
    budget = args.minutes * 60 * (os.cpu_count() or 1)
    results = []
    for name in dict.fromkeys(["today", *args.settings]):
        results.append(run_setting(name, plan, args.out, budget))
        print(format_table(results[-1:]).splitlines()[-1], file=sys.stderr, flush=True)
        summary = {"minutes": args.minutes, "results": results, "table": format_table(results)}
        (args.out / "bench_grpo_cpu.json").write_text(json.dumps(summary, indent=2) + "\n")
    print(format_table(results))


if __name__ == "__main__":
    main()
