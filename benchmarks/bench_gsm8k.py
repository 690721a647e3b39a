"""Speed and agreement of ``gsm8k_accuracy`` against two peers, on one shared set of realistic completions.

Peers, measured in the same process on the same completions:

- **from-scratch**: the answer score of the from-scratch GRPO document (the GSM8K notebook it studies):
  the text between the last ``<answer>`` and the next ``</answer>``; 2.0 if it equals the reference
  string, 1.5 if it holds exactly one number (``-?\\d*\\.?\\d+``) equal as a float to the reference's,
  else 0. Re-implemented here from that description, only to be measured (scored correct when > 0).
- **TRL + math-verify**: ``trl.rewards.accuracy_reward`` itself (Hugging Face's ``math-verify`` with
  TRL's extraction config), on the whole completion, as a TRL user would call it.
- **math-verify on the block**: ``math_verify.verify(parse(reference), parse(answer block))`` with
  math-verify's default config, given the same ``<answer>`` block our reward reads.

    pip install -e '.[bench]'
    python benchmarks/bench_gsm8k.py [--batches 200] [--agreement-batches 16] [--seed 0]

Prints completions per CPU-second of each (math-verify on the agreement set only: it is ~100x
slower), the ratios, the share of completions each scores correct per kind of answer, the
disagreements per kind, and the worst time per completion of ``gsm8k_accuracy`` on adversarial inputs.
"""

from __future__ import annotations

import argparse
import logging
import random
import re
import sys
import time
from collections import Counter

from math_verify import parse, verify
from trl.rewards import accuracy_reward as trl_accuracy_reward

from swift_plugins.core.tags import last_answer
from swift_plugins.gsm8k.rewards import gsm8k_accuracy_reward

BATCH = 128  # 16 questions x 8 completions, as a GRPO step sees them
GENERATIONS = 8


def from_scratch_reward(completions, answer, **kwargs):
    """The from-scratch document's answer score: exact string 2.0, one equal number 1.5, else 0."""
    rewards = []
    for completion, reference in zip(completions, answer, strict=True):
        parts = completion.split("<answer>")
        response = None
        if len(parts) >= 2 and "</answer>" in parts[-1]:
            response = parts[-1].split("</answer>")[0].strip()
            response = None if response == "..." else response
        if response == reference:
            rewards.append(2.0)
            continue
        found = re.findall(r"-?\d*\.?\d+", str(response))
        expected = re.findall(r"-?\d*\.?\d+", reference)
        single = float(found[0]) if len(found) == 1 else None
        gold = float(expected[0]) if len(expected) == 1 else None
        rewards.append(1.5 if single is not None and gold is not None and single == gold else 0.0)
    return rewards


def trl_math_verify_reward(completions, answer, **kwargs):
    """TRL's accuracy reward, called as TRL calls it: chat-message completions, a ``solution`` column."""
    messages = [[{"role": "assistant", "content": completion}] for completion in completions]
    return [reward or 0.0 for reward in trl_accuracy_reward(messages, solution=answer)]


def math_verify_block_reward(completions, answer, **kwargs):
    """math-verify's default parse and verify on the last answer block."""
    rewards = []
    for completion, reference in zip(completions, answer, strict=True):
        block = last_answer(completion)
        rewards.append(float(block is not None and verify(parse(reference), parse(block))))
    return rewards


def ours(completions, answer, **kwargs):
    return gsm8k_accuracy_reward(completions, final_answer=answer)


PEERS = {
    "gsm8k_accuracy (ours)": ours,
    "from-scratch answer score": from_scratch_reward,
    "TRL accuracy_reward (math-verify)": trl_math_verify_reward,
    "math-verify on the answer block": math_verify_block_reward,
}

NAMES = ["Natalia", "James", "Betty", "Weng", "Julie", "Mark", "Tina", "Carla"]
ITEMS = ["clip", "apple", "page", "marble", "ticket", "cookie", "book", "stamp"]


def reasoning(rng: random.Random, size: int = 900) -> str:
    """GSM8K-like working with numbers and arithmetic, about ``size`` characters."""
    sentences = []
    while sum(map(len, sentences)) < size:
        name, item = rng.choice(NAMES), rng.choice(ITEMS)
        x, y = rng.randint(2, 60), rng.randint(2, 25)
        sentences.append(
            rng.choice(
                [
                    f"{name} buys {x} {item}s at ${y} each, so that costs {x} * {y} = ${x * y}.",
                    f"Then {x * y} - {y} = {x * y - y} {item}s are left.",
                    f"Half of {2 * x} is {2 * x} / 2 = {x}.",
                    f"So in total {name} has {x} + {y} = {x + y} {item}s.",
                    f"Each week has 7 days, so {x} weeks are {x} * 7 = {7 * x} days.",
                    f"We need to find how many {item}s {name} has at the end.",
                ]
            )
        )
    return " ".join(sentences)


