"""GRPO throughput on CPU: completions per second of real ``swift rlhf --rlhf_type grpo`` runs of SmolLM2.

Each setting runs a few GRPO steps from the CPU demo's cold-start SFT checkpoint, with the demo's
model, data, rewards and flags, changing only the flags the setting names. The first generation
cycle (start-up, first generate call) is left out; a cycle is the steps that share one generate
call: ``generation_batch_size / per_device_train_batch_size * num_iterations`` steps. Two clocks:
CPU seconds of the swift process tree, read from /proc each time a step appears in swift's
``logging.jsonl`` (what a run costs, nearly blind to other programs on a shared machine), and wall
seconds from swift's own ``train_speed(s/it)`` (what a user waits, on this machine at this moment).

The baseline (today's demo GRPO: 2 prompts x 4 completions a step) runs first and last; every ratio is
against the mean of those two runs, and both are printed so the machine's drift shows.

    python benchmarks/bench_grpo_cpu.py --demo-dir output/cpu_demo        # reuse a demo run's SFT
    python benchmarks/bench_grpo_cpu.py --out output/bench_grpo           # builds model, data and SFT
    python benchmarks/bench_grpo_cpu.py --settings g64 g64-mb16 --cycles 2

Prints one table: completions generated per CPU-second and per wall second, optimizer updates per
CPU-minute, the mean sampled
accuracy reward, the share of groups with no reward spread, each rate's ratio against the baseline;
the same as JSON in ``<out>/bench_grpo_cpu.json``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
OFFLINE = {
    "HF_HUB_OFFLINE": "1",
    "HF_DATASETS_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "TRL_EXPERIMENTAL_SILENCE": "1",
    "TOKENIZERS_PARALLELISM": "false",
}
# The CPU demo's flags (shell/countdown_demo.sh): model type, float32, full fine-tune, its GRPO recipe.
COMMON = ["--model_type", "llama", "--template", "chatml", "--torch_dtype", "float32"]
TRAIN = [*COMMON, "--fp16", "false", "--check_model", "false", "--tuner_type", "full",
         "--seed", "0", "--gradient_checkpointing", "false", "--dataloader_num_workers", "0",
         "--dataloader_pin_memory", "false", "--logging_steps", "1", "--report_to", "none",
         "--save_only_model", "true"]  # fmt: skip
GRPO = ["--external_plugins", str(REPO / "swift_plugins" / "plugin.py"), "--reward_funcs", "external_countdown",
        "think_answer_format", "--use_vllm", "false", "--gradient_accumulation_steps", "1", "--temperature", "1.0",
        "--beta", "0", "--learning_rate", "5e-6", "--save_strategy", "no"]  # fmt: skip
ACCURACY = "rewards/CountdownAccuracy/mean"


@dataclass(frozen=True)
class Setting:
    """One GRPO configuration: completions per generate call and how they are spent on updates.

    >>> Setting("g64-mb16", 8, 16, generation_batch=64).cycle_steps
    4
    """

    name: str
    num_generations: int
    batch: int  # completions per optimizer step (per_device_train_batch_size)
    generation_batch: int | None = None  # completions per generate call; None: one step's batch
    num_iterations: int = 1
    max_completion_length: int = 76
    bf16: bool = False  # bfloat16 autocast over the float32 weights (AVX-512 BF16 / AMX CPUs)

    @property
    def completions_per_cycle(self) -> int:
        return self.generation_batch or self.batch

    @property
    def cycle_steps(self) -> int:
        return self.completions_per_cycle // self.batch * self.num_iterations

    def flags(self) -> list[str]:
        flags = ["--num_generations", str(self.num_generations), "--per_device_train_batch_size", str(self.batch),
                 "--num_iterations", str(self.num_iterations),
                 "--max_completion_length", str(self.max_completion_length),
                 "--bf16", str(self.bf16).lower()]  # fmt: skip
        if self.bf16:  # transformers allows bf16 without a GPU only when told it trains on the CPU
            flags += ["--use_cpu", "true"]
        if self.generation_batch:
            flags += ["--generation_batch_size", str(self.generation_batch)]
        return flags


BASELINE = Setting("today", 4, 8)
SETTINGS = {
    setting.name: setting
    for setting in [
        BASELINE,
        Setting("g16", 8, 16),
        Setting("g32", 8, 32),
        Setting("g64", 8, 64),
        Setting("g64-mb16", 8, 16, generation_batch=64),  # one generate call, 4 updates of 16
        Setting("g64-iter2", 8, 64, num_iterations=2),  # each batch of 64 used for 2 updates
        Setting("g64-len64", 8, 64, max_completion_length=64),
        Setting("g16-bf16", 8, 16, bf16=True),
        Setting("g32-bf16", 8, 32, bf16=True),
        Setting("g64-bf16", 8, 64, bf16=True),
    ]
}


@dataclass
class Measurement:
    setting: str
    completions_per_cpu_second: float
    completions_per_second: float
    updates_per_cpu_minute: float
    measured_cpu_seconds: float
    measured_seconds: float
    measured_completions: int
    accuracy_reward: float
    zero_spread_groups: float
    mean_length: float
    peak_resident_gib: float = 0.0


def _run(command: list[str], log: Path) -> None:
    with log.open("w") as sink:
        status = subprocess.run(command, stdout=sink, stderr=subprocess.STDOUT, env={**os.environ, **OFFLINE})
    if status.returncode != 0:
        sys.exit(f"bench_grpo_cpu: {command[0]} {command[1]} failed with status {status.returncode}: see {log}")


def _swift() -> str:
    return str(Path(sys.executable).with_name("swift"))


def _newest_run(output_dir: Path) -> Path:
    runs = sorted(output_dir.glob("v*-*"), key=lambda run: run.stat().st_mtime)
    if not runs:
        sys.exit(f"bench_grpo_cpu: no swift run folder under {output_dir}")
    return runs[-1]


def build_sft(out: Path) -> tuple[Path, Path]:
    """The demo's stages 1, 2 and 4 (model, puzzles, cold-start SFT) into ``out``; (checkpoint, puzzles)."""
    countdown = [sys.executable, "-m", "swift_plugins.countdown"]
    data = out / "data"
    print(f"building the SmolLM2 model, puzzles and SFT checkpoint in {out} (about 7 min)", file=sys.stderr)
    _run([sys.executable, "-m", "swift_plugins", "smol-model", str(out / "model")], out / "model.log")
    _run([*countdown, "generate", "--num", "1500", "--test-size", "200", "--seed", "0", "--count", "3",
          "--numbers", "1-10", "--targets", "1-30", "--out", str(data / "puzzles.jsonl"), "--quiet"],
         out / "data.log")  # fmt: skip
    _run([*countdown, "sft-data", str(data / "puzzles.jsonl"), "--out", str(data / "sft.jsonl")], out / "data.log")
    _run([_swift(), "sft", *TRAIN, "--bf16", "false", "--model", str(out / "model"),
          "--dataset", str(data / "sft.jsonl"), "--split_dataset_ratio", "0", "--max_steps", "36",
          "--per_device_train_batch_size", "8",
          "--gradient_accumulation_steps", "1", "--learning_rate", "1e-4", "--lr_scheduler_type", "cosine",
          "--warmup_ratio", "0.05", "--max_length", "256", "--save_steps", "36", "--output_dir", str(out / "sft")],
         out / "sft.log")  # fmt: skip
    return _newest_run(out / "sft") / "last-checkpoint", data / "puzzles.jsonl"


