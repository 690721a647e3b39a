"""Rows from reasoning-gym's seeded generators: names, one-line descriptions, settings, train and held-out splits.

reasoning-gym seeds item ``i`` of a dataset made with ``seed=S`` from ``S + i`` (its generators' convention), so
:func:`generate` draws ``size + test_size`` items from seeds ``S, S+1, …`` (an item whose gold answer is empty text,
which no answer can score, is skipped and the next seed taken). It then chooses the held-out rows among them by a
random order drawn from ``S`` (:func:`~swift_plugins.core.splits.split_held_out`), so held-out and training rows
come from the same seeds. Small datasets draw one question from several seeds: the held-out rows repeat no
question and share none with the training rows. When a held-out question was drawn more than once, its other
items train neither, and as many training rows are drawn from the seeds after those.

>>> train, held_out = generate("basic_arithmetic", size=3, test_size=2, seed=0)
>>> len(train), len(held_out), sorted(train[0])
(3, 2, ['answer', 'gym_config', 'gym_dataset', 'metadata', 'question'])
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
from itertools import islice
from typing import Any

from ..core.errors import DataError, SettingError
from ..core.splits import split_held_out
from ..doctor.stacks import REASONING_GYM
from .entries import encode

__all__ = ["check_name", "check_version", "commonest_answer", "config_class", "dataset_names", "describe", "generate"]

INSTALL = f"pip install 'reasoning-gym=={REASONING_GYM}' (or this package's [gym] extra)"
NOT_SERVED = {  # by name, with why (docs/tasks.md, "Rewards that cannot be gamed")
    "composite": "a mix of other datasets: generate each and put their rows in one file",
    "propositional_logic": "any conclusion the premises entail scores 1.0, so a weak one needs no solving: the "
    "constant answer (P ∨ Q) scores 1.0 on 85% of its items",
}
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


def _scorable_items(
    name: str, settings: dict[str, Any], seed: int, start: int, count: int
) -> Iterator[tuple[int, dict[str, Any]]]:
    """The scorable items of seeds ``seed+start`` to ``seed+start+count-1``, each with its index from ``seed``."""
    for index, entry in enumerate(_dataset(name, settings, count, seed + start), start=start):
        if _scorable(entry):
            yield index, entry


def generate(
    name: str, size: int, test_size: int = 0, seed: int = 0, settings: dict[str, Any] | None = None
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """``size`` training rows and ``test_size`` held-out rows of dataset ``name``, no question in both."""
    check_name(name)
    settings = settings or {}
    config = encode(settings)
    wanted = size + test_size
    limit = wanted + max(10, wanted // 10)
    items = list(islice(_scorable_items(name, settings, seed, 0, limit), wanted))
    if len(items) < wanted:
        raise DataError(f"gym:{name}: only {len(items)} of {limit} items have a gold answer any answer could match")
    rows = [_row(name, config, entry, index) for index, entry in items]
    train, held_out = split_held_out(rows, test_size, seed, key=_question)
    if len(held_out) < test_size:
        raise DataError(
            f"gym:{name}: only {len(held_out)} distinct questions in {wanted} items, fewer than the {test_size} "
            "held-out ones asked for; the dataset has too few distinct questions for these sizes"
        )
    missing = size - len(train)  # a held-out question drawn more than once: its other items train neither
    if missing:
        held = {*map(_question, held_out)}
        tries = missing * REFILL_TRIES
        later = _scorable_items(name, settings, seed, items[-1][0] + 1, tries)
        more = list(islice(((i, entry) for i, entry in later if entry["question"] not in held), missing))
        if len(more) < missing:
            raise DataError(
                f"gym:{name}: the held-out questions took {missing} training items, and only {len(more)} of the "
                f"{tries} items after those have another question; the dataset has too few distinct questions "
                "for these sizes"
            )
        train += [_row(name, config, entry, index) for index, entry in more]
    return train, held_out


def commonest_answer(rows: list[dict[str, Any]]) -> tuple[str, int]:
    """The gold answer most ``rows`` have and how many have it: answering it to every question scores that many.

    >>> commonest_answer([{"answer": "1"}, {"answer": "2"}, {"answer": "1"}])
    ('1', 2)
    """
    return Counter(row["answer"] for row in rows).most_common(1)[0]


def _question(row: dict[str, Any]) -> str:
    return row["question"]
