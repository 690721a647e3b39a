"""A recipe script's Python side: its usage text and one run of it, every refusal one line.

Each ``shell/<recipe>.sh`` is its usage text (the comment block after ``#!``) and one ``exec`` of Python;
:func:`run_script` prints that text for ``--help``, or runs the recipe under
:class:`~swift_plugins.core.processes.Children` (Ctrl-C and TERM stop every process it started) and turns a
:class:`~swift_plugins.core.errors.PluginError` into one ``<recipe>.sh: error: ...`` line and exit status 1.

>>> usage("countdown_9gpu")
'python -m swift_plugins.launch countdown_9gpu [swift rlhf flags...]: see README.md for the settings'
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from ..core.console import Console
from ..core.errors import PluginError
from ..core.processes import Children, Interrupted

__all__ = ["REPO", "Recipe", "run_script", "usage"]

REPO = Path(__file__).resolve().parents[2]
# (recipe, flags after the script, environment, repository, children) -> exit status
Recipe = Callable[[str, Sequence[str], Mapping[str, str], Path, Children], int]


def usage(recipe: str) -> str:
    """The comment block at the top of the recipe's entry script, after its #! line: its usage text."""
    script = REPO / "shell" / f"{recipe}.sh"
    if not script.is_file():  # a task without a script of its own
        return f"python -m swift_plugins.launch {recipe} [swift rlhf flags...]: see README.md for the settings"
    lines = []
    for line in script.read_text(encoding="utf-8").splitlines()[1:]:
        if not line.startswith("#"):
            break
        lines.append(line[2:] if line.startswith("# ") else line[1:])
    return "\n".join(lines)


def run_script(recipe: str, extra: Sequence[str], run: Recipe) -> int:
    """``shell/<recipe>.sh [extra...]``: its usage for ``--help``, else ``run`` with the environment's settings."""
    if list(extra[:1]) in (["-h"], ["--help"]):
        try:
            print(usage(recipe), flush=True)
        except BrokenPipeError:  # `--help | head`
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    with Children(Console(f"{recipe}.sh"), grace=10) as children:
        try:
            return run(recipe, extra, os.environ, REPO, children)
        except Interrupted as stop:
            children.console.note(f"received {stop}, stopping")
            return stop.status
        except PluginError as error:
            children.console.error(str(error))
            return 1
