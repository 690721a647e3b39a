"""A dataset's settings, typed by its config's fields: ``key=value`` words for ``gym generate``, a row's ``gym_config``.

Each value is coerced to its field's type or refused in one line: a whole number for an ``int`` (``2.5``, ``1e400``
refused), a finite number for a ``float``, ``true``/``false`` (any case) or a Python literal for a ``bool``, one of
the choices of a ``Literal``, items of the item type for a list or tuple, ``None`` for an optional field. A field a
data file cannot carry (an enum, a date, a nested config) cannot be set. A row's ``gym_config`` is checked strictly
(its values already typed: ``"false"`` is not a bool there), and against the config's own ``validate()``, which is
what reasoning-gym runs when the scorer is built.

>>> parse_settings("basic_arithmetic", ["allow_parentheses=false", "max_terms=3", "operators=('+', '-')"])
{'allow_parentheses': False, 'max_terms': 3, 'operators': ['+', '-']}
>>> parse_settings("basic_arithmetic", ["format_style=bogus"])
Traceback (most recent call last):
...
swift_plugins.core.errors.SettingError: gym:basic_arithmetic: format_style='bogus' must be one of 'simple', 'natural'
>>> parse_settings("basic_arithmetic", ["max_terms=1e400"])
Traceback (most recent call last):
...
swift_plugins.core.errors.SettingError: gym:basic_arithmetic: max_terms='1e400' must be a whole number
"""

from __future__ import annotations

import collections.abc
import dataclasses
import math
import re
import types
import typing
from functools import cache
from typing import Any

from ..core.errors import SettingError
from .entries import decode
from .generator import check_name, config_class
from .guard import RESERVED, VARIABLE
from .scorers import literal

__all__ = ["check_config", "parse_settings", "unscorable"]

CONTROLLED = ("seed", "size")  # config fields set by --seed and --size, not by key=value
# The settings naming the variables of a dataset's gold answers: the guard lets one-letter names through only
VARIABLES = {"simple_integration": "symbols", "intermediate_integration": "symbols",
             "polynomial_multiplication": "variables"}  # fmt: skip
BOOLEANS = {"true": True, "false": False}
_SEQUENCES = (list, tuple, collections.abc.Sequence)


def _default(field: dataclasses.Field) -> Any:
    if field.default_factory is not dataclasses.MISSING:
        return field.default_factory()
    return None if field.default is dataclasses.MISSING else field.default


@cache
def _fields(name: str) -> dict[str, tuple[Any, ...]]:
    """The settable fields of dataset ``name``'s config: the types a value may have, its annotation first.

    Some annotations do not hold their own default (rearc's ``diff_ub: int = 0.2``, intermediate_integration's
    ``symbols: tuple = "x"``): the default's type is allowed too.
    """
    config = config_class(name)
    hints = typing.get_type_hints(config)
    fields = {}
    for field in dataclasses.fields(config):
        kind, default = hints[field.name], _default(field)
        try:
            _coerce(default, kind, strict=True)
            fields[field.name] = (kind,)
        except ValueError:  # the default is not of its annotation's type: take its own type as well
            fields[field.name] = (kind, type(default)) if type(default) in (int, float, str) else (kind,)
    return {key: kinds for key, kinds in fields.items() if key not in CONTROLLED}


def _coerce_to_any(value: Any, kinds: tuple[Any, ...], strict: bool) -> Any:
    """``value`` as the first of ``kinds`` it can be, or the first kind's ValueError."""
    try:
        return _coerce(value, kinds[0], strict)
    except ValueError:
        for kind in kinds[1:]:
            try:
                return _coerce(value, kind, strict)
            except ValueError:
                continue
        raise


def _choices(kind: Any) -> str:
    return ", ".join(map(repr, typing.get_args(kind)))


def _coerce(value: Any, kind: Any, strict: bool) -> Any:
    """``value`` as a ``kind``, or ValueError saying what it must be; ``strict``: no conversion of text to a bool.

    >>> _coerce([1, 2], list[float], strict=False), _coerce(None, typing.Optional[int], strict=True)
    ([1.0, 2.0], None)
    """
    origin, args = typing.get_origin(kind), typing.get_args(kind)
    if kind is Any:
        return value
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        return _coerce(value, next(arg for arg in args if arg is not type(None)), strict)
    if origin is typing.Literal:
        if value in args:
            return value
        raise ValueError(f"must be one of {_choices(kind)}")
    if kind is bool:
        if not strict and isinstance(value, str) and value.lower() in BOOLEANS:
            return BOOLEANS[value.lower()]
        if isinstance(value, bool):
            return value
        raise ValueError("must be true or false")
    if kind is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        raise ValueError("must be a whole number")
    if kind is float:
        if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
            return float(value)
        raise ValueError("must be a finite number")
    if kind is str:
        if isinstance(value, str):
            return value
        raise ValueError("must be text")
    if kind in (list, tuple) or origin in _SEQUENCES:
        if not isinstance(value, (list, tuple)):
            raise ValueError("must be a list, e.g. ('a', 'b')")
        if origin is tuple and len(args) > 1 and args[-1] is not Ellipsis:  # tuple[float, float]: so many items
            if len(args) != len(value):
                raise ValueError(f"must be {len(args)} items")
            kinds = args
        else:
            kinds = (args[0] if args else Any,) * len(value)
        items = [_coerce(item, item_kind, strict) for item, item_kind in zip(value, kinds, strict=True)]
        return items if list in (kind, origin) else tuple(items)
    raise ValueError(f"cannot be set: a data file cannot carry a {getattr(kind, '__name__', kind)}")


