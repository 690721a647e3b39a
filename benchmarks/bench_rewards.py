"""Throughput of ``external_countdown`` against the eval-based reference reward, in one process.

The reference is the CountdownORM of the ms-swift Countdown doc (also TinyZero's): regex, ``eval``
and a float tolerance. It is re-implemented here, from its description, only to be measured.

    python benchmarks/bench_rewards.py [--batches 200] [--seed 0]

Prints completions per CPU-second of both on the same realistic batches of 128 completions (a few hundred
characters of thinking, then one answer: correct, wrong value, wrong numbers or malformed), their
ratio, and the worst time per completion of ``external_countdown`` over an adversarial set.
"""

from __future__ import annotations

import argparse
import random
import re
import subprocess
import sys
import time
from pathlib import Path

from swift_plugins.countdown.generator import CountdownConfig, generate
from swift_plugins.countdown.rewards import countdown_accuracy_reward

BATCH = 128


def reference_reward(completions, target, nums, **kwargs):
    """The eval-based reference (with its builtins typo fixed, so it is at least not unsafe)."""
    rewards = []
    for completion, gt, numbers in zip(completions, target, nums, strict=True):
        try:
            match = re.search(r"<answer>(.*?)<\/answer>", completion)
            if match is None:
                rewards.append(0.0)
                continue
            equation = match.group(1).strip()
            if "=" in equation:
                equation = equation.split("=")[0]
            used_numbers = [int(n) for n in re.findall(r"\d+", equation)]
            if sorted(used_numbers) != sorted(numbers):
                rewards.append(0.0)
                continue
            if not re.match(r"^[\d+\-*/().\s]+$", equation):
                rewards.append(0.0)
                continue
            result = eval(equation, {"__builtins__": None}, {})
            rewards.append(1.0 if abs(float(result) - float(gt)) < 1e-5 else 0.0)
        except Exception:
            rewards.append(0.0)
    return rewards


THOUGHTS = [
    "Let me try combining the largest numbers first.",
    "If I subtract the two smallest, I get a small difference I can multiply.",
    "That overshoots the target, so I should divide somewhere instead.",
    "Adding everything gives too much; maybe one subtraction fixes it.",
    "Check: the product of two of them is close to the target.",
]


def realistic_batches(count: int, seed: int) -> list[tuple[list[str], list[list[int]], list[int]]]:
    rng = random.Random(seed)
    rows = list(generate(CountdownConfig(), count=count * BATCH, seed=seed))
    batches = []
    for start in range(0, len(rows), BATCH):
        completions, nums, targets = [], [], []
        for row in rows[start : start + BATCH]:
            thinking = " ".join(rng.choice(THOUGHTS) for _ in range(rng.randint(4, 8)))
            kind = rng.random()
            if kind < 0.4:
                equation = f"{row['solution']} = {row['target']}"
            elif kind < 0.7:
                equation = " + ".join(map(str, row["nums"])) + f" = {row['target']}"
            elif kind < 0.9:
                equation = " * ".join(map(str, row["nums"][:-1]))
            else:
                equation = f"{row['nums'][0]} x {row['nums'][1]}"
            completions.append(f"<think>\n{thinking}\n</think>\n<answer>{equation}</answer>")
            nums.append(row["nums"])
            targets.append(row["target"])
        batches.append((completions, nums, targets))
    return batches


def throughputs(rewards, batches, repeats: int = 7) -> list[float]:
    """Best completions per CPU-second of each reward.

    Passes alternate, so other load on the machine hits all rewards alike, and CPU time of this
    process is measured (rewards are single-threaded), so time spent preempted does not count.
    """
    best = [float("inf")] * len(rewards)
    for _ in range(repeats):
        for index, reward in enumerate(rewards):
            start = time.process_time()
            for completions, nums, targets in batches:
                reward(completions, nums=nums, target=targets)
            best[index] = min(best[index], time.process_time() - start)
    total = sum(len(batch[0]) for batch in batches)
    return [total / seconds for seconds in best]


ADVERSARIAL = {
    "power tower 9**9**9**9": "<answer>9**9**9**9</answer>",
    "256 KB of thinking": "<think>" + "a" * 262_144 + "</think><answer>(6 - 2) * 6</answer>",
    "30,000 nested answer tags": "<answer>" * 30_000 + "(6 - 2) * 6" + "</answer>" * 30_000,
    "30,000 answer blocks": "<answer>1</answer>" * 30_000,
    "100,000 nested parentheses": "<answer>" + "(" * 100_000 + "6" + ")" * 100_000 + "</answer>",
    "500 nested parentheses": "<answer>" + "(" * 500 + "6" + ")" * 500 + " * (6 - 2)</answer>",
    "1 MB of 1+1+...": "<answer>" + "1+" * 500_000 + "1</answer>",
}


def worst_case_ms(reward, repeats: int = 5) -> dict[str, float]:
    times = {}
    for name, completion in ADVERSARIAL.items():
        best = float("inf")
        for _ in range(repeats):
            start = time.perf_counter()
            reward([completion], nums=[[6, 2, 6]], target=[24])
            best = min(best, time.perf_counter() - start)
        times[name] = best * 1000
    return times


def reference_hangs(seconds: float = 5.0) -> bool:
    """Whether the reference is still busy on the power tower after ``seconds`` (run in a child)."""
    code = (
        f"import sys; sys.path.insert(0, {str(Path(__file__).resolve().parent)!r});"
        "from bench_rewards import reference_reward as r;"
        "r(['<answer>9**9**9**9</answer>'], target=[1], nums=[[9, 9, 9, 9]])"
    )
    try:
        subprocess.run([sys.executable, "-c", code], timeout=seconds, capture_output=True)
    except subprocess.TimeoutExpired:
        return True
    return False


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batches", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--min-ratio", type=float, default=1.5, help="exit 1 if the ratio is below this")
    args = parser.parse_args()

    batches = realistic_batches(args.batches, args.seed)
    ours = countdown_accuracy_reward(*batches[0])
    assert ours == reference_reward(batches[0][0], target=batches[0][2], nums=batches[0][1]), "rewards disagree"
    ours_rate, reference_rate = throughputs([countdown_accuracy_reward, reference_reward], batches)
    ratio = ours_rate / reference_rate
    print(f"realistic completions, {args.batches} batches of {BATCH}:")
    print(f"  external_countdown  {ours_rate:12,.0f} completions per CPU-second")
    print(f"  eval reference      {reference_rate:12,.0f} completions per CPU-second")
    print(f"  ratio               {ratio:12.2f}x")
    print("worst case per completion, external_countdown (adversarial set):")
    for name, ms in worst_case_ms(countdown_accuracy_reward).items():
        print(f"  {name:28s} {ms:8.3f} ms")
    print(f"eval reference on 9**9**9**9: {'still running after 5 s (killed)' if reference_hangs() else 'finished'}")
    if ratio < args.min_ratio:
        sys.exit(f"ratio {ratio:.2f} is below {args.min_ratio}")


if __name__ == "__main__":
    main()
