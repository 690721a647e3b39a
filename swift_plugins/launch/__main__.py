"""``python -m swift_plugins.launch RECIPE [swift rlhf flags...]``: the launcher behind ``shell/RECIPE.sh``.

Settings come from the environment (see each script's ``--help``); a refused setting is one
``<script>: error: ...`` line and exit status 1, with nothing started and nothing written.
"""

from __future__ import annotations

import sys

from .recipes import launch
from .script import run_script

__all__ = ["main"]


def main(argv: list[str]) -> int:
    if not argv:
        print("usage: python -m swift_plugins.launch RECIPE [swift rlhf flags...]", file=sys.stderr)
        return 2
    return run_script(argv[0], argv[1:], launch)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