def unscorable(name: str, key: str, value: Any) -> str | None:
    """Why the reward could not score the gold answers of dataset ``name`` generated with ``key=value``, or None.

    >>> unscorable("simple_integration", "symbols", ("t",)), unscorable("polynomial_multiplication", "variables", "x")
    (None, None)
    >>> unscorable("polynomial_multiplication", "variables", ("a", "beta", "E"))
    "names variables the reward cannot score: 'beta', 'E' (one letter each, not C, E, I, N, O, Q or S: the \
integrations' constant, or sympy's own objects), e.g. ('a', 'b')"
    """
    if VARIABLES.get(name) != key or not isinstance(value, (str, list, tuple)):
        return None
    names = [value] if isinstance(value, str) and name == "polynomial_multiplication" else list(value)
    refused = [item for item in names if not isinstance(item, str) or not re.fullmatch(VARIABLE, item)]
    if not refused:
        return None
    letters = ", ".join(RESERVED[:-1]) + f" or {RESERVED[-1]}"
    return (f"names variables the reward cannot score: {', '.join(map(repr, refused))} (one letter each, not "
            f"{letters}: the integrations' constant, or sympy's own objects), e.g. ('a', 'b')")  # fmt: skip


def _literal(text: str, kind: Any) -> Any:
    """The value a ``key=value`` word's text stands for: a Python literal, else the text (always, for text fields)."""
    if kind is str or (typing.get_origin(kind) in (typing.Union, types.UnionType) and str in typing.get_args(kind)):
        return None if text == "None" else text
    try:
        return literal(text)
    except ValueError:
        return text  # a bare word: text


def parse_settings(name: str, pairs: list[str]) -> dict[str, Any]:
    """``key=value`` words as settings of the dataset's config, each coerced to its field's type.

    >>> parse_settings("basic_arithmetic", ["terms=3"])
    Traceback (most recent call last):
    ...
    swift_plugins.core.errors.SettingError: gym:basic_arithmetic has no setting 'terms'; its settings: min_terms, \
max_terms, min_digits, max_digits, operators, allow_parentheses, allow_negation, format_style, whitespace
    """
    fields = _fields(check_name(name))
    settings = {}
    for pair in pairs:
        key, sep, text = pair.partition("=")
        if not sep:
            raise SettingError(f"gym:{name}: expected key=value, got {pair!r}")
        if key in CONTROLLED:
            raise SettingError(f"gym:{name}: {key} is set by --{key}, not {pair!r}")
        if key not in fields:
            raise SettingError(f"gym:{name} has no setting {key!r}; its settings: {', '.join(fields)}")
        try:
            settings[key] = _coerce_to_any(_literal(text, fields[key][0]), fields[key], strict=False)
        except ValueError as error:
            raise SettingError(f"gym:{name}: {key}={text!r} {error}") from None
        refused = unscorable(name, key, settings[key])
        if refused:
            raise SettingError(f"gym:{name}: {key}={text!r} {refused}")
    return settings


@cache
def check_config(name: str, config: str) -> None:
    """ValueError saying why dataset ``name`` cannot be built with the settings ``config`` (a row's gym_config).

    >>> check_config("basic_arithmetic", '{"allow_parentheses": "false"}')
    Traceback (most recent call last):
    ...
    ValueError: allow_parentheses='false' must be true or false
    >>> check_config("basic_arithmetic", '{"max_terms": 1}')
    Traceback (most recent call last):
    ...
    ValueError: reasoning-gym refuses it: max_terms must be >= min_terms
    """
    settings, fields = decode(config), _fields(name)
    for key, value in settings.items():
        if key not in fields:
            raise ValueError(f"{key!r} is not a setting of {name}; its settings: {', '.join(fields)}")
        try:
            _coerce_to_any(value, fields[key], strict=True)
        except ValueError as error:
            raise ValueError(f"{key}={value!r} {error}") from None
        refused = unscorable(name, key, value)
        if refused:
            raise ValueError(f"{key}={value!r} {refused}")
    try:
        built = config_class(name)(**settings)
        if hasattr(built, "validate"):
            built.validate()
    except (AssertionError, TypeError, ValueError) as error:
        raise ValueError(f"reasoning-gym refuses it: {error or type(error).__name__}") from None
