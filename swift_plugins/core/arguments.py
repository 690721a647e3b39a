"""A command line judged by the argparse parser of the program it is for, without running the program.

:func:`refusal` parses ``argv`` as the program would (abbreviations refused: a launcher that sets each flag once
must see its full name) and returns the first problem as one line naming the closest flag, else None.

>>> import argparse
>>> parser = argparse.ArgumentParser()
>>> _ = parser.add_argument("--learning_rate", type=float)
>>> _ = parser.add_argument("--max_steps", type=int)
>>> refusal(parser, ["--learning_rat", "1e-6"], "swift rlhf")
'swift rlhf has no flag --learning_rat; the closest is --learning_rate'
>>> refusal(parser, ["--max_steps", "abc"], "swift rlhf")
"swift rlhf refuses --max_steps abc: invalid int value: 'abc'"
>>> refusal(parser, ["--max_steps", "5"], "swift rlhf") is None
True
"""

from __future__ import annotations

import argparse
import copy
import difflib
from collections.abc import Sequence

__all__ = ["refusal"]


class _Refused(Exception):
    """argparse's error message, raised instead of its exit."""


def refusal(parser: argparse.ArgumentParser, argv: Sequence[str], program: str) -> str | None:
    """The first word of ``argv`` that ``parser`` (the argument parser of ``program``) refuses, as one line."""
    strict = copy.copy(parser)  # the caller's parser keeps its settings
    strict.allow_abbrev = False

    def error(message: str) -> None:
        raise _Refused(message)

    strict.error = error  # type: ignore[method-assign]
    words = list(argv)
    try:
        _, unknown = strict.parse_known_args(words)
    except _Refused as refused:
        return _bad_value(str(refused), words, program)
    if not unknown:
        return None
    word = unknown[0]
    if not word.startswith("-"):
        return f"{program} takes no value {word!r} there (one value too many after the flag before it?)"
    name = word.split("=", 1)[0]
    options = [option for action in parser._actions for option in action.option_strings]
    closest = difflib.get_close_matches(name, options, n=1, cutoff=0.6)
    return f"{program} has no flag {name}" + (f"; the closest is {closest[0]}" if closest else "")


def _bad_value(message: str, words: list[str], program: str) -> str:
    # argparse says "argument --max_steps: invalid int value: 'abc'"
    head, _, reason = message.partition(": ")
    flag = head.removeprefix("argument ").split("/")[0]
    if not reason or not flag.startswith("-"):
        return f"{program} refuses the arguments: {message}"
    given = next((words[i + 1] for i, word in enumerate(words[:-1]) if word == flag), None)
    return f"{program} refuses {flag}{f' {given}' if given is not None else ''}: {reason}"