def steps_to_run(setting: Setting, cycles: int, min_completions: int) -> int:
    """Steps of one warm-up cycle plus ``cycles - 1`` measured ones, more while fewer than
    ``min_completions`` would be measured.

    >>> steps_to_run(BASELINE, 3, 32), steps_to_run(SETTINGS["g64"], 3, 32)
    (5, 3)
    """
    measured = max(cycles - 1, math.ceil(min_completions / setting.completions_per_cycle))
    return (measured + 1) * setting.cycle_steps


def _step_records(log: Path) -> dict[int, dict]:
    if not log.is_file():
        return {}
    records = []
    for line in log.read_text().splitlines():
        try:
            records.append(json.loads(line))
        except ValueError:  # a line being written
            continue
    return {int(r["global_step/max_steps"].split("/")[0]): r for r in records if "train_speed(s/it)" in r}


def _tree_usage(pid: int) -> tuple[float, float]:
    """(user + system CPU seconds, resident GiB) of ``pid`` and its live descendants, from /proc."""
    total, resident, pending = 0.0, 0.0, [pid]
    while pending:
        current = pending.pop()
        try:
            fields = Path(f"/proc/{current}/stat").read_text().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
            resident += int(fields[21]) * os.sysconf("SC_PAGE_SIZE") / 2**30
            for task in Path(f"/proc/{current}/task").iterdir():
                pending += [int(child) for child in (task / "children").read_text().split()]
        except (OSError, IndexError, ValueError):  # the process ended meanwhile
            continue
    return total, resident


