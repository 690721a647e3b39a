"""False alarms and detections of the watch's ``reward-collapse`` rule, by simulation.

A healthy run whose reward has no trend must never get a fatal verdict: each simulated run logs, every step, a
``reward`` and a ``rewards/Accuracy/mean`` drawn independently around a fixed mean, for the recipes' lengths
(500 steps: GSM8K; 3,093: the 3-GPU Countdown recipe; 6,187: the 1-GPU one) and two kinds of noise:

- ``gauss M S``: a normal of mean M and spread S, clipped to [0, 1] (the spread of a small batch's accuracy);
- ``binomial P N``: the accuracy of N completions each right with chance P (N = 128: the 3-GPU recipe's step,
  64: the 1-GPU one, 16 and 8: small runs started by hand).

Then real falls, to see what the rule still catches: the same reward dropping at the middle of the run to a
lower level (``fall``), with the step of the fatal verdict after the fall.

    python benchmarks/bench_watch_collapse.py [--runs 100] [--seed 0] [--noise-drop Z]

``--noise-drop`` sets ``Thresholds.collapse_noise_drop`` (1e-9: the rule before the noise margin).

Prints, per case, the runs with a fatal reward-collapse verdict and with any warning, out of ``--runs``.
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable

from swift_plugins.watch import Thresholds, Watch

LENGTHS = {"gsm8k": 500, "3gpu": 3093, "1gpu": 6187}
Draw = Callable[[random.Random], float]


def gauss(mean: float, spread: float) -> Draw:
    return lambda rng: min(1.0, max(0.0, rng.gauss(mean, spread)))


def binomial(chance: float, completions: int) -> Draw:
    return lambda rng: sum(rng.random() < chance for _ in range(completions)) / completions


def run(draws: list[Draw], length: int, rng: random.Random, thresholds: Thresholds) -> Watch:
    """One simulated run: ``draws[0]`` for the first half of its steps, ``draws[-1]`` for the rest."""
    watch = Watch(thresholds)
    for step in range(1, length + 1):
        value = draws[0 if step <= length // 2 else -1](rng)
        watch.add({"step": step, "reward": value, "rewards/Accuracy/mean": value})
    return watch


def measure(name: str, draws: list[Draw], length: int, runs: int, seed: int, thresholds: Thresholds) -> None:
    rng = random.Random(seed)
    fatal, warned, delays = 0, 0, []
    for _ in range(runs):
        watch = run(draws, length, rng, thresholds)
        verdicts = [verdict for verdict in watch.verdicts if verdict.rule == "reward-collapse"]
        warned += any(not verdict.fatal for verdict in verdicts)
        if any(verdict.fatal for verdict in verdicts):
            fatal += 1
            delays.append(next(verdict.step for verdict in verdicts if verdict.fatal) - length // 2)
    delay = f", fatal {min(delays)}-{max(delays)} steps after the fall" if delays and len(draws) > 1 else ""
    print(f"{name:<34} {length:>5} steps: fatal {fatal:>3}/{runs}, warned {warned:>3}/{runs}{delay}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--noise-drop", type=float, default=Thresholds().collapse_noise_drop)
    args = parser.parse_args()
    thresholds = Thresholds(collapse_noise_drop=args.noise_drop)
    start = time.perf_counter()
    print("no trend (a fatal verdict is a false alarm):")
    for length in LENGTHS.values():
        for mean, spread in [(0.5, 0.25), (0.6, 0.20), (0.5, 0.15), (0.1, 0.1), (0.5, 0.35)]:
            measure(f"gauss {mean} {spread}", [gauss(mean, spread)], length, args.runs, args.seed, thresholds)
        for chance, completions in [(0.5, 128), (0.5, 64), (0.5, 16), (0.5, 8)]:
            draw = binomial(chance, completions)
            measure(f"binomial {chance} {completions}", [draw], length, args.runs, args.seed, thresholds)
    print("a fall at the middle of the run (a fatal verdict is a detection):")
    for before, after, spread in [(0.5, 0.1, 0.25), (0.5, 0.2, 0.15), (0.6, 0.3, 0.1), (1.0, 0.2, 0.05)]:
        draws = [gauss(before, spread), gauss(after, spread)]
        measure(f"gauss {before} -> {after} spread {spread}", draws, LENGTHS["3gpu"], args.runs, args.seed, thresholds)
    print(f"{time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
