"""``python -m swift_plugins.launch RECIPE [swift rlhf flags...]``: the GRPO launcher behind ``shell/RECIPE.sh``.

Settings come from the environment (see each script's ``--help``); a refused setting is one
``<script>: error: ...`` line and exit status 1, with nothing started and nothing written.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from ..core.errors import PluginError
from .console import Console
from .processes import Children, Interrupted
from .recipes import launch
from .settings import RECIPES

REPO = Path(__file__).resolve().parents[2]


def usage(script: Path) -> str:
    """The comment block at the top of an entry script, after its #! line: its usage text."""
    lines = []
    for line in script.read_text(encoding="utf-8").splitlines()[1:]:
        if not line.startswith("#"):
            break
        lines.append(line[2:] if line.startswith("# ") else line[1:])
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in RECIPES:
        print(f"usage: python -m swift_plugins.launch {{{','.join(RECIPES)}}} [swift rlhf flags...]", file=sys.stderr)
        return 2
    recipe, extra = argv[0], argv[1:]
    if extra[:1] in (["-h"], ["--help"]):
        try:
            print(usage(REPO / "shell" / f"{recipe}.sh"), flush=True)
        except BrokenPipeError:  # `--help | head`
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    with Children(Console(f"{recipe}.sh"), grace=10) as children:
        try:
            return launch(recipe, extra, os.environ, REPO, children)
        except Interrupted as stop:
            children.console.note(f"received {stop}, stopping")
            return stop.status
        except PluginError as error:
            children.console.error(str(error))
            return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