def measure(setting: Setting, by_step: dict[int, dict], cpu_at_step: dict[int, float]) -> Measurement:
    """Rates over the steps after the first cycle: CPU from ``cpu_at_step``, wall from ``train_speed(s/it)``."""
    first, last = setting.cycle_steps, max(by_step)
    elapsed = {step: by_step[step]["train_speed(s/it)"] * step for step in (first, last)}
    seconds = elapsed[last] - elapsed[first]
    cpu_seconds = cpu_at_step[last] - cpu_at_step[first]
    completions = (last - first) // setting.cycle_steps * setting.completions_per_cycle
    window = [by_step[step] for step in range(first + 1, last + 1)]

    def mean(key: str) -> float:
        values = [record[key] for record in window if key in record]
        return sum(values) / len(values) if values else float("nan")

    return Measurement(setting.name, completions / cpu_seconds, completions / seconds,
                       (last - first) / cpu_seconds * 60, round(cpu_seconds, 1), round(seconds, 1), completions,
                       mean(ACCURACY), mean("frac_reward_zero_std"), mean("completions/mean_length"))  # fmt: skip


def run_setting(setting: Setting, checkpoint: Path, puzzles: Path, out: Path, steps: int) -> Measurement | str:
    """The setting's measurement, or why its run failed (e.g. killed for memory: the table says so and goes on)."""
    output_dir = out / "runs" / f"{setting.name}-{time.strftime('%H%M%S')}"
    output_dir.mkdir(parents=True)
    started = time.monotonic()
    command = [_swift(), "rlhf", "--rlhf_type", "grpo", *TRAIN, "--model", str(checkpoint), "--dataset",
               str(puzzles), *GRPO, *setting.flags(), "--max_steps", str(steps),
               "--output_dir", str(output_dir)]  # fmt: skip
    cpu_at_step: dict[int, float] = {}
    peak = 0.0
    with (output_dir / "grpo.log").open("w") as sink:
        process = subprocess.Popen(command, stdout=sink, stderr=subprocess.STDOUT, env={**os.environ, **OFFLINE})
        while process.poll() is None:
            time.sleep(0.5)
            runs = list(output_dir.glob("v*-*"))
            logged = _step_records(runs[0] / "logging.jsonl") if runs else {}
            cpu, resident = _tree_usage(process.pid)
            peak = max(peak, resident)
            for step in set(logged) - set(cpu_at_step):
                cpu_at_step[step] = cpu
    if process.returncode != 0:
        killed = " (killed: out of memory?)" if process.returncode in (137, 247, -9) else ""
        failure = f"failed with status {process.returncode}{killed} at {peak:.1f} GiB; see {output_dir / 'grpo.log'}"
        print(f"  {setting.name}: {failure}", file=sys.stderr)
        return failure
    by_step = _step_records(_newest_run(output_dir) / "logging.jsonl")
    if set(by_step) - set(cpu_at_step) or len(by_step) < steps:
        sys.exit(f"bench_grpo_cpu: steps logged after the process ended in {output_dir}: cannot time them")
    result = measure(setting, by_step, cpu_at_step)
    result.peak_resident_gib = round(peak, 1)
    print(f"  {setting.name}: {steps} steps in {time.monotonic() - started:.0f} s (start-up included), "
          f"{result.completions_per_cpu_second:.3f} completions per CPU-second", file=sys.stderr)  # fmt: skip
    return result


