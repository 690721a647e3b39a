"""The gym reward: reasoning-gym's ``score_answer`` on the last ``<answer>`` block, bounded in time, never raising.

Each completion's answer is scored by its row's dataset (``gym_dataset``, built with ``gym_config``) against the
row's entry, in the process pool of :mod:`.bounded` shared by every call (started on the first call; sized and
bounded by ``GYM_SCORE_WORKERS`` and ``GYM_SCORE_TIMEOUT``). A completion without an answer block scores 0 without
asking the scorer; an answer :mod:`.guard` keeps from a scorer that would run it as Python, a score that overran its
time bound or raised score 0, and each call that met some logs one warning counting them by kind. The format
reward beside it is countdown's ``think_answer_format`` (the same tag layout).

>>> row = {"gym_dataset": "basic_arithmetic", "gym_config": "{}", "question": "Calculate 2 + 3.", "answer": "5",
...        "metadata": "{}"}
>>> columns = {key: [value] * 3 for key, value in row.items()}
>>> gym_accuracy_reward(["<think>2+3</think><answer>5</answer>", "<answer>6</answer>", "5"], **columns)
[1.0, 0.0, 0.0]
"""

from __future__ import annotations

import atexit
import logging
import os
from collections import Counter
from collections.abc import Sequence
from typing import Any

from ..core.tags import completion_text, last_answer
from .bounded import Outcome, ScorePool, pool_settings, request
from .generator import check_version

__all__ = ["gym_accuracy_reward", "score_completions", "shared_pool"]

logger = logging.getLogger(__name__)
_POOL: ScorePool | None = None


def shared_pool() -> ScorePool:
    """The process pool of this process's rewards, started on first use and closed at exit; :class:`SettingError`
    for a bad ``GYM_SCORE_*`` setting or a reasoning-gym release other than the audited one."""
    global _POOL
    if _POOL is None:
        check_version()
        workers, timeout = pool_settings(dict(os.environ))
        _POOL = ScorePool(workers, timeout)
        atexit.register(_POOL.close)
    return _POOL


def score_completions(completions: Sequence[Any], rows: Sequence[dict[str, Any]]) -> list[Outcome]:
    """One outcome per completion against its row (the gym columns), exactly as the trainer's reward scores it."""
    answers = [last_answer(completion_text(completion)) for completion in completions]
    asked = [index for index, answer in enumerate(answers) if answer is not None]
    outcomes = [Outcome(0.0, 0.0)] * len(answers)
    if asked:
        scored = shared_pool().score([request(rows[i]["gym_dataset"], answers[i], rows[i]) for i in asked])
        for index, outcome in zip(asked, scored, strict=True):
            outcomes[index] = outcome
    failures = Counter(outcome.failure.partition(":")[0] for outcome in outcomes if outcome.failure)
    if failures:
        first = next(outcome.failure for outcome in outcomes if outcome.failure)
        counts = ", ".join(f"{count} {kind}" for kind, count in failures.items())
        logger.warning(f"external_gym: {counts} of {len(outcomes)} completions scored 0 (first: {first})")
    return outcomes


def gym_accuracy_reward(
    completions: Sequence[Any],
    gym_dataset: Sequence[str],
    gym_config: Sequence[str],
    question: Sequence[str],
    answer: Sequence[str | None],
    metadata: Sequence[str],
    **kwargs: Any,
) -> list[float]:
    """reasoning-gym's score of each completion's last answer against its row's entry; 0.0 without an answer."""
    columns = zip(gym_dataset, gym_config, question, answer, metadata, strict=True)
    keys = ("gym_dataset", "gym_config", "question", "answer", "metadata")
    rows = [dict(zip(keys, values, strict=True)) for values in columns]
    return [outcome.score for outcome in score_completions(completions, rows)]
