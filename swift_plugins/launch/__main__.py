"""``python -m swift_plugins.launch RECIPE [swift rlhf flags...]``: the launcher behind ``shell/RECIPE.sh``.

Settings come from the environment (each recipe's ``--help`` lists them); a refused setting is one
``<script>: error: ...`` line and exit status 1, with nothing started and nothing written. Without a recipe, or
with ``--help``, it lists the recipes.
"""

from __future__ import annotations

import sys

from .catalog import recipe_names
from .recipes import launch
from .script import recipe_help, run_script, usage

__all__ = ["main"]

USAGE = "usage: python -m swift_plugins.launch RECIPE [swift rlhf flags...]   (RECIPE --help: its settings)"


def recipes() -> str:
    """The usage line and every recipe with the first line of its usage."""
    lines = [USAGE, "", "recipes:"]
    for name in recipe_names():
        lines.append(f"  {name:<22}{summary(usage(name))}")
    return "\n".join(lines)


def summary(text: str) -> str:
    """The first sentence of a usage text's first paragraph, without the script's name.

    >>> summary("x.sh: the plumbing of GRPO on a CPU, offline, in a\\nfew minutes: a smoke run.\\n\\nUsage: ...")
    'the plumbing of GRPO on a CPU, offline, in a few minutes: a smoke run.'
    """
    paragraph = " ".join(text.split("\n\n")[0].split())
    return paragraph.split(": ", 1)[-1].split(". ")[0]


def main(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help"):
        print(recipes(), file=sys.stdout if argv else sys.stderr)
        return 0 if argv else 2
    return run_script(argv[0], argv[1:], launch, recipe_help)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
