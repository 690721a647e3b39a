"""reasoning-gym entries as data-file rows and back: the metadata's Python types kept through JSON.

reasoning-gym's ``score_answer(answer, entry)`` reads the entry's ``metadata``, and some scorers compare its values
by type (ARC's grids are tuples of tuples: a list of lists never equals them). A row carries the metadata as one
JSON text in which tuples, sets, fractions (gsm_symbolic's) and dicts with keys that are not text are tagged, so
:func:`decode` gives back the same Python values; :func:`encode` refuses any other type, so what is written always
rebuilds the entry exactly.

>>> metadata = {"grid": ((1, 2), (3, 4)), "seen": {5}, "by_id": {1: "a"}, "n": 2.5, "part": Fraction(1, 3)}
>>> text = encode(metadata)
>>> decode(text) == metadata, type(decode(text)["grid"][0])
(True, <class 'tuple'>)
>>> encode({"f": len})
Traceback (most recent call last):
...
swift_plugins.core.errors.DataError: metadata['f'] is a builtin_function_or_method, which a data file cannot carry
"""

from __future__ import annotations

import json
from fractions import Fraction
from typing import Any

from ..core.errors import DataError

__all__ = ["decode", "encode"]

_TUPLE, _SET, _ITEMS, _FRACTION = "__tuple__", "__set__", "__items__", "__fraction__"  # values JSON has no type for
_TAGS = {_TUPLE, _SET, _ITEMS, _FRACTION}
_PLAIN = (str, int, float, bool, type(None))


def _tagged(value: Any, where: str) -> Any:
    if isinstance(value, _PLAIN):
        return value
    if isinstance(value, list):
        return [_tagged(item, f"{where}[{index}]") for index, item in enumerate(value)]
    if isinstance(value, tuple):
        return {_TUPLE: [_tagged(item, f"{where}[{index}]") for index, item in enumerate(value)]}
    if isinstance(value, Fraction):
        return {_FRACTION: [value.numerator, value.denominator]}
    if isinstance(value, (set, frozenset)):
        return {_SET: [_tagged(item, f"{where}[{index}]") for index, item in enumerate(sorted(value, key=repr))]}
    if isinstance(value, dict):
        if all(isinstance(key, str) for key in value) and not _TAGS & value.keys():
            return {key: _tagged(item, f"{where}[{key!r}]") for key, item in value.items()}
        return {_ITEMS: [[_tagged(key, where), _tagged(item, f"{where}[{key!r}]")] for key, item in value.items()]}
    raise DataError(f"{where} is a {type(value).__name__}, which a data file cannot carry")


def _untagged(value: Any) -> Any:
    if isinstance(value, list):
        return [_untagged(item) for item in value]
    if not isinstance(value, dict):
        return value
    if value.keys() == {_TUPLE}:
        return tuple(_untagged(item) for item in value[_TUPLE])
    if value.keys() == {_SET}:
        return {_untagged(item) for item in value[_SET]}
    if value.keys() == {_FRACTION}:
        return Fraction(*value[_FRACTION])
    if value.keys() == {_ITEMS}:
        return {_untagged(key): _untagged(item) for key, item in value[_ITEMS]}
    return {key: _untagged(item) for key, item in value.items()}


def encode(metadata: dict[str, Any]) -> str:
    """The JSON text of an entry's metadata, tuples, sets and non-text keys tagged; :class:`DataError` otherwise."""
    return json.dumps(_tagged(metadata, "metadata"))


def decode(text: str) -> Any:
    """The metadata :func:`encode` wrote, with its Python types; ``json.JSONDecodeError`` if ``text`` is not JSON."""
    return _untagged(json.loads(text))
