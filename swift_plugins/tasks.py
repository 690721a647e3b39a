"""The package's tasks, by name: what the plugin, the command line, ``evaluate``, the launcher and the demo look up.

A task is a subpackage of ``swift_plugins`` whose ``__init__`` exports ``SPEC``, a
:class:`~swift_plugins.core.task.TaskSpec`: its rows (a :class:`~swift_plugins.core.task.Task`), its rewards, its
scoring module, its GRPO recipe (a :class:`~swift_plugins.core.task.Preset`), its commands and its demo. Adding a
task is that subpackage and one line in :data:`NAMES`. A family of tasks is one subpackage whose
``spec(parameter)`` gives the task ``<family>:<parameter>`` (:data:`FAMILIES`: ``gym:basic_arithmetic`` is
reasoning-gym's dataset of that name) and whose ``SPEC`` is what its tasks share. Nothing here imports a task until
it is asked for, and a task's ``__init__`` imports only the standard library, so the launcher's DRY_RUN needs
nothing else (a family may need its own library to check a name).

>>> task_named("gsm8k").preset.reference_completions
84
>>> task_named("chess")
Traceback (most recent call last):
...
swift_plugins.core.errors.SettingError: TASK='chess' is not a task of this package: use countdown or gsm8k or gym:<name>
>>> task_named("gsm8j")
Traceback (most recent call last):
...
swift_plugins.core.errors.SettingError: TASK='gsm8j' is not a task of this package: closest gsm8k
"""

from __future__ import annotations

import difflib
import importlib
from collections.abc import Callable

from .core.errors import SettingError
from .core.task import TaskSpec

__all__ = ["FAMILIES", "NAMES", "all_tasks", "registered", "task_named", "task_names"]

NAMES = (
    "countdown",
    "gsm8k",
)
FAMILIES = ("gym",)  # subpackages serving TASK=<family>:<parameter>, registered with swift after NAMES


def task_named(name: str) -> TaskSpec:
    """The task registered as ``name`` (or ``<family>:<parameter>``), or :class:`SettingError` naming the closest."""
    family, sep, parameter = name.partition(":")
    if sep and family in FAMILIES:
        return importlib.import_module(f"{__package__}.{family}").spec(parameter)
    if name not in NAMES:
        closest = difflib.get_close_matches(name, NAMES, n=2)
        known = " or ".join([*NAMES, *(f"{family}:<name>" for family in FAMILIES)])
        hint = f"closest {' or '.join(closest)}" if closest else f"use {known}"
        raise SettingError(f"TASK={name!r} is not a task of this package: {hint}")
    return importlib.import_module(f"{__package__}.{name}").SPEC


def all_tasks() -> list[TaskSpec]:
    """Every registered task, in :data:`NAMES` order (a family's tasks are made on demand: not listed)."""
    return [task_named(name) for name in NAMES]


def registered() -> list[TaskSpec]:
    """Every task and what each family's tasks share, in the order the plugin registers them with ms-swift (a
    family last: it may claim the files of a task too, and the later registration of a file wins)."""
    return [*all_tasks(), *(importlib.import_module(f"{__package__}.{family}").SPEC for family in FAMILIES)]


def task_names(where: Callable[[TaskSpec], bool] | None = None) -> str:
    """The tasks, and each family as ``<family>:<name>``, that ``where`` keeps (None: all, without importing a
    family: the launcher's DRY_RUN needs the standard library alone), in words.

    >>> task_names()
    'countdown, gsm8k or gym:<name>'
    >>> task_names(lambda task: task.demo is not None)
    'countdown or gym:<name>'
    """
    names = [task.name for task in all_tasks() if where is None or where(task)]
    names += [f"{family}:<name>" for family in FAMILIES
              if where is None or where(importlib.import_module(f"{__package__}.{family}").SPEC)]  # fmt: skip
    return " or ".join(filter(None, (", ".join(names[:-1]), names[-1])))
