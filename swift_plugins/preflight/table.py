"""A settings table as the ``Settings`` part of a ``--help``: each setting, what it means, its default and the values
it takes, wrapped to the width of a terminal.

>>> print(settings_section([SettingHelp("DRY_RUN", "print the commands; start nothing", ("0",), "1/true/yes or 0/no")]))
Settings (environment variables; default, then the values taken):
  DRY_RUN                     print the commands; start nothing; default 0; 1/true/yes or 0/no
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = ["SettingHelp", "settings_section"]


@dataclass(frozen=True)
class SettingHelp:
    """One row of the table: the setting's name, meaning, defaults (one a layout, when they differ) and values."""

    name: str
    meaning: str
    defaults: tuple[str, ...]
    allowed: str = ""


def settings_section(rows: Iterable[SettingHelp]) -> str:
    """The ``Settings`` part of a ``--help``: one wrapped entry a row, in order."""
    lines = ["Settings (environment variables; default, then the values taken):"]
    for row in rows:
        text = f"{row.meaning}; default {' / '.join(row.defaults)}"
        text += f"; {row.allowed}" if row.allowed else ""
        lines += textwrap.wrap(text, 116, initial_indent=f"  {row.name:<28}", subsequent_indent=" " * 30,
                               break_on_hyphens=False)  # fmt: skip
    return "\n".join(lines)
