"""A watch over ms-swift GRPO runs: rules that tell from ``logging.jsonl`` that a run is failing, and the
reading of that log while it grows. Standard library only (the launcher imports it under any interpreter).

:mod:`.rules` judges step records (:class:`Watch`, :func:`judge`, :class:`Thresholds`, :class:`Verdict`),
:mod:`.log` reads them (:func:`find_log`, :func:`read_steps`, :class:`LogTail`), :mod:`.cli` is
``python -m swift_plugins watch``. See docs/watch.md.

>>> [(verdict.rule, verdict.fatal) for verdict in judge({"step": s, "loss": float("nan")} for s in range(1, 5))]
[('non-finite', False), ('non-finite', True)]
"""

from .log import LogTail, find_log, is_grpo, read_steps
from .rules import RULES, Thresholds, Verdict, Watch, judge

__all__ = ["RULES", "LogTail", "Thresholds", "Verdict", "Watch", "find_log", "is_grpo", "judge", "read_steps"]
