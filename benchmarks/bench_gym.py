"""Throughput and worst case of the gym reward (``external_gym``) per task, against ``score_answer`` called directly.

    python benchmarks/bench_gym.py [--tasks basic_arithmetic countdown ...] [--rows 64] [--workers 2] [--timeout 1]

For each task: ``--rows`` generated rows, and a corpus of completions over them in batches of ``--rows`` (one
trainer reward call each). The benign part: the gold answer, a wrong answer, an answer with thinking around it,
no answer block. The hostile part: a huge power (``9**9**9``), 10,000 nested parentheses, code
(``__import__('time').sleep(30)``), an empty answer block, a megabyte answer. Printed per task (markdown):

- the baseline: reasoning-gym's ``score_answer`` called directly in this process on the benign part's answers
  (completions per second); it cannot be run on the hostile part (``9**9**9`` does not return);
- the gym reward on the benign part (completions per second, the ratio to the baseline, the time of one reward
  call on a batch);
- the gym reward on the whole corpus: completions per second, the worst seconds of one completion, and how many
  scored 0 after the time bound, an error or the guard (:mod:`swift_plugins.gym.guard`), by kind.
"""

from __future__ import annotations

import argparse
import time
from collections import Counter

from reasoning_gym import create_dataset

from swift_plugins.core.tags import last_answer
from swift_plugins.gym.bounded import GOLD_ROW, ScorePool, request
from swift_plugins.gym.data import entry_of
from swift_plugins.gym.entries import decode
from swift_plugins.gym.generator import generate

TASKS = ("basic_arithmetic", "countdown", "chain_sum", "leg_counting", "maze", "arc_1d")
HOSTILE = {
    "huge power": "9**9**9",
    "deep nesting": "(" * 10_000 + "1" + ")" * 10_000,
    "code": "__import__('time').sleep(30)",
    "empty": "",
    "megabyte": "1+" * 500_000 + "1",
}


def benign(row: dict) -> list[str]:
    gold = row["answer"] or "?"
    return [
        f"<think>Let me work it out step by step.</think><answer>{gold}</answer>",
        "<think>A guess.</think><answer>42</answer>",
        f"<think>{'Checking each part again. ' * 20}</think>\n<answer> {gold} </answer>\n",
        "I am not sure of the answer.",
    ]


def hostile() -> list[str]:
    return [f"<think>x</think><answer>{text}</answer>" for text in HOSTILE.values()]


def direct_rate(name: str, rows: list[dict], completions: list[list[str]]) -> float:
    """Completions per second of ``score_answer`` called in this process (rows' entries decoded beforehand)."""
    dataset = create_dataset(name, **decode(rows[0]["gym_config"]))
    entries = [entry_of(row["question"], row["answer"], row["metadata"]) for row in rows]
    count, start = 0, time.perf_counter()
    for entry, texts in zip(entries, completions, strict=True):
        for text in texts:
            dataset.score_answer(last_answer(text), entry)
            count += 1
    return count / (time.perf_counter() - start)


def pool_run(pool: ScorePool, name: str, rows: list[dict], completions: list[list[str]], batch: int):
    """(completions per second, worst seconds, failures by kind) of the pool over the corpus in reward-call batches."""
    pairs = [(row, text) for row, texts in zip(rows, completions, strict=True) for text in texts]
    requests = [request(name, last_answer(text), row) for row, text in pairs]
    outcomes, start = [], time.perf_counter()
    for first in range(0, len(requests), batch):
        outcomes += pool.score(requests[first : first + batch])
    seconds = time.perf_counter() - start
    worst = max(outcomes, key=lambda outcome: outcome.seconds)
    failures = Counter(outcome.failure.partition(":")[0] for outcome in outcomes if outcome.failure)
    return len(requests) / seconds, worst, ", ".join(f"{count} {kind}" for kind, count in failures.items()) or "0"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", nargs="+", default=TASKS)
    parser.add_argument("--rows", type=int, default=64)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=1.0)
    args = parser.parse_args()
    print(f"{args.rows} rows a task, batches of {args.rows}, {args.workers} workers, time bound {args.timeout} s\n")
    print("| task | direct, benign (c/s) | gym reward, benign (c/s) | ratio | one reward call of the batch "
          "| gym reward, with hostile (c/s) | worst completion | scored 0 by bound/error/guard |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|")
    with ScorePool(args.workers, args.timeout) as pool:
        pool.score([request("basic_arithmetic", "5", GOLD_ROW)] * args.workers)  # started before the clock runs
        for name in args.tasks:
            rows = generate(name, size=args.rows, seed=0).train
            good = [benign(row) for row in rows]
            every = [texts + (hostile() if index % 8 == 0 else []) for index, texts in enumerate(good)]
            baseline = direct_rate(name, rows, good)
            rate, _, _ = pool_run(pool, name, rows, good, args.rows)
            hostile_rate, worst, failed = pool_run(pool, name, rows, every, args.rows)
            print(
                f"| {name} | {baseline:,.0f} | {rate:,.0f} | {rate / baseline:.2g}x | {args.rows / rate * 1000:.0f} ms "
                f"| {hostile_rate:,.0f} "
                f"| {worst.seconds * 1000:,.1f} ms ({worst.failure or 'scored'}) | {failed} of {sum(map(len, every))} |"
            )


if __name__ == "__main__":
    main()
