"""ms-swift 4.x adapters of Countdown: the reward classes and the dataset registration.

Each reward class is a thin shell over a pure function of :mod:`.rewards`; swift logs it as
``rewards/<ClassName>/mean``. The preprocessor keeps the name of the ms-swift Countdown document.
"""

from __future__ import annotations

from swift.rewards import orms

from ..integration.swift_adapter import RewardORM, TaskPreprocessor, register_task, register_task_files
from .data import COUNTDOWN
from .rewards import countdown_accuracy_reward, countdown_shaped_reward

__all__ = [
    "REWARDS",
    "CountdownAccuracy",
    "CountdownPreprocessor",
    "CountdownShaped",
    "register",
    "register_files",
]


class CountdownAccuracy(RewardORM):
    """``external_countdown``: 1.0 iff the last answer uses exactly ``nums`` and equals ``target``."""

    reward = staticmethod(countdown_accuracy_reward)


class CountdownShaped(RewardORM):
    """``countdown_shaped``: the accuracy reward plus 0.1 for a legal equation over the right numbers."""

    reward = staticmethod(countdown_shaped_reward)


REWARDS = {
    "external_countdown": CountdownAccuracy,
    "countdown_shaped": CountdownShaped,
}


class CountdownPreprocessor(TaskPreprocessor):
    """Turns ``nums``/``target`` rows into the Countdown user prompt, keeping both columns as ints."""

    task = COUNTDOWN


def register_files(values: list[str]) -> list[str]:
    """Load the local Countdown files and folders among ``values`` with :class:`CountdownPreprocessor`.

    A value that looks like a local path but does not exist raises ``DataError``. Local files
    without ``nums``/``target`` columns are left to swift (or another task). Returns the paths registered.
    """
    return register_task_files(CountdownPreprocessor, values)


def register() -> None:
    """Register the rewards in ``orms`` and the preprocessor for the hub ids of the Countdown data."""
    orms.update(REWARDS)
    register_task(CountdownPreprocessor)
