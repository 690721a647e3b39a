"""reasoning-gym's own scoring test cases, recorded as data; and the false-negative search on more rows.

    python benchmarks/bench_gym_false_negatives.py upstream TESTS OUT.jsonl.gz
    python benchmarks/bench_gym_false_negatives.py search [--size 100] [--seed 2000] [--names coin_flip ...]

``upstream``: runs reasoning-gym's test files (``TESTS``: the ``tests`` folder of its repository at the tag of the
installed release, 0.1.25) with every dataset's ``score_answer`` recording each call: the dataset, its settings, the
answer, the entry and reasoning-gym's score. Only what the package can carry is kept (an answer that is text, an
entry a data file can hold, a served dataset): every answer a test wrote, and 10 gold answers a dataset. The result is
``tests/fixtures/gym/upstream.jsonl.gz``, which ``tests/gym/test_gym_false_negatives.py`` scores through the reward:
the test cases as facts, none of reasoning-gym's test code.

``search``: :func:`swift_plugins.gym.forms.search` on ``--size`` rows of every served dataset (seeds from
``--seed``), through the reward's worker function beside reasoning-gym's full credit; one markdown line a dataset.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import gzip
import json
import multiprocessing
import sys
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from swift_plugins.core.errors import DataError
from swift_plugins.gym.entries import encode
from swift_plugins.gym.generator import dataset_names, generate
from swift_plugins.gym.settings import CONTROLLED

GOLDS = 10  # distinct gold answers kept per dataset (tests that score every item of a dataset: the rest alike)


class Recorder:
    """A pytest plugin wrapping every dataset class's ``score_answer`` to record its calls."""

    def __init__(self) -> None:
        self.cases: dict[tuple[str, str], dict[str, dict]] = {}

    def pytest_configure(self, config) -> None:
        from reasoning_gym.factory import DATASETS

        served = set(dataset_names())
        for name, (cls, _) in DATASETS.items():
            if name in served:
                cls.score_answer = self._wrapped(name, cls.score_answer)

    def _wrapped(self, name: str, original):
        def score_answer(dataset, answer, entry):
            value = original(dataset, answer, entry)
            self._record(name, dataset, answer, entry, value)
            return value

        return score_answer

    def _record(self, name: str, dataset, answer, entry, value) -> None:
        if not isinstance(answer, str) or not isinstance(entry, dict) or not isinstance(value, (int, float)):
            return
        try:
            default = dataclasses.asdict(type(dataset.config)())  # the settings a test changed, only
            config = {key: item for key, item in dataclasses.asdict(dataset.config).items()
                      if key not in CONTROLLED and item != default[key]}  # fmt: skip
            gold = entry.get("answer")
            case = {"gym_dataset": name, "gym_config": encode(config), "question": entry.get("question", ""),
                    "answer": None if gold is None else str(gold), "metadata": encode(entry.get("metadata", {})),
                    "given": answer, "upstream": float(value)}  # fmt: skip
        except (DataError, TypeError):
            return
        key = json.dumps([case["given"], case["answer"], case["metadata"], case["gym_config"]])
        bucket = "gold" if case["given"] == case["answer"] else "written"  # a test's own answers: all of them
        kept = self.cases.setdefault((name, bucket), {})
        if key not in kept and len(kept) < GOLDS if bucket == "gold" else key not in kept:
            kept[key] = case


def upstream(args: argparse.Namespace) -> None:
    import pytest

    recorder = Recorder()
    files = sorted(str(path) for path in Path(args.tests).glob("test_*.py"))
    pytest.main(["-q", "--no-header", "-p", "no:cacheprovider", "-p", "no:randomly", "--continue-on-collection-errors",
                 *files], plugins=[recorder])  # fmt: skip
    cases = [case for kept in recorder.cases.values() for case in kept.values()]
    with gzip.open(args.out, "wt", encoding="utf-8") as file:
        file.writelines(json.dumps(case) + "\n" for case in cases)
    counts = Counter(case["gym_dataset"] for case in cases)
    print(f"{len(cases)} cases of {len(counts)} datasets written to {args.out}")


def searched(item: tuple[str, int, int]) -> tuple[str, int, Counter, Counter, float]:
    from swift_plugins.gym.forms import full_credit_of_reasoning_gym, search, through_the_reward

    name, size, seed = item
    with contextlib.redirect_stdout(sys.stderr):  # some generators and scorers print: keep the table clean
        rows = generate(name, size=size, seed=seed).train
        start = time.perf_counter()
        tried, missed = search(rows, through_the_reward)
        seconds = time.perf_counter() - start
        _, upstream_missed = search(rows, full_credit_of_reasoning_gym)
    return name, sum(tried.values()), missed, upstream_missed, seconds


def counted(missed: Counter) -> str:
    return ", ".join(f"{form} {count}" for form, count in sorted(missed.items())) or "none"


def run_search(args: argparse.Namespace) -> None:
    names = args.names or dataset_names()
    print("| dataset | forms scored | the reward: not 1.0 | reasoning-gym's own scorer: not 1.0 | seconds (reward) |")
    print("|---|---|---|---|---|")
    with ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("fork")) as pool:
        for name, tried, missed, upstream_missed, seconds in pool.map(
            searched, [(name, args.size, args.seed) for name in names]
        ):
            print(f"| {name} | {tried} | {counted(missed)} | {counted(upstream_missed)} | {seconds:.1f} |", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    actions = parser.add_subparsers(dest="action", required=True)
    record = actions.add_parser("upstream")
    record.add_argument("tests", type=Path)
    record.add_argument("out", type=Path)
    record.set_defaults(run=upstream)
    find = actions.add_parser("search")
    find.add_argument("--size", type=int, default=100)
    find.add_argument("--seed", type=int, default=2000)
    find.add_argument("--names", nargs="*")
    find.set_defaults(run=run_search)
    args = parser.parse_args()
    args.run(args)


if __name__ == "__main__":
    main()
