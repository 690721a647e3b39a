"""ms-swift 4.6's GRPO without the old policy's forward pass where the old policy is the current one.

For every batch it trains on, ms-swift 4.6 computes the old policy's per-token log-probabilities in a forward pass
without gradients (``GRPOTrainer._prepare_batch_inputs``), whatever the settings. When each generation is trained
on once (``--num_iterations 1`` and the gradient accumulation a multiple of the steps per generation: swift's own
``old_policy()`` is False), the old policy *is* the current one: the loss's ratio is 1 and its gradient the
advantage times the log-probability's, which swift's loss computes itself when those log-probabilities are absent
(``per_token_logps.detach()``), as TRL's ``GRPOTrainer`` skips the same forward. :func:`install` skips it then, and
only where nothing else reads them (:func:`old_policy_is_current`). Without it the CPU demo's GRPO step took 41
seconds, against 45 (``benchmarks/bench_rollout_cpu.py``). ``SWIFT_PLUGINS_OLD_POLICY_FORWARD=1`` keeps it.

>>> from types import SimpleNamespace
>>> trainer = SimpleNamespace(old_policy=lambda: False, beta=0.0, _has_teacher_explicit=lambda: False,
...     use_teacher_api=False, use_liger_loss=False)
>>> row = SimpleNamespace(build_teacher_view=lambda: False)  # swift's GRPOSample: True where it has a teacher's view
>>> teacher_row = SimpleNamespace(build_teacher_view=lambda: True)
>>> old_policy_is_current(trainer, [row]), old_policy_is_current(trainer, [row, teacher_row])
(True, False)
>>> old_policy_is_current(SimpleNamespace(**{**vars(trainer), "beta": 0.04}), [row])
False
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Sequence
from pathlib import PurePath
from typing import Any

__all__ = ["KEEP", "SKIPPED", "install", "is_rlhf_process", "old_policy_is_current"]

KEEP = "SWIFT_PLUGINS_OLD_POLICY_FORWARD"  # 1: ms-swift computes the old policy's log-probabilities as it would

SKIPPED = "one update per generation: the old policy is the current one, and its forward pass is skipped"


def old_policy_is_current(trainer: Any, samples: list[Any]) -> bool:
    """Whether ``trainer``'s old-policy log-probabilities for ``samples`` are the current policy's and nothing but
    the loss reads them: one update per generation, β = 0 (the reference model's forward shares the same call), no
    teacher and no sample with a teacher's view (distillation reads them: swift's own ``build_teacher_view``, which
    swift calls on every sample next), no Liger loss (it takes them as given). The correction of vLLM's sampling and
    the off-policy metrics read them in the loss, where swift takes the current policy's when they are absent: the
    same values. False for a trainer or sample that lacks any of these attributes (another ms-swift)."""
    try:
        return not (
            trainer.old_policy() or trainer.beta != 0.0 or trainer._has_teacher_explicit() or trainer.use_teacher_api
            or trainer.use_liger_loss or any([sample.build_teacher_view() for sample in samples])
        )  # fmt: skip
    except AttributeError:
        return False


def is_rlhf_process(argv: Sequence[str]) -> bool:
    """Whether ``argv`` is a ``swift rlhf`` process's: swift runs ``swift/cli/rlhf.py`` (under torchrun too).

    >>> is_rlhf_process(["/venv/site-packages/swift/cli/rlhf.py", "--rlhf_type", "grpo"])
    True
    >>> is_rlhf_process(["/venv/site-packages/swift/cli/infer.py"]), is_rlhf_process([])
    (False, False)
    """
    return bool(argv) and PurePath(argv[0]).parts[-3:] == ("swift", "cli", "rlhf.py")


def install(argv: Sequence[str] | None = None) -> bool:
    """Skip the old policy's forward in ms-swift's GRPO trainer wherever :func:`old_policy_is_current`, unless
    :data:`KEEP` is ``1``; return whether the trainer is patched (it is once, whatever the number of calls).

    Only in a ``swift rlhf`` process, which imports the trainer anyway: the other swift commands that load the plugin
    (``infer``, ``rollout``) import nothing more. A trainer that does not import is left to swift to report.
    ``argv``: the process's, ``sys.argv`` by default."""
    if os.environ.get(KEEP) == "1" or not is_rlhf_process(sys.argv if argv is None else argv):
        return False
    import torch
    from swift.utils import get_logger

    try:
        from swift.rlhf_trainers.grpo_trainer import GRPOTrainer
    except (ImportError, RuntimeError):  # transformers' lazy modules raise RuntimeError for a failed import
        return False

    prepare = GRPOTrainer._prepare_batch_inputs
    if getattr(prepare, "skips_the_current_old_policy", False):
        return True
    log_probs = GRPOTrainer._get_per_token_logps_and_entropies

    @functools.wraps(prepare)
    def prepare_batch_inputs(self, samples, *args, **kwargs):
        self._old_policy_is_current = old_policy_is_current(self, samples)
        if self._old_policy_is_current and not getattr(self, "_said_old_policy_is_current", False):
            get_logger().info(SKIPPED)
            self._said_old_policy_is_current = True
        try:
            return prepare(self, samples, *args, **kwargs)
        finally:
            self._old_policy_is_current = False

    @functools.wraps(log_probs)
    def per_token_log_probs(self, *args, **kwargs):
        # Inside prepare_batch_inputs with β = 0 and no teacher, the one call without gradients is the old policy's.
        if getattr(self, "_old_policy_is_current", False) and not torch.is_grad_enabled():
            return None, None
        return log_probs(self, *args, **kwargs)

    prepare_batch_inputs.skips_the_current_old_policy = True
    GRPOTrainer._prepare_batch_inputs = prepare_batch_inputs
    GRPOTrainer._get_per_token_logps_and_entropies = per_token_log_probs
    return True
