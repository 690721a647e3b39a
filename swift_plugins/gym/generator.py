"""Rows from reasoning-gym's seeded generators: names, one-line descriptions, settings, train and held-out splits.

reasoning-gym seeds item ``i`` of a dataset made with ``seed=S`` from ``S + i`` (its generators' convention), so
:func:`generate` draws items from seeds ``S, S+1, …`` and keeps each question the first time it comes (an item whose
gold answer is empty text, which no answer can score, is skipped), until it has ``size + dev_size + test_size``
distinct questions. It then holds rows out at random among them (:func:`~swift_plugins.core.splits.split_rows`), so
the held-out rows follow the training mix: a small question that many seeds draw is no likelier to be held out
than any other. A dataset with too few distinct questions for the sizes trains on every item held out of neither
split, repeats included (``gym generate`` says how many repeat).

>>> split = generate("basic_arithmetic", size=3, test_size=2, seed=0, dev_size=1)
>>> len(split.train), len(split.dev), len(split.test), sorted(split.train[0])
(3, 1, 2, ['answer', 'gym_config', 'gym_dataset', 'metadata', 'question'])
>>> check_name("basic_arithmatic")  # doctest: +ELLIPSIS, +NORMALIZE_WHITESPACE
Traceback (most recent call last):
...
swift_plugins.core.errors.SettingError: gym:basic_arithmatic is not a reasoning-gym dataset;
closest: basic_arithmetic, ...
"""

from __future__ import annotations

import difflib
import importlib.metadata
import warnings
from collections import Counter
from collections.abc import Iterator
from functools import cache
from itertools import count, islice
from typing import Any

from ..core.errors import DataError, SettingError
from ..core.splits import Split, shuffled, split_rows
from ..doctor.stacks import REASONING_GYM
from .entries import encode

__all__ = ["check_name", "check_version", "commonest_answer", "config_class", "dataset_names", "describe", "generate"]

INSTALL = f"pip install 'reasoning-gym=={REASONING_GYM}' (or this package's [gym] extra)"
NOT_SERVED = {  # by name, with why (docs/tasks.md, "Rewards that cannot be gamed")
    "composite": "a mix of other datasets: generate each and put their rows in one file",
    "propositional_logic": "any conclusion the premises entail scores 1.0, so a weak one needs no solving: the "
    "constant answer (P ∨ Q) scores 1.0 on 85% of its items",
}
ITEMS_PER_DRAW = 1000  # reasoning-gym items made at a time
MIN_FRUITLESS = 1000  # the draw stops after as many items in a row as rows wanted (at least this) bring no new question
REFILL_TRIES = 20  # items drawn per training row still missing, at most, before the dataset is deemed too small


@cache
def check_version() -> str:
    """The installed reasoning-gym's version if it is the audited release; else :class:`SettingError` in one line.

    The gym rewards hold for the release whose scorers were searched for hacks and read for code that runs an
    answer (docs/tasks.md): another release may score otherwise, or run answers, and is refused.
    """
    try:
        installed = importlib.metadata.version("reasoning-gym")
    except importlib.metadata.PackageNotFoundError:
        raise SettingError(f"TASK=gym:<name> needs reasoning-gym: {INSTALL}") from None
    if installed != REASONING_GYM:
        raise SettingError(
            f"reasoning-gym {installed} is installed, but the gym task's scorers are audited on {REASONING_GYM} only "
            f"(searched for hacks, answer-evaluating ones guarded): {INSTALL}"
        )
    return installed


@cache
def _registry() -> dict[str, tuple[type, type]]:
    check_version()
    # cellpylib, which two datasets import, has escape sequences Python warns of when it first compiles them: a
    # warning about a library's source, not the user's command, kept off the one line a command prints
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SyntaxWarning)
        from reasoning_gym.factory import DATASETS

    return DATASETS


def dataset_names() -> list[str]:
    """Every reasoning-gym dataset this task serves, sorted."""
    return sorted(name for name in _registry() if name not in NOT_SERVED)


def check_name(name: str) -> str:
    """``name`` if it is a dataset of :func:`dataset_names`, else :class:`SettingError` naming the closest."""
    if name in NOT_SERVED:
        raise SettingError(f"gym:{name} is not served: {NOT_SERVED[name]}")
    names = dataset_names()
    if name not in names:
        closest = difflib.get_close_matches(name, names, n=3)
        hint = f"closest: {', '.join(closest)}" if closest else "python -m swift_plugins gym list names them all"
        raise SettingError(f"gym:{name} is not a reasoning-gym dataset; {hint}")
    return name


def config_class(name: str) -> type:
    """The config dataclass of dataset ``name`` (its fields are the dataset's settings)."""
    return _registry()[check_name(name)][1]


