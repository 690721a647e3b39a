"""Held-out learning per minute of CPU GRPO: which settings of the demo's GRPO stage teach SmolLM2 most in a budget.

Each setting is a real ``swift rlhf --rlhf_type grpo`` run from a CPU demo's cold-start SFT checkpoint, with the
demo's model, puzzles and rewards, the levers it names set over the demo's GRPO stage (every lever a setting
might move is stated in each: the learning rate, dynamic sampling, the weight of the format reward, the batch,
the temperature, the puzzles). A setting that trains on selected puzzles first runs the demo's selection stage
(``python -m swift_plugins select`` with the SFT checkpoint) and pays for it out of its budget. A run is stopped
when its process tree has used ``--minutes`` of the machine (CPU seconds = minutes x 60 x cores, vLLM's start-up
and the selection included), its newest checkpoint is evaluated greedily on the held-out puzzles and paired with
the SFT checkpoint's evaluation of them. ``--seeds`` runs every setting with each seed (the training seed and the
selection's): a gain in one seed is not a result. Beside the package's settings, the field's on the same budget:
``trl``, TRL's own ``GRPOTrainer`` with its defaults (``benchmarks/trl_grpo.py``), and ``swift-example``, the
learning rate, KL weight and rewards of ms-swift's own Countdown example. Run it on an otherwise idle machine: a
thread that spins while another process holds the cores spends the budget without training.

    python benchmarks/bench_grpo_cpu.py --demo-dir output/cpu_demo --minutes 12 --settings before ds select \\
        --seeds 0 1

Prints one table (per setting and seed: steps, CPU-seconds and seconds a step, completions trained on, held-out
accuracy and its paired change against SFT with the 95% interval, the sampled accuracy reward in the first and last
quarter of the steps, the share of trained groups without reward spread, the selection's cost) and writes it, with
every run's figures, to ``<out>/bench_grpo_cpu.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from swift_plugins.core.processes import children_cpu_seconds  # noqa: E402
from swift_plugins.demo.plan import OFFLINE_ENV, DemoPlan, grpo_command, select_command  # noqa: E402
from swift_plugins.demo.run import detect_hardware  # noqa: E402
from swift_plugins.tools.compare import compare  # noqa: E402
from swift_plugins.watch.checkpoints import newest_checkpoint  # noqa: E402
from swift_plugins.watch.log import read_steps, zero_spread_share  # noqa: E402

ACCURACY = ("rewards/CountdownAccuracy/mean", "rewards/countdown_accuracy_reward/mean")  # ms-swift's, TRL's name
DYNAMIC = ("--dynamic_sample", "true", "--max_resample_times", "6")
STATIC = ("--dynamic_sample", "false")
FORMAT_OFF = ("--reward_weights", "1", "0")  # the format reward logged, not trained on: SFT taught it
FORMAT_ON = ("--reward_weights", "1", "1")


@dataclass(frozen=True)
class Setting:
    """What a setting changes: its GRPO flags over the demo's, and the answers a candidate puzzle gets first."""

    changes: str
    flags: tuple[str, ...]
    select_samples: int = 0  # 0: every training puzzle
    trainer: str = "swift"  # or "trl": TRL's GRPOTrainer (benchmarks/trl_grpo.py) on the selection's candidates


def _setting(changes: str, lr: str, *flags: str, select: int = 0) -> Setting:
    return Setting(changes, ("--learning_rate", lr, "--per_device_train_batch_size", "32", "--temperature", "1.0",
                             *flags), select)  # fmt: skip