def report(baselines: list[Measurement], results: dict[str, Measurement | str]) -> str:
    def base(key: str) -> float:
        return sum(getattr(m, key) for m in baselines) / len(baselines)

    cpu_rate, wall_rate = base("completions_per_cpu_second"), base("completions_per_second")
    updates = base("updates_per_cpu_minute")
    lines = [
        "| setting | completions per CPU-s | ratio | completions per wall s | ratio | updates per CPU-min | ratio "
        "| accuracy reward | zero-spread groups | mean length | peak GiB |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for m in [*baselines, *results.values()]:
        if isinstance(m, str):
            continue
        lines.append(
            f"| {m.setting} | {m.completions_per_cpu_second:.3f} | {m.completions_per_cpu_second / cpu_rate:.2f}x "
            f"| {m.completions_per_second:.3f} | {m.completions_per_second / wall_rate:.2f}x "
            f"| {m.updates_per_cpu_minute:.2f} | {m.updates_per_cpu_minute / updates:.2f}x | {m.accuracy_reward:.3f} "
            f"| {m.zero_spread_groups:.2f} | {m.mean_length:.1f} | {m.peak_resident_gib:.1f} |"
        )
    lines += [f"| {name} | {failure} |" for name, failure in results.items() if isinstance(failure, str)]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--demo-dir", type=Path, help="a CPU demo's output folder: reuse its SFT checkpoint and data")
    parser.add_argument("--out", type=Path, default=REPO / "output" / "bench_grpo_cpu", help="runs and results")
    candidates = [name for name in SETTINGS if name != BASELINE.name]
    parser.add_argument("--settings", nargs="+", choices=candidates, default=candidates, help="besides the baseline")
    parser.add_argument("--cycles", type=int, default=3, help="generation cycles a run (the first is not measured)")
    parser.add_argument("--min-completions", type=int, default=32, help="measure at least this many completions")
    args = parser.parse_args(argv)
    if args.cycles < 2:
        parser.error(f"--cycles {args.cycles}: at least 2 (the first one is start-up)")
    args.out.mkdir(parents=True, exist_ok=True)
    if args.demo_dir:
        checkpoint = _newest_run(args.demo_dir / "sft") / "last-checkpoint"
        puzzles = args.demo_dir / "data" / "puzzles.jsonl"
        if not (checkpoint.is_dir() and puzzles.is_file()):
            sys.exit(f"bench_grpo_cpu: --demo-dir {args.demo_dir}: no finished SFT checkpoint or data/puzzles.jsonl")
    else:
        checkpoint, puzzles = build_sft(args.out)

    def run(setting: Setting) -> Measurement | str:
        return run_setting(setting, checkpoint, puzzles, args.out,
                           steps_to_run(setting, args.cycles, args.min_completions))  # fmt: skip

    def run_baseline() -> Measurement:
        measurement = run(BASELINE)
        if isinstance(measurement, str):
            sys.exit(f"bench_grpo_cpu: the baseline {measurement}")
        return measurement

    baselines = [run_baseline()]
    results = {name: run(SETTINGS[name]) for name in args.settings}
    baselines.append(run_baseline())
    table = report(baselines, results)
    print(table)
    settings = {name: asdict(SETTINGS[name]) for name in [BASELINE.name, *args.settings]}
    summary = {"settings": settings, "baselines": [asdict(m) for m in baselines],
               "results": {name: m if isinstance(m, str) else asdict(m) for name, m in results.items()},
               "table": table}  # fmt: skip
    (args.out / "bench_grpo_cpu.json").write_text(json.dumps(summary, indent=2) + "\n")


if __name__ == "__main__":
    main()
