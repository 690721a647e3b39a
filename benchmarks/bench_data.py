"""Rows/s of the Countdown generator and audit, each against a baseline timed in the same run.

    python benchmarks/bench_data.py [--rows 490364] [--jobs N]

- generate: this package's generator (``--rows`` rows, the hub dataset's size by default, all
  cores) against reasoning-gym's Countdown generator (``pip install reasoning-gym``; the
  ``bench`` extra) on the same ranges, timed on ``--baseline-rows`` rows;
- audit: this package's vectorised exact solver over the generated rows against a plain
  recursive exact solver (Fractions, every split and operator) on ``--baseline-rows`` of them.
"""

from __future__ import annotations

import argparse
import itertools
import os
import time
from fractions import Fraction

from swift_plugins.countdown.audit import audit
from swift_plugins.countdown.generator import CountdownConfig, generate


def reachable(numbers: tuple[Fraction, ...]) -> set[Fraction]:
    """The baseline solver: every value of every expression using each number once."""
    if len(numbers) == 1:
        return set(numbers)
    values = set()
    for size in range(1, len(numbers) // 2 + 1):
        for left in itertools.combinations(range(len(numbers)), size):
            right = [i for i in range(len(numbers)) if i not in left]
            for a in reachable(tuple(numbers[i] for i in left)):
                for b in reachable(tuple(numbers[i] for i in right)):
                    values.update((a + b, a - b, b - a, a * b))
                    if b:
                        values.add(a / b)
                    if a:
                        values.add(b / a)
    return values


def timed(function):
    start = time.perf_counter()
    result = function()
    return result, time.perf_counter() - start


def reasoning_gym_rate(rows: int) -> float | None:
    try:
        import reasoning_gym
    except ImportError:
        return None
    ranges = {"min_numbers": 3, "max_numbers": 4, "min_value": 1, "max_value": 99, "min_target": 1, "max_target": 99}
    dataset = reasoning_gym.create_dataset("countdown", size=rows, seed=0, **ranges)
    _, seconds = timed(lambda: [dataset[i] for i in range(rows)])
    return rows / seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=490_364)
    parser.add_argument("--baseline-rows", type=int, default=1000)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args()

    rows, seconds = timed(lambda: list(generate(CountdownConfig(), args.rows, seed=0, jobs=args.jobs)))
    ours = args.rows / seconds
    print(f"generate {args.rows:,} rows with {args.jobs} processes: {seconds:.1f} s, {ours:,.0f} rows/s")
    baseline = reasoning_gym_rate(args.baseline_rows)
    if baseline is None:
        print("  reasoning-gym not installed (pip install -e '.[bench]'): no generator baseline")
    else:
        print(f"  reasoning-gym countdown, {args.baseline_rows:,} rows: {baseline:,.0f} rows/s "
              f"-> {ours / baseline:,.0f}x")

    nums, targets = [r["nums"] for r in rows], [r["target"] for r in rows]
    report, seconds = timed(lambda: audit(nums, targets, jobs=args.jobs))
    ours = args.rows / seconds
    print(f"audit {args.rows:,} rows with {args.jobs} processes: {seconds:.1f} s, {ours:,.0f} rows/s, "
          f"{report.solvable:,} solvable")
    sample = list(zip(nums, targets, strict=True))[: args.baseline_rows]
    solved, seconds = timed(lambda: sum(Fraction(t) in reachable(tuple(map(Fraction, n))) for n, t in sample))
    assert solved == len(sample), "the baseline disagrees: a generated row is unsolvable"
    baseline = len(sample) / seconds
    print(f"  plain recursive exact solver, {len(sample):,} rows, 1 process: {baseline:,.0f} rows/s "
          f"-> {ours / baseline:,.0f}x")


if __name__ == "__main__":
    main()
