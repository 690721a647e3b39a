"""A recipe script's Python side: its usage text and one run of it, every refusal one line.

Each ``shell/<recipe>.sh`` is its usage text (the comment block after ``#!``) and one ``exec`` of Python;
:func:`run_script` prints that text for ``--help`` (the launcher's recipes add their settings:
:func:`recipe_help`), or runs the recipe under :class:`~swift_plugins.core.processes.Children` (Ctrl-C and TERM
stop every process it started) and turns a :class:`~swift_plugins.core.errors.PluginError` into one
``<script>: error: ...`` line and exit status 1. A recipe without a script of its own (``gym_1gpu``) is named as
it is run: ``python -m swift_plugins.launch gym_1gpu``.

>>> entry_words("gym_1gpu"), script_name("gym_1gpu")
(['python', '-m', 'swift_plugins.launch', 'gym_1gpu'], 'gym_1gpu')
>>> usage("gym_1gpu").splitlines()[0]
'gym_1gpu: GRPO on a reasoning-gym task (TASK=gym:<name>) with the layout of shell/countdown_1gpu.sh'
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from ..core.console import Console
from ..core.errors import PluginError
from ..core.processes import Children, Interrupted
from .catalog import recipe_names, settings_help
from .layouts import recipe_named

__all__ = ["REPO", "Recipe", "entry_words", "recipe_help", "run_script", "script_name", "usage"]

REPO = Path(__file__).resolve().parents[2]
# (recipe, flags after the script, environment, repository, children) -> exit status
Recipe = Callable[[str, Sequence[str], Mapping[str, str], Path, Children], int]


def _script(recipe: str) -> Path:
    return REPO / "shell" / f"{recipe}.sh"


def script_name(recipe: str) -> str:
    """What messages call the recipe: its script's name, else the recipe's (``gym_1gpu``: no script of its own)."""
    return _script(recipe).name if _script(recipe).is_file() else recipe


def entry_words(recipe: str) -> list[str]:
    """The command that runs ``recipe`` (settings before it, flags after it)."""
    script = _script(recipe)
    return ["bash", str(script)] if script.is_file() else ["python", "-m", "swift_plugins.launch", recipe]


def usage(recipe: str) -> str:
    """The comment block at the top of the recipe's entry script, after its #! line: its usage text; a recipe of a
    family of tasks (``gym_1gpu``) says which script's layout it runs."""
    script = _script(recipe)
    if not script.is_file():
        recipe_named(recipe)  # an unknown recipe: the refusal that names the recipes
        family, _, kind = recipe.partition("_")
        return (f"{recipe}: GRPO on a reasoning-gym task (TASK={family}:<name>) with the layout of "
                f"shell/countdown_{kind}.sh\n\nUsage:\n  TASK={family}:<name> python -m swift_plugins.launch {recipe} "
                "[extra swift rlhf flags...]\n  (python -m swift_plugins gym list: the names; the layout: "
                f"bash shell/countdown_{kind}.sh --help)")  # fmt: skip
    lines = []
    for line in script.read_text(encoding="utf-8").splitlines()[1:]:
        if not line.startswith("#"):
            break
        lines.append(line[2:] if line.startswith("# ") else line[1:])
    return "\n".join(lines)


def recipe_help(recipe: str) -> str:
    """``--help`` of a launcher recipe: its usage, then every setting it reads (:mod:`.catalog`); of another
    script (the demo's), its usage."""
    if recipe not in recipe_names():
        return usage(recipe)
    return f"{usage(recipe).rstrip()}\n\n{settings_help(recipe)}"


def run_script(recipe: str, extra: Sequence[str], run: Recipe, describe: Callable[[str], str] = usage) -> int:
    """``shell/<recipe>.sh [extra...]``: ``describe(recipe)`` for ``--help``, else ``run`` with the environment's
    settings."""
    if list(extra[:1]) in (["-h"], ["--help"]):
        try:
            print(describe(recipe), flush=True)
        except BrokenPipeError:  # `--help | head`
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except PluginError as error:  # no such recipe
            Console(script_name(recipe)).error(str(error))
            return 1
        return 0
    with Children(Console(script_name(recipe)), grace=10) as children:
        try:
            return run(recipe, extra, os.environ, REPO, children)
        except Interrupted as stop:
            children.console.note(f"received {stop}, stopping")
            return stop.status
        except PluginError as error:
            children.console.error(str(error))
            return 1
