"""``gym:countdown``'s scorer beside the package's Countdown reward, on the completions the reward tests use.

    python benchmarks/crosscheck_gym_countdown.py

The corpus is tests/countdown/test_rewards.py's: every accepted form, every rejected hack or mistake and the adversarial
completions, each with its puzzle (rows the package cannot read, ``bad row``, are left out: a gym row carries
numbers). Each completion is scored by ``external_countdown`` (and its shaped variant) and by the gym reward on a
gym row holding the same puzzle (reasoning-gym's countdown ``score_answer``, through the bounded worker pool, as
``external_gym`` scores it). Prints a markdown table, one line per completion, then the agreement counts on
"correct" (score 1); docs/tasks.md explains each difference.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the tests package, for its corpus

from swift_plugins.countdown.rewards import Verdict, countdown_shaped_reward, judge
from swift_plugins.gym.entries import encode
from swift_plugins.gym.rewards import score_completions
from tests.countdown.test_rewards import ACCEPTED, ADVERSARIAL, REJECTED


def gym_row(nums, target) -> dict:
    numbers, goal = [int(n) for n in (nums if isinstance(nums, list) else nums.strip("[]").split(","))], int(target)
    metadata = encode({"source_dataset": "countdown", "numbers": numbers, "target": goal, "expression": ""})
    return {"gym_dataset": "countdown", "gym_config": "{}", "question": f"{numbers} -> {goal}", "answer": "",
            "metadata": metadata}  # fmt: skip


def corpus() -> list[tuple[str, object, object, object]]:
    cases = [(name, completion, nums, target) for name, completion, nums, target in ACCEPTED]
    cases += [(name, c, n, t) for name, c, n, t, verdict in REJECTED if verdict is not Verdict.BAD_ROW]
    cases += [(name, completion, [6, 2, 6], 24) for name, completion in ADVERSARIAL.items()]
    return cases


def main() -> None:
    cases = corpus()
    outcomes = score_completions([c for _, c, _, _ in cases], [gym_row(n, t) for _, _, n, t in cases])
    print("| completion | package verdict | external_countdown | countdown_shaped | gym:countdown | agree |")
    print("|---|---|---|---|---|---|")
    counts = {"both correct": 0, "both not correct": 0, "package only": 0, "gym only": 0}
    for (name, completion, nums, target), outcome in zip(cases, outcomes, strict=True):
        verdict = judge(completion, nums, target)
        package = float(verdict is Verdict.CORRECT)
        shaped = countdown_shaped_reward([completion], nums=[nums], target=[target])[0]
        gym = outcome.score
        agree = (package == 1.0) == (gym == 1.0)
        kinds = {(True, True): "both correct", (True, False): "package only", (False, True): "gym only"}
        counts[kinds.get((package == 1.0, gym == 1.0), "both not correct")] += 1
        gym_text = f"{gym:g}" + (f" ({outcome.failure.partition(':')[0]})" if outcome.failure else "")  # its kind
        print(f"| {name} | {verdict.value} | {package:g} | {shaped:g} | {gym_text} | {'yes' if agree else '**no**'} |")
    print(f"\n{len(cases)} completions: " + ", ".join(f"{kind} {count}" for kind, count in counts.items()))


if __name__ == "__main__":
    main()
