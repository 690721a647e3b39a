"""ms-swift 4.x adapters of the gym task: the reward class and the registration of local gym files.

The reward class is a thin shell over :func:`.rewards.gym_accuracy_reward`; swift logs it as
``rewards/GymAccuracy/mean``. The format reward is countdown's ``think_answer_format``, registered by countdown's
adapter. Gym data has no hub id: its files are written by ``python -m swift_plugins gym generate``.
"""

from __future__ import annotations

import os

from swift.rewards import orms

from ..integration.swift_adapter import RewardORM, TaskPreprocessor, register_task_files
from .bounded import pool_settings
from .data import GYM
from .rewards import gym_accuracy_reward

__all__ = ["REWARDS", "GymAccuracy", "GymPreprocessor", "register", "register_files"]


class GymAccuracy(RewardORM):
    """``external_gym``: reasoning-gym's ``score_answer`` on the last answer block, bounded in time."""

    reward = staticmethod(gym_accuracy_reward)


REWARDS = {"external_gym": GymAccuracy}


class GymPreprocessor(TaskPreprocessor):
    """Turns gym rows into the tagged prompt, keeping the entry's columns for the reward."""

    task = GYM


def register_files(values: list[str]) -> list[str]:
    """Load the local gym files and folders among ``values`` with :class:`GymPreprocessor`.

    A value that looks like a local path but does not exist raises ``DataError``. Registered after GSM8K's,
    which also claims files with ``question`` and ``answer`` columns: the later registration of a path wins.
    """
    return register_task_files(GymPreprocessor, values)


def register() -> None:
    """Register the reward in ``orms``; a bad ``GYM_SCORE_*`` setting fails here, before training starts."""
    pool_settings(dict(os.environ))
    orms.update(REWARDS)
