"""The hack search: answers that need no solving, scored as the reward scores them, against rules that must hold.

RL finds any answer that scores without solving. For a sample of one dataset's rows, :func:`probes` builds such
answers from the rows' reference answers (the gold answer; for a dataset without one, the example its metadata
holds): constants of every kind the answers take (each option of a choice task, numbers, 0, empty, whitespace),
non-finite and huge numbers, wildcards, other rows' answers; hedges (all options at once; a row's answer beside
another in a random order); and malformed answers (the first character, the first half, all but the last
character). :func:`search` scores them with the scorer it is given and returns what breaks a rule:

- a question-independent answer (a constant, another row's answer) earns on average at most what the best single
  valid answer would: the share of the most common reference answer (about 0 on a numeric task), or the share of
  rows whose reference it is the same answer as, plus :data:`TOLERANCE`;
- a hedge earns at most its best single candidate: the best of always answering its first, second, ... candidate;
- a non-finite number earns 0;
- a malformed answer that is not the same answer as the reference never earns full credit (more than on
  :data:`TOLERANCE` of the rows).

"The same answer" is judged without the dataset's scorer (:func:`same`). ``tests/gym/test_gym_hacks.py`` runs the
search on every served dataset; ``benchmarks/bench_gym_hacks.py`` on more rows, through the reward, beside
reasoning-gym's own scores.

>>> rows = [{"gym_dataset": "d", "question": f"q{n}", "answer": str(n % 2 == 0), "metadata": "{}"} for n in range(20)]
>>> findings = search(rows, lambda answers, rows: [float(bool(answer)) for answer in answers])  # bool(answer)
>>> earned = {finding.probe: (finding.earned, finding.allowed) for finding in findings}
>>> earned["constant 'True'"], earned["constant '0'"], earned["non-finite 'nan'"]
((1.0, 0.55), (1.0, 0.55), (1.0, 0.0))
>>> search(rows, lambda answers, rows: [float(a == r["answer"]) for a, r in zip(answers, rows)])
[]
"""

from __future__ import annotations

import itertools
import json
import math
import random
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["TOLERANCE", "Finding", "Probe", "probes", "reference", "same", "search"]

TOLERANCE = 0.05  # of the rows: what a probe may earn beyond its limit (chance matches, several solutions)
OPTIONS = 12  # at most so many distinct reference answers: a choice task, each option a constant
NUMBERS = ("0", "1", "-1", "2", "10", "100", "0.5", "1/2", "0.0", "9" * 400, "-" + "9" * 400, "1e308", "-1e308")
NON_FINITE = ("nan", "-nan", "inf", "-inf", "Infinity", "1e999", "nan+nanj")
BLANKS = ("", " ", "\n", "\t")
WILDCARDS = ("*", ".*", "?", "...", "any", "all", "none", "null", "True", "False", "yes", "no", "[]", "{}", "()", "A",
             "x", "0 0", "unknown")  # fmt: skip
SEPARATORS = (", ", " ", "\n", " or ", " and ", "|")
Scorer = Callable[[list[str], Sequence[dict[str, Any]]], list[float]]
_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")


@dataclass(frozen=True)
class Probe:
    """Answers that need no solving, one per row, and the most their mean score may be (:meth:`limit`).

    ``kind``: ``constant`` (the same answer for every row, or another row's answer), ``non-finite``, ``hedge`` (its
    ``candidates``: the answers it lists, position by position) or ``malformed`` (``shares``: whether each row's
    answer is the same answer as its reference).
    """

    kind: str
    label: str
    answers: tuple[str, ...]
    allowed: float = 0.0  # a constant's limit; a hedge's is computed from its candidates
    candidates: tuple[tuple[str, ...], ...] = ()
    shares: tuple[bool, ...] = ()


@dataclass(frozen=True)
class Finding:
    """A probe that broke its rule: it earned ``earned`` on average where at most ``allowed`` may be earned."""

    probe: str
    earned: float
    allowed: float


def reference(row: dict[str, Any]) -> str | None:
    """The row's gold answer; for a dataset without one, the example its metadata holds (None: none)."""
    if row.get("answer") is not None:
        return row["answer"]
    metadata = json.loads(row["metadata"])
    if row["gym_dataset"] == "graph_color":  # {vertex: colour}, tagged (entries.py): the JSON map the question asks
        return json.dumps({str(vertex): colour for vertex, colour in metadata["possible_answer"]["__items__"]})
    example = metadata.get("example_answer", metadata.get("example_correct_answer"))
    return example if isinstance(example, str) else None


def _canonical(text: str) -> str:
    return " ".join(text.casefold().split()).strip(" .$()[]{}'\"")


