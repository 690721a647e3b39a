"""The hack search on every served gym dataset, through the reward; the gold answers; the time bound under load.

    python benchmarks/bench_gym_hacks.py search [--size 100] [--seed 1000] [--names coin_flip ...] [--golds 500]
    python benchmarks/bench_gym_hacks.py load [--busy 0 2 4 8] [--calls 200] [--name coin_flip]
    python benchmarks/bench_gym_hacks.py rows OUT.jsonl.gz [--size 50] [--seed 0] [--names ...]

``search``: for each served dataset, ``--size`` generated rows (seeds from ``--seed``: other items than the tests'
fixture), and :func:`swift_plugins.gym.hacks.search` on them twice: with reasoning-gym's own scores (its
``score_answer`` in this process, the guard in front, partial credit as it pays it) and with the package's reward
(``gym_accuracy_reward`` on ``<answer>…</answer>`` completions, through the scoring pool, as the trainer calls it).
Then ``--golds`` gold answers of each dataset through the reward: how many score 1.0, and the slowest score. Printed
as markdown: per dataset the probes that break a rule under each scorer (the worst one named), then every finding
of the reward.

``load``: the pool's latency under load. ``--busy`` processes spinning on the CPUs beside it, a pool of 2 workers
(bound 1 s) scores one gold answer of ``--name`` (default coin_flip) a call, ``--calls`` times: the wall time of a
call (median, 99th percentile, worst), the slowest score as the worker timed it, and how many did not score 1.0. A
wall time past the 1 s bound is a call a wall-clock bound would have scored 0; the pool's bound counts the worker's
CPU seconds instead.

``rows``: ``--size`` rows of every served dataset (``--names``: those), seeds from ``--seed``, gzipped JSON lines:
the tests' fixtures (tests/fixtures/gym/).
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import statistics
import subprocess
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from reasoning_gym import create_dataset

from swift_plugins.gym import rewards
from swift_plugins.gym.bounded import ScorePool, request
from swift_plugins.gym.data import entry_of
from swift_plugins.gym.entries import decode
from swift_plugins.gym.generator import dataset_names, generate
from swift_plugins.gym.guard import refusal
from swift_plugins.gym.hacks import Finding, search


def rows_of(name: str, size: int, seed: int) -> list[dict]:
    return generate(name, size=size, seed=seed).train


def generated(names: list[str], size: int, seed: int) -> dict[str, list[dict]]:
    with ProcessPoolExecutor(2) as pool:
        return dict(zip(names, pool.map(rows_of, names, [size] * len(names), [seed] * len(names)), strict=True))


def upstream(answers: list[str], rows: list[dict]) -> list[float]:
    """reasoning-gym's scores, partial credit included; the guard's refusals, errors and non-finite scores are 0."""
    name = rows[0]["gym_dataset"]
    dataset = create_dataset(name, **decode(rows[0]["gym_config"]))
    scores = []
    for answer, row in zip(answers, rows, strict=True):
        try:
            value = 0.0 if refusal(name, answer) else float(dataset.score_answer(answer, entry_of(
                row["question"], row["answer"], row["metadata"])))  # fmt: skip
        except Exception:
            value = 0.0
        scores.append(value if math.isfinite(value) else 0.0)
    return scores


def reward(answers: list[str], rows: list[dict]) -> list[float]:
    """The trainer's reward on ``<answer>`` completions, through the scoring pool."""
    columns = {key: [row[key] for row in rows] for key in rows[0]}
    return rewards.gym_accuracy_reward([f"<answer>{answer}</answer>" for answer in answers], **columns)


def upstream_search(rows: list[dict]) -> list[Finding]:
    return search(rows, upstream)


def summary(findings: list[Finding]) -> str:
    if not findings:
        return "none"
    worst = max(findings, key=lambda finding: finding.earned - finding.allowed)
    return f"{len(findings)}: {worst.probe} earns {worst.earned:.2f} (at most {worst.allowed:.2f})"


