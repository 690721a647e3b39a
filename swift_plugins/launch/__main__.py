"""``python -m swift_plugins.launch RECIPE [swift rlhf flags...]``: the launcher behind ``shell/RECIPE.sh``.

Settings come from the environment (see each script's ``--help``); a refused setting is one
``<script>: error: ...`` line and exit status 1, with nothing started and nothing written.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from ..core.console import Console
from ..core.errors import PluginError
from ..core.processes import Children, Interrupted
from .demo import demo
from .recipes import launch

REPO = Path(__file__).resolve().parents[2]
PIPELINES = {"countdown_demo": demo}  # recipes that run stages rather than a layout's processes


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


def main(argv: list[str]) -> int:
    if not argv:
        print("usage: python -m swift_plugins.launch RECIPE [swift rlhf flags...]", file=sys.stderr)
        return 2
    recipe, extra = argv[0], argv[1:]
    if extra[:1] in (["-h"], ["--help"]):
        try:
            print(usage(recipe), flush=True)
        except BrokenPipeError:  # `--help | head`
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    run = PIPELINES.get(recipe, launch)
    with Children(Console(f"{recipe}.sh"), grace=10) as children:
        try:
            return run(recipe, extra, os.environ, REPO, children)
        except Interrupted as stop:
            children.console.note(f"received {stop}, stopping")
            return stop.status
        except PluginError as error:
            children.console.error(str(error))
            return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
