"""The package's tasks, by name: what ``plugin.py``, ``evaluate`` and the launcher look up.

A task is a subpackage of ``swift_plugins`` whose ``__init__`` exports ``SPEC``, a
:class:`~swift_plugins.core.task.TaskSpec`: its rows (a :class:`~swift_plugins.core.task.Task`), its scoring and
ms-swift adapter modules, its GRPO recipe (a :class:`~swift_plugins.core.task.Preset`) and the hint the launcher
prints when a run has no held-out file. Adding a task is that subpackage and one line in :data:`NAMES`. A family of
tasks is one subpackage whose ``spec(parameter)`` gives the task ``<family>:<parameter>`` (:data:`FAMILIES`:
``gym:basic_arithmetic`` is reasoning-gym's dataset of that name). Nothing here imports a task until it is asked
for, and a task's ``__init__`` imports only the standard library, so the launcher's DRY_RUN needs nothing else (a
family may need its own library to check a name).

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
from types import ModuleType

from .core.errors import SettingError
from .core.task import TaskSpec

__all__ = ["FAMILIES", "NAMES", "all_tasks", "task_adapters", "task_named"]

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


def task_adapters() -> list[ModuleType]:
    """The ms-swift adapter module of every task and family, in the order ``plugin.py`` registers them."""
    families = [importlib.import_module(f"{__package__}.{family}.swift_adapter") for family in FAMILIES]
    return [task.adapter_module() for task in all_tasks()] + families