def run_search(args: argparse.Namespace) -> None:
    names = args.names or dataset_names()
    start = time.monotonic()
    rows = generated(names, args.size, args.seed)
    golds = generated(names, args.golds, args.seed + args.size) if args.golds else {}
    print(f"{len(names)} datasets, {args.size} rows each (seeds {args.seed}..), generated in "
          f"{time.monotonic() - start:.0f} s\n")  # fmt: skip
    with ProcessPoolExecutor(2) as pool:
        before = dict(zip(names, pool.map(upstream_search, [rows[name] for name in names]), strict=True))
    print("| dataset | reasoning-gym's scores: probes breaking a rule | the reward: probes breaking a rule | gold "
          "answers scoring 1.0 (the slowest) |\n|---|---|---|---|")  # fmt: skip
    after = {}
    for name in names:
        after[name] = search(rows[name], reward)
        answers = [row["answer"] for row in golds.get(name, [])]
        gold = rewards.score_completions([f"<answer>{answer}</answer>" for answer in answers], golds[name]) if (
            answers and None not in answers) else []  # fmt: skip
        slowest = max((outcome.seconds for outcome in gold), default=0.0) * 1000
        scored = f"{sum(o.score == 1.0 for o in gold)} of {len(gold)} ({slowest:.0f} ms)" if gold else "no gold answer"
        print(f"| {name} | {summary(before[name])} | {summary(after[name])} | {scored} |", flush=True)
    print("\nEvery finding of the reward:")
    for name in names:
        for finding in after[name]:
            print(f"- {name}: {finding.probe} earns {finding.earned} (at most {finding.allowed})")
    print(f"\n{time.monotonic() - start:.0f} s in all")


def run_load(args: argparse.Namespace) -> None:
    rows = generate(args.name, size=20, seed=0).train
    print(f"{args.name}: one gold answer a call, 2 workers, bound 1 s\n")
    print("| busy processes | calls | median | 99th percentile | worst | slowest score (the worker's time) | not 1.0 "
          "|\n|---|---|---|---|---|---|---|")  # fmt: skip
    for busy in args.busy:
        spinners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(busy)]
        try:
            with ScorePool(workers=2, timeout=1.0) as pool:
                pool.score([request(args.name, row["answer"], row) for row in rows[:4]])  # started, dataset built
                times, scored, wrong = [], [], 0
                for call in range(args.calls):
                    row = rows[call % len(rows)]
                    start = time.perf_counter()
                    [outcome] = pool.score([request(args.name, row["answer"], row)])
                    times.append(time.perf_counter() - start)
                    scored.append(outcome.seconds)
                    wrong += outcome.score != 1.0
        finally:
            for spinner in spinners:
                spinner.kill()
                spinner.wait()
        times.sort()
        p99 = times[min(len(times) - 1, int(len(times) * 0.99))]
        print(f"| {busy} | {len(times)} | {statistics.median(times) * 1000:.2f} ms | {p99 * 1000:.1f} ms | "
              f"{times[-1] * 1000:.1f} ms | {max(scored) * 1000:.1f} ms | {wrong} |", flush=True)  # fmt: skip


def run_rows(args: argparse.Namespace) -> None:
    names = args.names or dataset_names()
    rows = generated(names, args.size, args.seed)
    with gzip.open(args.out, "wt", encoding="utf-8") as file:
        for name in names:
            file.writelines(json.dumps(row) + "\n" for row in rows[name])
    print(f"wrote {sum(map(len, rows.values()))} rows of {len(names)} datasets to {args.out}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    searching = commands.add_parser("search")
    searching.add_argument("--size", type=int, default=100)
    searching.add_argument("--seed", type=int, default=1000)
    searching.add_argument("--golds", type=int, default=500)
    searching.add_argument("--names", nargs="*")
    searching.set_defaults(run=run_search)
    load = commands.add_parser("load")
    load.add_argument("--busy", type=int, nargs="*", default=[0, 2, 4, 8])
    load.add_argument("--calls", type=int, default=200)
    load.add_argument("--name", default="coin_flip", help="the dataset whose gold answers are scored")
    load.set_defaults(run=run_load)
    fixture = commands.add_parser("rows")
    fixture.add_argument("out", type=Path)
    fixture.add_argument("--size", type=int, default=50)
    fixture.add_argument("--seed", type=int, default=0)
    fixture.add_argument("--names", nargs="*")
    fixture.set_defaults(run=run_rows)
    args = parser.parse_args()
    args.run(args)


if __name__ == "__main__":
    main()