def same(answer: str, reference: str) -> bool:
    """Whether ``answer`` is ``reference`` told another way: equal but for case, spacing and the brackets, dots and
    quotes around it, or the same numbers (within 1%: a rounding) with the same words around them, a unit at the end
    possibly cut short.

    >>> same(" True.", "true"), same("5 d", "5.0 days"), same("0", "0.3438"), same("(1, 2", "(1, 2)")
    (True, True, False, True)
    """
    answer, reference = _canonical(answer), _canonical(reference)
    if answer == reference:
        return True
    numbers, expected = _NUMBER.findall(answer), _NUMBER.findall(reference)
    if not expected or len(numbers) != len(expected):
        return False
    if not _NUMBER.sub("#", reference).startswith(_NUMBER.sub("#", answer)):  # a unit cut short is the same answer
        return False
    values = [(float(a), float(b)) for a, b in zip(numbers, expected, strict=True)]
    return all(math.isfinite(a) and math.isclose(a, b, rel_tol=1e-2, abs_tol=1e-9) for a, b in values)


def probes(rows: Sequence[dict[str, Any]], seed: int = 0) -> list[Probe]:
    """Every probe of :func:`search` for these rows (of one dataset)."""
    refs = [reference(row) for row in rows]
    known = [ref for ref in refs if ref is not None]
    counts = Counter(_canonical(ref) for ref in known)
    majority = max(counts.values(), default=0) / len(rows)
    distinct = list({_canonical(ref): ref for ref in sorted(known, key=lambda ref: -counts[_canonical(ref)])}.values())
    options = distinct if len(distinct) <= OPTIONS else []
    variants = {option.lower() for option in options}
    found = []

    def constant(label: str, answers: Sequence[str]) -> None:
        matches = sum(ref is not None and same(answer, ref) for answer, ref in zip(answers, refs, strict=True))
        found.append(Probe("constant", label, tuple(answers), max(majority, matches / len(rows))))

    for text in dict.fromkeys([*(options or distinct[:3]), *sorted(variants), *NUMBERS, *BLANKS, *WILDCARDS]):
        constant(f"constant {text[:40]!r}", [text] * len(rows))
    for shift in (1, 7):
        if known:
            constant(f"another row's answer (+{shift})", [known[(i + shift) % len(known)] for i in range(len(rows))])
    found += [Probe("non-finite", f"non-finite {text!r}", (text,) * len(rows)) for text in NON_FINITE]
    for separator in SEPARATORS:
        listed = separator.join(options or distinct[:OPTIONS])
        if listed:
            what = "every option" if options else f"the {OPTIONS} most common answers"
            constant(f"{what} joined by {separator!r}", [listed] * len(rows))
    if len(counts) > 1 and None not in refs:
        found += _hedges(refs, random.Random(seed))
        for label, cut in (("first character", lambda ref: ref[:1]), ("first half", lambda ref: ref[: len(ref) // 2]),
                           ("all but the last character", lambda ref: ref[:-1])):  # fmt: skip
            answers = tuple(cut(ref) for ref in refs)
            shares = tuple(same(answer, ref) for answer, ref in zip(answers, refs, strict=True))
            found.append(Probe("malformed", f"malformed: the reference's {label}", answers, shares=shares))
    return found


def _hedges(refs: list[str], rng: random.Random) -> list[Probe]:
    """Each row's reference beside one or two other rows' (not the same answer), in a random order."""
    found = []
    for size in (2, 3):
        lists = []
        for index, ref in enumerate(refs):
            rest = (other for other in refs[index + 1 :] + refs[:index] if not same(other, ref))
            others = list(itertools.islice(rest, size - 1))
            listed = [ref, *others, *[ref] * (size - 1 - len(others))]  # too few others: the reference again
            rng.shuffle(listed)
            lists.append(tuple(listed))
        candidates = tuple(zip(*lists, strict=True))
        for separator in SEPARATORS[: 4 if size == 2 else 1]:
            answers = tuple(separator.join(listed) for listed in lists)
            found.append(Probe("hedge", f"{size} answers joined by {separator!r}", answers, candidates=candidates))
    return found


def search(rows: Sequence[dict[str, Any]], score: Scorer, seed: int = 0) -> list[Finding]:
    """The probes for ``rows`` that break their rule, each scored by ``score(answers, rows)`` (one score a row)."""
    findings, memo = [], {}

    def mean(answers: Sequence[str]) -> float:
        if answers not in memo:
            memo[answers] = sum(score(list(answers), rows)) / len(rows)
        return memo[answers]

    for probe in probes(rows, seed):
        if probe.kind == "malformed":
            scores = score(list(probe.answers), rows)
            earned = sum(value >= 1.0 and not share for value, share in zip(scores, probe.shares, strict=True))
            earned, allowed = earned / len(rows), TOLERANCE
        else:
            earned = mean(probe.answers)
            if probe.kind == "hedge":
                allowed = max(mean(candidate) for candidate in probe.candidates) + TOLERANCE
            else:
                allowed = probe.allowed + TOLERANCE if probe.kind == "constant" else 0.0
        if earned > allowed:
            findings.append(Finding(probe.label, round(earned, 4), round(allowed, 4)))
    return findings
