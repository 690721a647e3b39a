"""swift command lines judged by the installed ms-swift's own argument classes: no model, no GPU, nothing run.

``python -m swift_plugins.integration.swift_args JSON`` reads ``[[command, argv], ...]`` (command: rlhf,
rollout, sft, infer) and prints, as JSON on its last line, ``{"swift": version, "refusals": [line or null, ...]}``,
or ``{"unavailable": reason}`` when ms-swift's argument classes do not import. The parser is the one
``swift.utils.parse_args`` builds (HfArgumentParser over the class); only argparse runs, never the class's
``__post_init__`` (which would load the model's config).

>>> ARGUMENTS["rlhf"]
'RLHFArguments'
"""

from __future__ import annotations

import json
import sys

from ..core.arguments import refusal

__all__ = ["ARGUMENTS", "main", "refusals"]

ARGUMENTS = {"rlhf": "RLHFArguments", "rollout": "RolloutArguments", "sft": "SftArguments", "infer": "InferArguments"}


def refusals(commands: list[tuple[str, list[str]]]) -> list[str | None]:
    """For each ``(command, argv)``: the first word ms-swift's ``swift <command>`` refuses, as one line, or None."""
    import swift.arguments
    from swift.utils.utils import _patch_get_type_hints
    from transformers import HfArgumentParser

    found = []
    for command, argv in commands:
        with _patch_get_type_hints():
            parser = HfArgumentParser([getattr(swift.arguments, ARGUMENTS[command])])
        found.append(refusal(parser, argv, f"swift {command}"))
    return found


def main(payload: str) -> dict:
    """The report the module prints for ``payload`` (JSON ``[[command, argv], ...]``): the refusals, or why none."""
    try:
        import swift
        import swift.arguments
    except Exception as error:  # no ms-swift, or a broken one: the caller says what was not checked
        return {"unavailable": f"{type(error).__name__}: {(str(error).strip().splitlines() or [''])[0]}"}
    return {"swift": swift.__version__, "refusals": refusals(json.loads(payload))}


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1])))
