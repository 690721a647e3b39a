"""GRPO's objective as settings: the loss, clip-higher, the importance ratio's level, the reward scaling, the
overlong filter and the correction of vLLM's sampling against the trainer's log-probabilities.

One typed field a setting (:mod:`.fields`), read once from the environment; :meth:`Objective.swift_args` writes
ms-swift 4.6's flags. With one update per generated batch (every recipe here: ``--num_iterations 1``, a step's
micro-batches all from one generation), the policy that generated is the one that trains: the importance ratio is
1, so clip ranges (``EPSILON_HIGH``, GSPO's) never bind, and the loss types differ in how they weigh tokens and
completions. The sampler is another matter: vLLM's log-probabilities differ from the trainer's (kernels,
precision), and ``ROLLOUT_CORRECTION`` weighs each token by the trainer's probability over vLLM's, truncated (or
masked) above ``ROLLOUT_CORRECTION_THRESHOLD``. It is off by default: on the CPU demo it trained to lower held-out
accuracy on each of three tasks (docs/measurements.md); off, the gap is still logged for the watch.

>>> Objective().swift_args()  # doctest: +NORMALIZE_WHITESPACE
('--loss_type', 'grpo', '--importance_sampling_level', 'token', '--scale_rewards', 'group', '--overlong_filter',
 'false', '--log_rollout_offpolicy_metrics', 'true')
>>> from swift_plugins.core.fields import read_settings
>>> read_settings(Objective, {"LOSS_TYPE": "dapo", "EPSILON_HIGH": "0.28"}).swift_args()[:2]
('--loss_type', 'dapo')
"""

from __future__ import annotations

from dataclasses import dataclass

from .fields import boolean, choice, number, setting

__all__ = ["CORRECTIONS", "LOSS_TYPES", "Objective"]

# ms-swift 4.6's GRPO losses (swift/rlhf_trainers/grpo_trainer.py); an unknown one is refused only at the first loss
LOSS_TYPES = ("grpo", "bnpo", "dr_grpo", "dapo", "cispo", "sapo", "real", "fipo")
CORRECTIONS = ("off", "token_truncate", "token_mask", "sequence_truncate", "sequence_mask")


@dataclass(frozen=True)
class Objective:
    """What GRPO optimises, and how it weighs vLLM's samples."""

    loss_type: str = setting(
        "LOSS_TYPE", "grpo", "GRPO's loss: grpo averages each completion's tokens, then the completions; dapo and "
        "cispo average every token of the batch; dr_grpo divides by a fixed length. Measured on the CPU demo "
        "(docs/recipes.md): grpo ahead of dapo, dr_grpo and cispo; GSPO (IMPORTANCE_SAMPLING_LEVEL=sequence, the "
        "demo's) within noise of grpo",
        choice(*LOSS_TYPES))  # fmt: skip
    epsilon_high: float | None = setting(
        "EPSILON_HIGH", None, "clip-higher: the importance ratio is clipped at 1 + EPSILON_HIGH (DAPO: 0.28); with "
        "LOSS_TYPE=cispo, the most a token's weight may be (ms-swift's docs: 5). Unset: ms-swift's, the lower "
        "clip 0.2", number(0, low_open=True))  # fmt: skip
    importance_sampling_level: str = setting(
        "IMPORTANCE_SAMPLING_LEVEL", "token", "the importance ratio per token, or one a completion (sequence: GSPO; "
        "sequence_token: GSPO-token)", choice("token", "sequence", "sequence_token"))  # fmt: skip
    scale_rewards: str = setting(
        "SCALE_REWARDS", "group", "advantages divided by the reward spread of the group, of the batch, or not at "
        "all (none: Dr. GRPO), or each reward normalised alone (gdpo)", choice("group", "batch", "none", "gdpo"))
    overlong_filter: bool = setting(
        "OVERLONG_FILTER", False, "truncated completions leave the loss (DAPO's overlong filter)", boolean)
    rollout_correction: str = setting(
        "ROLLOUT_CORRECTION", "off", "weigh each token (or completion) vLLM sampled by the trainer's probability "
        "over vLLM's, truncated or masked above ROLLOUT_CORRECTION_THRESHOLD (TRL's default: token_truncate; measured "
        "on the CPU demo: docs/recipes.md); off: no weight, the gap still logged", choice(*CORRECTIONS))  # fmt: skip
    rollout_correction_threshold: float = setting(
        "ROLLOUT_CORRECTION_THRESHOLD", 2.0, "the largest weight ROLLOUT_CORRECTION keeps", number(1))

    def swift_args(self) -> tuple[str, ...]:
        """The ``swift rlhf`` flags (checked with the trainer's others by
        :func:`~swift_plugins.preflight.trainer.check_objective`); without the correction, the gap between vLLM and
        the trainer is logged (``rollout_correction/*``), which the watch reads."""
        correction = (("--rollout_importance_sampling_mode", self.rollout_correction,
                       "--rollout_importance_sampling_threshold", f"{self.rollout_correction_threshold:g}")
                      if self.rollout_correction != "off" else ("--log_rollout_offpolicy_metrics", "true"))  # fmt: skip
        return (
            "--loss_type", self.loss_type,
            "--importance_sampling_level", self.importance_sampling_level,
            "--scale_rewards", self.scale_rewards,
            "--overlong_filter", "true" if self.overlong_filter else "false",
            *(("--epsilon_high", f"{self.epsilon_high:g}") if self.epsilon_high is not None else ()),
            *correction,
        )  # fmt: skip