def _bad_separator(value: int) -> str:
    digits = str(value)
    return f"{digits[:-2]},{digits[-2:]}" if len(digits) >= 3 else f"{digits},0"


# kind -> (weight, answer block content or a whole tail, from the reference and a random source)
KINDS = {
    "plain": (30, lambda v, r: f"{v}"),
    "plain on its own line": (10, lambda v, r: f"\n{v}\n"),
    "dollar sign": (4, lambda v, r: f"${v}"),
    "unit word": (4, lambda v, r: f"{v} {r.choice(ITEMS)}s"),
    "sentence": (4, lambda v, r: f"{r.choice(NAMES)} has {v} {r.choice(ITEMS)}s left."),
    "thousands separator": (4, lambda v, r: f"{v:,}"),
    "decimal zero": (2, lambda v, r: f"{v}.0"),
    "full stop": (2, lambda v, r: f"{v}."),
    "boxed": (3, lambda v, r: f"\\boxed{{{v}}}"),
    "boxed in math mode": (2, lambda v, r: f"$\\boxed{{{v}}}$"),
    "math mode": (2, lambda v, r: f"${v}$"),
    "bold": (2, lambda v, r: f"**{v}**"),
    "equation": (4, lambda v, r: f"{v - 7} + 7 = {v}"),
    "gsm8k marker": (2, lambda v, r: f"#### {v}"),
    "working without '='": (2, lambda v, r: f"{v - 7} plus 7 makes {v}"),
    "wrong value": (10, lambda v, r: f"{v + r.choice([-10, -1, 1, 2, 100])}"),
    "two values with 'or'": (2, lambda v, r: f"{v - 1} or {v}"),
    "two values on two lines": (2, lambda v, r: f"{v - 1}\n{v}"),
    "hedge": (1, lambda v, r: f"about {v}"),
    "range": (1, lambda v, r: f"{v - 2}-{v + 2}"),
    "separator done wrong": (1, lambda v, r: _bad_separator(v)),
    "float near miss": (1, lambda v, r: f"{v - 1}.99999999999999999"),
    "no answer block": (3, None),
    "truncated": (2, None),
}


def completion(kind: str, value: int, rng: random.Random) -> str:
    thinking = reasoning(rng)
    if kind == "no answer block":
        return f"<reasoning>\n{thinking}\n</reasoning>\nThe answer is {value}."
    if kind == "truncated":
        return f"<reasoning>\n{thinking[: rng.randint(200, 800)]}"
    content = KINDS[kind][1](value, rng)
    return f"<reasoning>\n{thinking}\n</reasoning>\n<answer>\n{content}\n</answer>"


