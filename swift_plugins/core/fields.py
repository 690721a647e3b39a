"""Settings as typed fields: each field of a settings dataclass carries its environment name, default, meaning,
values and check, so ``--help``, the refusals and the values read all come from one place (TRL's ``GRPOConfig``
keeps a setting's type, default and help in one field the same way).

>>> @dataclass(frozen=True)
... class Run:
...     steps: int = setting("STEPS", 16, "GRPO steps", whole(1))
...     loss: str = setting("LOSS", "grpo", "the loss", choice("grpo", "dapo"))
>>> read_settings(Run, {"STEPS": "8"})
Run(steps=8, loss='grpo')
>>> read_settings(Run, {"LOSS": "dpo"})
Traceback (most recent call last):
...
swift_plugins.core.errors.SettingError: LOSS='dpo' is not one of grpo, dapo
>>> print(settings_section(help_rows(Run)))
Settings (environment variables; default, then the values taken):
  STEPS                       GRPO steps; default 16; a positive integer
  LOSS                        the loss; default grpo; grpo or dapo
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import MISSING, Field, dataclass, field, fields
from typing import Any, TypeVar

from .errors import SettingError
from .settings import parse_bool, parse_int

__all__ = [
    "Check", "SettingHelp", "SettingMeta", "boolean", "choice", "help_rows", "number", "read_settings", "setting",
    "setting_fields", "settings_section", "shown", "whole",
]  # fmt: skip

T = TypeVar("T")


@dataclass(frozen=True)
class Check:
    """How a setting's text becomes its value: ``parse(name, text)`` (a :class:`SettingError` line when it cannot),
    and the values it takes, in words."""

    parse: Callable[[str, str], Any]
    allowed: str


def choice(*values: str) -> Check:
    """One of ``values``.

    >>> choice("token", "sequence").parse("LEVEL", "sequence")
    'sequence'
    """

    def parse(name: str, text: str) -> str:
        if text not in values:
            raise SettingError(f"{name}={text!r} is not one of {', '.join(values)}")
        return text

    return Check(parse, " or ".join(filter(None, (", ".join(values[:-1]), values[-1]))))


def number(low: float, high: float | None = None, *, low_open: bool = False) -> Check:
    """A number at least ``low`` (above it with ``low_open``), at most ``high``.

    >>> number(0, low_open=True).parse("EPSILON_HIGH", "0.28")
    0.28
    """
    above = f"above {low:g}" if low_open else f"at least {low:g}"
    words = above + (f", at most {high:g}" if high is not None else "")

    def parse(name: str, text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = float("nan")
        if not (value > low if low_open else value >= low) or (high is not None and value > high):
            raise SettingError(f"{name}={text!r} is not a number {words}")
        return value

    return Check(parse, f"a number {words}")


def whole(low: int = 0, high: int | None = None, allowed: str = "") -> Check:
    """An integer from ``low`` to ``high``; ``allowed``: the values in words, where they say more.

    >>> whole(1).parse("SFT_STEPS", "0")
    Traceback (most recent call last):
    ...
    swift_plugins.core.errors.SettingError: SFT_STEPS must be a positive integer, got '0'
    """
    words = {0: "a non-negative integer", 1: "a positive integer"}.get(low, f"an integer >= {low}")
    return Check(lambda name, text: parse_int(name, text, low, high),
                 allowed or words + (f" up to {high:,}" if high is not None else ""))  # fmt: skip


boolean = Check(parse_bool, "1/true/yes or 0/false/no")


@dataclass(frozen=True)
class SettingMeta:
    """What a field of a settings dataclass says of its setting; ``shown``: its default in ``--help``, where the
    field's default stands for another (None: decided elsewhere, as a scale's)."""

    env: str
    meaning: str
    check: Check
    shown: str | None = None


def setting(env: str, default: Any, meaning: str, check: Check, shown: str | None = None) -> Any:
    """A dataclass field read from the environment variable ``env`` (empty or unset: ``default``)."""
    return field(default=default, metadata={"setting": SettingMeta(env, meaning, check, shown)})


def setting_fields(cls: type) -> Iterator[tuple[Field, SettingMeta]]:
    """The fields of ``cls`` that are settings, in order, each with what it says of its setting."""
    for item in fields(cls):
        if "setting" in item.metadata:
            yield item, item.metadata["setting"]


def read_settings(cls: type[T], env: Mapping[str, str], **defaults: Any) -> T:
    """``cls`` with each setting read from ``env``; ``defaults`` replace the fields' own (a recipe's)."""
    values = dict(defaults)
    for item, meta in setting_fields(cls):
        text = env.get(meta.env, "").strip()
        if text:
            values[item.name] = meta.check.parse(meta.env, text)
    return cls(**values)


@dataclass(frozen=True)
class SettingHelp:
    """One row of the table: the setting's name, meaning, defaults (one a layout, when they differ) and values."""

    name: str
    meaning: str
    defaults: tuple[str, ...]
    allowed: str = ""


def shown(value: Any) -> str:
    """A default as ``--help`` shows it.

    >>> shown(True), shown(2.0), shown(None)
    ('1', '2', 'unset')
    """
    if value is None:
        return "unset"
    if isinstance(value, bool):
        return "1" if value else "0"
    return f"{value:g}" if isinstance(value, float) else str(value)


def help_rows(cls: type, **defaults: Any) -> list[SettingHelp]:
    """``--help`` rows of ``cls``'s settings; ``defaults`` replace the fields' own, as in :func:`read_settings`."""
    rows = []
    for item, meta in setting_fields(cls):
        default = defaults.get(item.name, item.default if item.default is not MISSING else "required")
        rows.append(SettingHelp(meta.env, meta.meaning, (meta.shown if meta.shown and item.name not in defaults
                                                         else shown(default),), meta.check.allowed))  # fmt: skip
    return rows


def settings_section(rows: Iterable[SettingHelp]) -> str:
    """The ``Settings`` part of a ``--help``: one wrapped entry a row, in order."""
    lines = ["Settings (environment variables; default, then the values taken):"]
    for row in rows:
        text = f"{row.meaning}; default {' / '.join(row.defaults)}"
        text += f"; {row.allowed}" if row.allowed else ""
        lines += textwrap.wrap(text, 116, initial_indent=f"  {row.name:<27} ", subsequent_indent=" " * 30,
                               break_on_hyphens=False)  # fmt: skip
    return "\n".join(lines)