SETTINGS: dict[str, Setting] = {
    "before": _setting("the demo before: every puzzle, lr 5e-6, both rewards", "5e-6", *STATIC, *FORMAT_ON),
    "ds": _setting("dynamic sampling on the accuracy reward, lr 5e-6", "5e-6", *DYNAMIC, *FORMAT_OFF),
    "ds-lr1e-5": _setting("dynamic sampling, lr 1e-5", "1e-5", *DYNAMIC, *FORMAT_OFF),
    "ds-lr2e-5": _setting("dynamic sampling, lr 2e-5", "2e-5", *DYNAMIC, *FORMAT_OFF),
    "ds-lr3e-5": _setting("dynamic sampling, lr 3e-5", "3e-5", *DYNAMIC, *FORMAT_OFF),
    "lr2e-5": _setting("every puzzle, lr 2e-5, no dynamic sampling", "2e-5", *STATIC, *FORMAT_OFF),
    "ds-lr2e-5-b16": _setting("dynamic sampling, lr 2e-5, 16 completions a step", "2e-5", *DYNAMIC, *FORMAT_OFF,
                              "--per_device_train_batch_size", "16"),
    "ds-lr2e-5-t07": _setting("dynamic sampling, lr 2e-5, temperature 0.7", "2e-5", *DYNAMIC, *FORMAT_OFF,
                              "--temperature", "0.7"),
    "select": _setting("selected puzzles (8 answers each), lr 5e-6", "5e-6", *STATIC, *FORMAT_OFF, select=8),
    "select-ds": _setting("selected puzzles and dynamic sampling, lr 5e-6", "5e-6", *DYNAMIC, *FORMAT_OFF, select=8),
    "select-ds-lr2e-5": _setting("selected puzzles and dynamic sampling, lr 2e-5", "2e-5", *DYNAMIC, *FORMAT_OFF,
                                 select=8),
    # ms-swift's own Countdown example (its GRPO best-practice doc): lr 5e-7, KL weight 0.001, both rewards trained
    # on, every puzzle; its 1% warm-up and cosine over a 2,000-step run are left out (flat over a dozen steps)
    "swift-example": _setting("ms-swift's Countdown example: every puzzle, lr 5e-7, beta 0.001, both rewards",
                              "5e-7", "--beta", "0.001", *STATIC, *FORMAT_ON),
    "trl": Setting("TRL's GRPOTrainer, its defaults (lr 1e-6, linear decay, DAPO loss, beta 0, both rewards), "
                   "transformers generation, the selection's 160 candidate puzzles", (), trainer="trl"),
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


def _quarter_means(steps: list[dict], key: str) -> tuple[float, float]:
    quarter = max(1, len(steps) // 4)
    first, last = steps[:quarter], steps[-quarter:]
    return (round(sum(r[key] for r in first) / len(first), 3), round(sum(r[key] for r in last) / len(last), 3))


def _select(plan: DemoPlan, folder: Path) -> float:
    """Run the demo's selection into ``folder`` (once: a later invocation reuses it); its CPU seconds."""
    report = plan.selected.with_name(f"{plan.selected.name}.selection.json")
    if not report.is_file():
        command = select_command(plan)
        before = children_cpu_seconds()
        with (folder / "select.log").open("w") as log:
            subprocess.run(command.argv, env=command.environment(os.environ), stdout=log, stderr=subprocess.STDOUT,
                           check=True)  # fmt: skip
        (folder / "select_cpu.json").write_text(json.dumps({"cpu": children_cpu_seconds() - before}))
    return json.loads((folder / "select_cpu.json").read_text())["cpu"]


def run_setting(name: str, seed: int, plan: DemoPlan, out: Path, budget: float, args: argparse.Namespace) -> dict:
    """Train ``name`` with ``seed`` until it has used ``budget`` CPU seconds, evaluate its newest checkpoint, pair it
    with SFT."""
    setting, folder = SETTINGS[name], out / f"{name}-seed{seed}"
    folder.mkdir(parents=True, exist_ok=True)
    plan = replace(plan, seed=seed, select_samples=setting.select_samples)
    if setting.select_samples:  # the selected puzzles go to the setting's own folder
        plan = replace(plan, output_dir=folder)
        (folder / "sft").mkdir(exist_ok=True)
        if not plan.sft_checkpoint.exists():
            plan.sft_checkpoint.symlink_to(args.demo_dir.resolve() / "sft" / plan.sft_checkpoint.name)
        (folder / "data").mkdir(exist_ok=True)
        for name_ in ("puzzles.jsonl", "puzzles.test.jsonl"):
            if not (folder / "data" / name_).exists():
                (folder / "data" / name_).symlink_to(args.demo_dir.resolve() / "data" / name_)
    selection_cpu = _select(plan, folder) if setting.select_samples else 0.0
    if not (folder / "measured.json").is_file():  # else a finished run of an earlier invocation: evaluate again
        argv, env = _training(setting, plan, folder)
        started, cpu = time.monotonic(), selection_cpu
        with (folder / "grpo.log").open("w") as log:
            process = subprocess.Popen(argv, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
            while process.poll() is None and cpu < budget:
                time.sleep(1)
                cpu = max(cpu, selection_cpu + _tree_cpu_seconds(process.pid))
            if process.poll() is None:
                os.killpg(process.pid, 9)
            process.wait()
        if newest_checkpoint(folder / "grpo") is None:
            log = folder / "grpo" / "logging.jsonl"
            steps = len(read_steps(log)) if log.is_file() else 0
            return {"setting": name, "seed": seed, "failed": f"no checkpoint within the budget: {steps} steps after "
                    f"{selection_cpu:.0f} CPU-s of selection (exit {process.returncode})"}  # fmt: skip
        (folder / "measured.json").write_text(json.dumps({"seconds": time.monotonic() - started, "cpu": cpu}))
    return _finish(name, seed, plan, folder, selection_cpu, args)


def _training(setting: Setting, plan: DemoPlan, folder: Path) -> tuple[list[str], dict[str, str]]:
    """The command line and environment of a setting's GRPO run into ``folder / "grpo"``."""
    if setting.trainer == "trl":  # the candidates the package's selection answers, and its completions a step
        candidates = folder / "candidates.jsonl"
        lines = plan.rows.read_text().splitlines(keepends=True)
        candidates.write_text("".join(lines[: plan.select_candidates or len(lines)]))
        argv = [sys.executable, str(REPO / "benchmarks" / "trl_grpo.py"), str(plan.sft_checkpoint), str(candidates),
                str(folder / "grpo"), "--seed", str(plan.seed), "--completions", str(plan.completions_per_step()),
                "--max-completion-length", str(plan.task.completion_tokens),
                *(["--bf16"] if plan.bf16 else [])]  # fmt: skip
        return argv, {**os.environ, **dict(OFFLINE_ENV)}
    extra = [*setting.flags, "--max_steps", "1000", "--save_steps", "4", "--save_total_limit", "2"]
    command = grpo_command(plan, output_dir=folder / "grpo", extra=extra)
    return list(command.argv), command.environment(os.environ)


def _finish(name: str, seed: int, plan: DemoPlan, folder: Path, selection_cpu: float, args: argparse.Namespace) -> dict:
    """Evaluate the newest checkpoint of a run on the held-out puzzles and pair it with SFT's evaluation."""
    measured = json.loads((folder / "measured.json").read_text())
    checkpoint, ran = newest_checkpoint(folder / "grpo"), read_steps(folder / "grpo" / "logging.jsonl")
    accuracy = next((key for key in ACCURACY if any(key in step for step in ran)), ACCURACY[0])
    ran = [step for step in ran if accuracy in step]
    steps = ran[: int(checkpoint.name.rsplit("-", 1)[1])]  # the evaluated checkpoint's
    evaluation = folder / "eval"
    evaluate = plan.evaluate_command(checkpoint, evaluation)
    argv = list(evaluate.argv)
    argv[argv.index("--data") + 1] = str(args.held_out or plan.held_out)  # the demo's, or the one asked for
    evaluate = replace(evaluate, argv=tuple(argv))
    if not (evaluation / "score.json").is_file():
        subprocess.run(evaluate.argv, env=evaluate.environment(os.environ), check=True, stdout=subprocess.DEVNULL)
    table = compare({"sft": args.sft_eval or args.demo_dir / "eval" / "sft", name: evaluation})
    stage, change = table["stages"][name], table["changes"][f"{name} - sft"]["accuracy"]
    training_cpu = measured["cpu"] - selection_cpu
    per_step = max(len(ran), 1)
    completions = int(plan.completions_per_step(SETTINGS[name].flags))  # TRL's: the demo's, held equal
    alike = zero_spread_share(steps)
    return {
        "setting": name,
        "seed": seed,
        "changes": SETTINGS[name].changes,
        "steps": len(steps),
        "seconds": round(measured["seconds"]),
        "cpu_seconds": round(measured["cpu"]),
        "selection_cpu_seconds": round(selection_cpu),
        "cpu_seconds_per_step": round(training_cpu / per_step, 1),
        "seconds_per_step": round(measured["seconds"] / per_step, 1),
        "completions": completions * len(steps),
        "prompts": table["prompts"],
        "accuracy": stage["accuracy"],
        "correct": stage["correct"],
        "change": change["difference"],
        "interval": change["ci95"],
        "reward_first_last_quarter": _quarter_means(steps, accuracy),
        "zero_spread_groups": alike[0] if alike else None,
    }


def format_table(results: list[dict]) -> str:
    lines = [
        "| setting | seed | steps | CPU-s a step (wall s) | selection CPU-s | completions | held-out accuracy "
        "| change vs SFT [95%] | accuracy reward, first -> last quarter | groups without spread |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        if "failed" in r:
            lines.append(f"| {r['setting']} | {r['seed']} | {r['failed']} |")
            continue
        low, high = r["interval"]
        lines.append(
            f"| `{r['setting']}`: {r['changes']} | {r['seed']} | {r['steps']} | {r['cpu_seconds_per_step']} "
            f"({r['seconds_per_step']}) | {r['selection_cpu_seconds']} | {r['completions']} "
            f"| {r['accuracy']:.1%} ({r['correct']}/{r['prompts']}) "
            f"| {r['change'] * 100:+.1f} [{low * 100:+.1f}, {high * 100:+.1f}] "
            f"| {r['reward_first_last_quarter'][0]:.3f} -> {r['reward_first_last_quarter'][1]:.3f} "
            f"| {r['zero_spread_groups']:.0%} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--demo-dir", type=Path, required=True, help="a finished CPU demo's folder (SFT and its eval)")
    parser.add_argument("--out", type=Path, default=REPO / "output" / "bench_grpo_cpu")
    parser.add_argument("--minutes", type=float, default=12, help="each run's budget, in minutes of all cores")
    parser.add_argument("--settings", nargs="+", choices=list(SETTINGS), default=list(SETTINGS))
    parser.add_argument("--seeds", nargs="+", type=int, default=[0], help="each setting runs once with each")
    parser.add_argument("--held-out", type=Path, help="held-out puzzles (default: the demo's)")
    parser.add_argument("--sft-eval", type=Path, help="the SFT checkpoint's evaluation of them (default: the demo's)")
    args = parser.parse_args(argv)
    if (args.held_out is None) != (args.sft_eval is None):
        parser.error("--held-out and --sft-eval go together: the SFT checkpoint's evaluation of those puzzles")
    plan = DemoPlan.from_folder(args.demo_dir, cpu_capability=detect_hardware()[3])  # float32 GRPO without AVX-512
    budget = args.minutes * 60 * (os.cpu_count() or 1)
    # the venv's own scripts (swift), as `make demo` puts them first, when run as .venv/bin/python unactivated
    os.environ["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    results = []
    for name in args.settings:
        for seed in args.seeds:
            results.append(run_setting(name, seed, plan, args.out, budget, args))
            print(format_table(results[-1:]).splitlines()[-1], file=sys.stderr, flush=True)
            summary = {"minutes": args.minutes, "bf16": plan.bf16, "results": results, "table": format_table(results)}
            (args.out / "bench_grpo_cpu.json").write_text(json.dumps(summary, indent=2) + "\n")
    print(format_table(results))


if __name__ == "__main__":
    main()