def realistic_batches(count: int, seed: int) -> list[tuple[list[str], list[str], list[str]]]:
    """Batches of (completions, references, kinds); references as GSM8K's final_answer strings."""
    rng = random.Random(seed)
    kinds, weights = list(KINDS), [weight for weight, _ in KINDS.values()]
    batches = []
    for _ in range(count):
        completions, references, labels = [], [], []
        for _ in range(BATCH // GENERATIONS):
            value = rng.randint(10, 999) if rng.random() < 0.85 else rng.randint(1000, 99_999)
            for kind in rng.choices(kinds, weights, k=GENERATIONS):
                completions.append(completion(kind, value, rng))
                references.append(str(value))
                labels.append(kind)
        batches.append((completions, references, labels))
    return batches


def throughputs(rewards, batches, repeats: int) -> list[float]:
    """Best completions per CPU-second of each reward; passes alternate so machine load hits all alike."""
    best = [float("inf")] * len(rewards)
    for _ in range(repeats):
        for index, reward in enumerate(rewards):
            start = time.process_time()
            for completions, references, _ in batches:
                reward(completions, answer=references)
            best[index] = min(best[index], time.process_time() - start)
    total = sum(len(batch[0]) for batch in batches)
    return [total / seconds for seconds in best]


def agreement(batches) -> tuple[dict[str, Counter], dict[str, Counter], dict[str, Counter], Counter]:
    """Per reward and kind: completions scored correct, and those only the peer or only ours scores correct."""
    correct = {name: Counter() for name in PEERS}
    only_peer = {name: Counter() for name in PEERS}
    only_ours = {name: Counter() for name in PEERS}
    sizes = Counter()
    for completions, references, labels in batches:
        sizes.update(labels)
        scores = {
            name: [score > 0 for score in reward(completions, answer=references)] for name, reward in PEERS.items()
        }
        ours_scores = scores[next(iter(PEERS))]
        for name, peer_scores in scores.items():
            for label, mine, theirs in zip(labels, ours_scores, peer_scores, strict=True):
                correct[name][label] += theirs
                only_peer[name][label] += theirs and not mine
                only_ours[name][label] += mine and not theirs
    return correct, only_peer, only_ours, sizes


ADVERSARIAL = {
    "1 MB of reasoning": "<reasoning>" + "48 + 24 = 72. " * 75_000 + "</reasoning><answer>72</answer>",
    "1 MB answer block": "<answer>" + "72 " * 350_000 + "</answer>",
    "30,000 nested answer tags": "<answer>" * 30_000 + "72" + "</answer>" * 30_000,
    "30,000 answer blocks": "<answer>72</answer>" * 30_000,
    "1,000-character number": "<answer>" + "1," * 499 + "000</answer>",
}


def worst_case_ms(repeats: int = 5) -> dict[str, float]:
    times = {}
    for name, text in ADVERSARIAL.items():
        best = float("inf")
        for _ in range(repeats):
            start = time.perf_counter()
            gsm8k_accuracy_reward([text], final_answer=["72"])
            best = min(best, time.perf_counter() - start)
        times[name] = best * 1000
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batches", type=int, default=200, help="batches of 128 for the fast rewards' speed")
    parser.add_argument("--agreement-batches", type=int, default=16, help="batches scored by every reward")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--min-rate", type=float, default=100_000, help="exit 1 if ours is slower than this")
    args = parser.parse_args()
    logging.getLogger("math_verify").setLevel(logging.ERROR)

    batches = realistic_batches(max(args.batches, args.agreement_batches), args.seed)
    shared = batches[: args.agreement_batches]
    size = sum(len(batch[0]) for batch in shared)
    mean_chars = sum(len(text) for batch in shared for text in batch[0]) / size
    names = list(PEERS)
    fast = throughputs([PEERS[name] for name in names[:2]], batches[: args.batches], repeats=5)
    slow = throughputs([PEERS[name] for name in names[2:]], shared, repeats=1)
    rates = dict(zip(names, fast + slow, strict=True))
    print(f"completions per CPU-second ({args.batches} batches of {BATCH} for the first two, {size} for")
    print(f"math-verify; mean completion {mean_chars:,.0f} characters):")
    for name, rate in rates.items():
        ratio = "" if name == names[0] else f"   ours / this: {rates[names[0]] / rate:,.2f}x"
        print(f"  {name:36s} {rate:12,.0f}{ratio}")

    correct, only_peer, only_ours, sizes = agreement(shared)
    short = ["ours", "scratch", "TRL+mv", "mv block"]
    print(f"\nshare scored correct, per kind of answer ({size} completions; the value is right unless named):")
    print(f"  {'kind':28s} {'n':>5s} " + " ".join(f"{label:>9s}" for label in short))
    for kind in KINDS:
        cells = " ".join(f"{correct[name][kind] / sizes[kind]:9.2f}" for name in names)
        print(f"  {kind:28s} {sizes[kind]:5d} {cells}")
    print("\ndisagreements with ours, by kind (+n: only the peer pays, -n: only ours pays):")
    for name in names[1:]:
        total = sum(only_peer[name].values()) + sum(only_ours[name].values())
        detail = ", ".join(
            f"{kind} "
            + "/".join(
                f"{sign}{count}"
                for sign, count in (("+", only_peer[name][kind]), ("-", only_ours[name][kind]))
                if count
            )
            for kind in KINDS
            if only_peer[name][kind] or only_ours[name][kind]
        )
        print(f"  {name}: {total} of {size} ({total / size:.1%}): {detail}")

    print("\nworst case per completion, gsm8k_accuracy (adversarial set):")
    for name, ms in worst_case_ms().items():
        print(f"  {name:28s} {ms:8.3f} ms")
    if rates[names[0]] < args.min_rate:
        sys.exit(f"gsm8k_accuracy scored {rates[names[0]]:,.0f} completions/s, below {args.min_rate:,.0f}")


if __name__ == "__main__":
    main()