def describe(name: str) -> str:
    """The first line of the dataset's own docstring (else its config's), else its reasoning-gym category.

    >>> describe("countdown")
    'Generates Countdown Number Game tasks'
    """
    for cls in _registry()[check_name(name)]:
        doc = cls.__dict__.get("__doc__")
        if doc and doc.strip() and not doc.startswith(cls.__name__ + "("):  # not dataclass's generated signature
            return doc.strip().splitlines()[0].strip()
    return f"({_registry()[name][0].__module__.split('.')[1]})"


def _dataset(name: str, settings: dict[str, Any], size: int, seed: int):
    from reasoning_gym import create_dataset

    try:
        return create_dataset(name, **settings, size=size, seed=seed)
    except (AssertionError, TypeError, ValueError) as error:
        raise SettingError(f"gym:{name}: settings {settings} refused: {error or type(error).__name__}") from None


def _scorable(entry: dict[str, Any]) -> bool:
    """Not an item whose gold answer is empty text (base_conversion of the number 0, written as nothing): the scorers
    pay no empty answer, so nothing could score it."""
    return entry["answer"] is None or str(entry["answer"]) != ""


def _row(name: str, config: str, entry: dict[str, Any], index: int) -> dict[str, Any]:
    answer = entry["answer"]
    try:
        metadata = encode(entry["metadata"])
    except DataError as error:
        raise DataError(f"gym:{name} item {index}: {error}") from None
    return {
        "gym_dataset": name,
        "gym_config": config,
        "question": entry["question"],
        "answer": None if answer is None else str(answer),
        "metadata": metadata,
    }


def _scorable_items(name: str, settings: dict[str, Any], seed: int) -> Iterator[tuple[int, dict[str, Any]]]:
    """The scorable items of seeds ``seed``, ``seed+1``, …, each with its index from ``seed``, in chunks."""
    for start in count(0, ITEMS_PER_DRAW):
        for index, entry in enumerate(_dataset(name, settings, ITEMS_PER_DRAW, seed + start), start=start):
            if _scorable(entry):
                yield index, entry


def generate(
    name: str,
    size: int,
    test_size: int = 0,
    seed: int = 0,
    settings: dict[str, Any] | None = None,
    dev_size: int = 0,
    split_seed: int | None = None,
) -> Split[dict[str, Any]]:
    """``size`` training rows, ``dev_size`` dev rows and ``test_size`` test rows of dataset ``name``, each
    question in one split only, the held-out ones drawn with ``split_seed`` (default ``seed``; ``seed`` then orders
    the training rows)."""
    check_name(name)
    settings = settings or {}
    config = encode(settings)
    split_seed, order_seed = (seed, None) if split_seed is None else (split_seed, seed)
    held, wanted = dev_size + test_size, size + dev_size + test_size
    items, rows, questions = _scorable_items(name, settings, split_seed), [], set()
    drawn, fruitless = 0, 0
    while len(rows) < wanted and fruitless < max(wanted, MIN_FRUITLESS):
        index, entry = next(items)
        drawn, fruitless = drawn + 1, fruitless + 1
        if entry["question"] not in questions:
            questions.add(entry["question"])
            rows.append(_row(name, config, entry, index))
            fruitless = 0
    if len(rows) < held:
        raise DataError(f"gym:{name}: only {len(rows)} distinct questions in {drawn} items, fewer than the {held} "
                        "held-out ones asked for; the dataset has too few distinct questions for these sizes")
    split = split_rows(rows, test_size, split_seed, dev_size, order_seed)
    if len(split.train) < size:  # too few distinct questions: the training rows are every item held out of neither
        held_out = {row["question"] for row in split.dev + split.test}
        tries = drawn + (size - len(split.train)) * REFILL_TRIES
        train = [_row(name, config, entry, index) for index, entry in islice(_scorable_items(name, settings,
                 split_seed), tries) if entry["question"] not in held_out][:size]  # fmt: skip
        if len(train) < size:
            raise DataError(f"gym:{name}: {len(rows)} distinct questions in {tries} items, {held} of them held out: "
                            f"{len(train)} items left for the {size} training rows; the dataset has too few distinct "
                            "questions for these sizes")  # fmt: skip
        split = Split(shuffled(train, order_seed), split.dev, split.test)
    return split


def commonest_answer(rows: list[dict[str, Any]]) -> tuple[str, int]:
    """The gold answer most ``rows`` have and how many have it: answering it to every question scores that many.

    >>> commonest_answer([{"answer": "1"}, {"answer": "2"}, {"answer": "1"}])
    ('1', 2)
    """
    return Counter(row["answer"] for row in rows).most_common(1)[0]


def _question(row: dict[str, Any]) -> str:
    return row["question"]
