"""GRPO's loss types, the vLLM/trainer mismatch correction and the field's peers, measured on held-out rows.

For each task and seed the script runs the demo as it ships (``python -m swift_plugins.demo``: the model, the data,
the cold-start SFT, the selection and its GRPO stage), evaluating every stage on one held-out split (``--split``:
``dev`` while settings are chosen, ``test`` to report the chosen ones). Each other setting then trains the demo's
GRPO stage again from that run's SFT checkpoint on that run's selected rows, for the same steps, with its flags
over the stage's own, and its final checkpoint is evaluated greedily on the same rows. Each result is paired by
item with the run's SFT checkpoint (the setting's gain) and with the demo's own GRPO stage (the setting against
today's), both with 95% intervals; the summary gives each setting's mean and spread across seeds. The peers train
on the same selected rows: ``trl-*`` is TRL's own ``GRPOTrainer`` (``benchmarks/trl_grpo.py``, Countdown) at a
learning rate of the grid, ``swift-example`` ms-swift's own Countdown example's learning rate, KL weight and rewards.

    python benchmarks/bench_grpo_losses.py --out output/losses-dev --split dev --seeds 0 1 \\
        --tasks countdown chain_sum word_sequence_reversal --settings grpo-is dapo dr_grpo gspo cispo

Writes ``<out>/<task>/seed<S>/`` (the demo's folder, one folder a setting) and ``<out>/results.json`` with
``<out>/results.md`` after every run; a finished run is not run again. While ``<out>/PAUSE`` exists no new run
starts (the machine's memory holds one run at a time). Run it on an otherwise idle machine from a fixed commit.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from swift_plugins.core.processes import children_cpu_seconds  # noqa: E402
from swift_plugins.demo.plan import OFFLINE_ENV, DemoPlan, grpo_command  # noqa: E402
from swift_plugins.demo.run import STAGES_FILE, detect_hardware  # noqa: E402
from swift_plugins.tools.compare import compare  # noqa: E402
from swift_plugins.watch.log import read_steps, zero_spread_share  # noqa: E402

TASKS = {  # the README's settings of each task's demo
    "countdown": {},
    "chain_sum": {"TASK": "gym:chain_sum", "GYM_SETTINGS": "max_terms=2 max_digits=2"},
    "word_sequence_reversal": {"TASK": "gym:word_sequence_reversal", "GYM_SETTINGS": "min_words=5 max_words=10"},
}
BASELINE = {"LOSS_TYPE": "grpo", "IMPORTANCE_SAMPLING_LEVEL": "token", "ROLLOUT_CORRECTION": "off"}  # plain GRPO
CORRECTED = {"ROLLOUT_CORRECTION": "token_truncate", "ROLLOUT_CORRECTION_THRESHOLD": "2"}
LOGGED = ("rollout_correction/", "clip_ratio", "cispo_clip_ratio")  # the logged figures a summary averages


@dataclass(frozen=True)
class Setting:
    """What a setting changes: the demo's settings and flags over its GRPO stage's, or another trainer."""

    changes: str
    env: dict[str, str] = field(default_factory=dict)  # the demo's settings (LOSS_TYPE, ...), over BASELINE
    flags: tuple[str, ...] = ()  # swift rlhf flags, as `make demo ARGS=...` gives them
    trainer: str = "swift"  # or "trl": benchmarks/trl_grpo.py
    learning_rate: str = ""  # TRL's


SETTINGS = {
    "grpo": Setting("the demo's GRPO stage before: loss grpo, no correction"),
    "grpo-is": Setting("loss grpo, vLLM's sampling corrected (token_truncate, 2)", CORRECTED),
    "dapo": Setting("DAPO: token-level loss, clip-higher 0.28, corrected", {"LOSS_TYPE": "dapo",
                    "EPSILON_HIGH": "0.28", **CORRECTED}),
    "dr_grpo": Setting("Dr. GRPO: fixed-length normaliser, rewards not scaled, corrected", {"LOSS_TYPE": "dr_grpo",
                       "SCALE_REWARDS": "none", **CORRECTED}),
    "gspo": Setting("GSPO: one importance ratio a completion, corrected", {"IMPORTANCE_SAMPLING_LEVEL": "sequence",
                    **CORRECTED}),
    "cispo": Setting("CISPO: clipped IS weight (at most 5), token-level, corrected", {"LOSS_TYPE": "cispo",
                     "EPSILON_HIGH": "5", **CORRECTED}),
    "swift-example": Setting("ms-swift's Countdown example: lr 5e-7, beta 0.001, both rewards, no dynamic sampling",
                             flags=("--learning_rate", "5e-7", "--beta", "0.001", "--reward_weights", "1", "1",
                                    "--dynamic_sample", "false")),
    **{f"trl-lr{rate}": Setting(f"TRL's GRPOTrainer, its defaults (DAPO loss, beta 0, vLLM-free) at lr {rate}",
                                trainer="trl", learning_rate=rate) for rate in ("1e-6", "5e-6", "2e-5")},
}  # fmt: skip
LOSSES = ("grpo", "grpo-is", "dapo", "dr_grpo", "gspo", "cispo")
SETTINGS.update({f"{name}-48": Setting(f"{SETTINGS[name].changes}; 48 steps", {**SETTINGS[name].env,
                 "GRPO_STEPS": "48"}) for name in LOSSES})  # the longer command: `GRPO_STEPS=48 make demo`


def demo_env(task: str, seed: int, split: str, folder: Path, setting: Setting = SETTINGS["grpo"]) -> dict[str, str]:
    return {**os.environ, **TASKS[task], "SEED": str(seed), "EVAL_SPLIT": split, "OUTPUT_DIR": str(folder),
            **BASELINE, **setting.env}  # fmt: skip


def plan_for(env: dict[str, str], flags: tuple[str, ...] = ()) -> DemoPlan:
    cuda, vllm, _, cpu = detect_hardware()
    return DemoPlan.for_hardware(env, REPO, cuda_device=cuda, vllm_version=vllm, cpu_capability=cpu, extra=flags)


def run_demo(task: str, seed: int, split: str, folder: Path) -> None:
    """The demo of ``task`` with ``seed`` into ``folder``, once."""
    if not (folder / "comparison.json").is_file():
        with (folder.parent / f"{folder.name}.log").open("w") as log:
            subprocess.run([sys.executable, "-m", "swift_plugins.demo"], env=demo_env(task, seed, split, folder),
                           cwd=REPO, stdout=log, stderr=subprocess.STDOUT, check=True)  # fmt: skip


def train(name: str, plan: DemoPlan, folder: Path) -> tuple[float, float]:
    """Train setting ``name`` as ``plan`` (the demo with the setting's settings and flags) plans its GRPO stage, into
    ``folder / "grpo"``: wall and CPU seconds."""
    setting = SETTINGS[name]
    if setting.trainer == "trl":
        argv = [sys.executable, str(REPO / "benchmarks" / "trl_grpo.py"), str(plan.sft_checkpoint),
                str(plan.selected), str(folder / "grpo"), "--seed", str(plan.seed), "--completions",
                str(plan.completions_per_step()), "--max-completion-length", str(plan.task.completion_tokens),
                "--max-steps", str(plan.grpo_steps), "--save-steps", str(plan.grpo_steps),
                "--learning-rate", setting.learning_rate, *(["--bf16"] if plan.bf16 else [])]  # fmt: skip
        env = {**os.environ, **dict(OFFLINE_ENV)}
    else:
        command = grpo_command(plan, output_dir=folder / "grpo")
        argv, env = list(command.argv), command.environment(os.environ)
    started, before = time.monotonic(), children_cpu_seconds()
    with (folder / "grpo.log").open("w") as log:
        subprocess.run(argv, env=env, stdout=log, stderr=subprocess.STDOUT, check=True)
    return time.monotonic() - started, children_cpu_seconds() - before


def evaluate(plan: DemoPlan, checkpoint: Path, out: Path) -> None:
    if not (out / "score.json").is_file():
        command = plan.evaluate_command(checkpoint, out)
        subprocess.run(command.argv, env=command.environment(os.environ), check=True, stdout=subprocess.DEVNULL)


def measure(task: str, seed: int, name: str, split: str, run: Path) -> dict:
    """One setting of one run: train (unless the demo's own), evaluate, pair with SFT and with the demo's GRPO."""
    demo_eval = run / "demo" / "eval"
    demo = plan_for(demo_env(task, seed, split, run / "demo"))
    final = f"grpo-{demo.grpo_steps}"
    if name == "grpo":
        folder, evaluation, plan = run / "demo", demo_eval / final, demo
        stage = next(s for s in json.loads((folder / STAGES_FILE).read_text()) if s["stage"].startswith("swift rlhf"))
        seconds, cpu = stage["seconds"], stage["cpu_seconds"]
    else:
        folder, evaluation = run / name, run / name / "eval"
        plan = plan_for(demo_env(task, seed, split, run / "demo", SETTINGS[name]), SETTINGS[name].flags)
        folder.mkdir(parents=True, exist_ok=True)
        if not (folder / "measured.json").is_file():
            seconds, cpu = train(name, plan, folder)
            (folder / "measured.json").write_text(json.dumps({"seconds": seconds, "cpu": cpu}))
        seconds, cpu = (json.loads((folder / "measured.json").read_text())[key] for key in ("seconds", "cpu"))
        evaluate(plan, folder / "grpo" / f"checkpoint-{plan.grpo_steps}", evaluation)
    table = compare({"sft": demo_eval / "sft", "grpo": demo_eval / final, name: evaluation})
    gain = table["changes"]["grpo - sft"] if name == "grpo" else compare({"sft": demo_eval / "sft", name: evaluation})[
        "changes"][f"{name} - sft"]  # fmt: skip
    steps = read_steps(folder / "grpo" / "logging.jsonl")
    accuracy = next((key for key in steps[-1] if key.startswith("rewards/") and "ccuracy" in key), None)
    logged = {key: round(statistics.fmean(step[key] for step in steps if key in step), 4)
              for key in sorted({key for step in steps for key in step if key.startswith(LOGGED)})}  # fmt: skip
    alike = zero_spread_share(steps)
    return {
        "task": task, "seed": seed, "setting": name, "changes": SETTINGS[name].changes, "split": split,
        "prompts": table["prompts"], "sft_accuracy": table["stages"]["sft"]["accuracy"],
        "accuracy": table["stages"][name]["accuracy"], "correct": table["stages"][name]["correct"],
        "gain": gain["accuracy"]["difference"], "gain_ci95": gain["accuracy"]["ci95"],
        "vs_grpo": None if name == "grpo" else table["changes"][f"{name} - grpo"]["accuracy"]["difference"],
        "vs_grpo_ci95": None if name == "grpo" else table["changes"][f"{name} - grpo"]["accuracy"]["ci95"],
        "steps": len(steps), "seconds": round(seconds), "cpu_seconds": round(cpu),
        "reward_first_last": [round(statistics.fmean(step[accuracy] for step in part), 3)
                              for part in (steps[:4], steps[-4:])] if accuracy else None,
        "zero_spread_groups": alike[0] if alike else None, "logged": logged,
    }  # fmt: skip


def points(value: float) -> str:
    return f"{value * 100:+.1f}"


def interval(pair: list[float]) -> str:
    return f"[{pair[0] * 100:+.1f}, {pair[1] * 100:+.1f}]"


def summary(results: list[dict]) -> str:
    """The runs, one row each, then each task's settings (mean and spread across seeds), then each setting over
    every task and seed (what the protocol's choice reads)."""
    lines = ["| task | setting | seed | SFT | GRPO | gain vs SFT [95%] | vs the demo's GRPO [95%] | reward first -> "
             "last 4 steps | groups without spread | GRPO stage s (CPU-s) |", "|---" * 10 + "|"]
    for r in results:
        reward = "{} -> {}".format(*r["reward_first_last"]) if r["reward_first_last"] else ""
        versus = f"{points(r['vs_grpo'])} {interval(r['vs_grpo_ci95'])}" if r["vs_grpo"] is not None else ""
        spread = f"{r['zero_spread_groups']:.0%}" if r["zero_spread_groups"] is not None else ""
        lines.append(f"| {r['task']} | `{r['setting']}` | {r['seed']} | {r['sft_accuracy']:.1%} | {r['accuracy']:.1%} "
                     f"({r['correct']}/{r['prompts']}) | {points(r['gain'])} {interval(r['gain_ci95'])} | {versus} "
                     f"| {reward} | {spread} | {r['seconds']} ({r['cpu_seconds']}) |")  # fmt: skip
    lines += ["", "| task | setting | runs | gain vs SFT: mean (sd) | vs the demo's GRPO: mean (sd) |",
              "|---|---|---|---|---|"]
    groups: dict[tuple[str, str], list[dict]] = {}
    for r in results:
        groups.setdefault((r["task"], r["setting"]), []).append(r)
    for (task, name), runs in groups.items():
        gains = [r["gain"] for r in runs]
        versus = [r["vs_grpo"] for r in runs if r["vs_grpo"] is not None]
        spread = f" ({statistics.stdev(gains) * 100:.1f})" if len(gains) > 1 else ""
        against = f"{points(statistics.fmean(versus))}" + (f" ({statistics.stdev(versus) * 100:.1f})"
                                                           if len(versus) > 1 else "") if versus else ""  # fmt: skip
        lines.append(f"| {task} | `{name}` | {len(runs)} | {points(statistics.fmean(gains))}{spread} | {against} |")
    lines += ["", "| setting | runs (tasks x seeds) | gain vs SFT: mean over every run | vs the demo's GRPO: mean |",
              "|---|---|---|---|"]  # fmt: skip
    for name in dict.fromkeys(r["setting"] for r in results):
        runs = [r for r in results if r["setting"] == name]
        versus = [r["vs_grpo"] for r in runs if r["vs_grpo"] is not None]
        against = points(statistics.fmean(versus)) if versus else ""
        lines.append(f"| `{name}` | {len(runs)} | {points(statistics.fmean(r['gain'] for r in runs))} | {against} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--split", choices=("dev", "test"), required=True, help="the held-out split evaluated")
    parser.add_argument("--tasks", nargs="+", choices=list(TASKS), default=list(TASKS))
    parser.add_argument("--seeds", nargs="+", type=int, required=True)
    parser.add_argument("--settings", nargs="+", choices=list(SETTINGS), default=[], help="besides the demo's own")
    args = parser.parse_args(argv)
    # the venv's own scripts (swift), as `make demo` puts them first, when run as .venv/bin/python unactivated
    os.environ["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    results_file = args.out / "results.json"
    results = json.loads(results_file.read_text()) if results_file.is_file() else []
    done = {(r["task"], r["seed"], r["setting"]) for r in results}
    for task in args.tasks:
        for seed in args.seeds:
            for name in ["grpo", *args.settings]:
                if (task, seed, name) in done:
                    continue
                while (args.out / "PAUSE").exists():
                    time.sleep(30)
                run = args.out / task / f"seed{seed}"
                run.mkdir(parents=True, exist_ok=True)
                run_demo(task, seed, args.split, run / "demo")
                results.append(measure(task, seed, name, args.split, run))
                results_file.write_text(json.dumps(results, indent=1) + "\n")
                (args.out / "results.md").write_text(summary(results) + "\n")
                print(summary(results[-1:]).splitlines()[2], flush=True)


if __name__ == "__main__":
    main()
