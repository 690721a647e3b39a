"""Settings read from the environment or a command line, each refused in one line that names it and the fix.

>>> parse_bool("SMOKE", "TRUE"), positive_int({"STEPS": "8"}, "STEPS", 1), split_words("ARGS", "--a 'b c'")
(True, 8, ('--a', 'b c'))
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping

from .errors import SettingError

__all__ = ["parse_bool", "parse_gpus", "parse_int", "positive_int", "split_words"]

BOOLEANS = {"1": True, "true": True, "yes": True, "0": False, "false": False, "no": False}
# A GPU is an index or an id as CUDA_VISIBLE_DEVICES takes it: GPU-<uuid> (or a prefix), MIG-<uuid>,
# MIG-GPU-<uuid>/<gi>/<ci>.
GPU_ITEM = re.compile(r"0|[1-9][0-9]*|(GPU|MIG)-[A-Za-z0-9][A-Za-z0-9/_-]*")


def parse_bool(name: str, value: str) -> bool:
    """``value`` of the yes/no setting ``name``; empty is no.

    >>> parse_bool("SMOKE", "TRUE"), parse_bool("SMOKE", "")
    (True, False)
    """
    word = value.strip().lower()
    if word and word not in BOOLEANS:
        raise SettingError(f"{name}={value!r} is not a yes/no value: use 1, true or yes (on), 0, false or no (off)")
    return BOOLEANS.get(word, False)


def positive_int(env: Mapping[str, str], name: str, default: int, minimum: int = 1, maximum: int | None = None) -> int:
    """The integer setting ``name`` of ``env`` (``default`` when unset or empty), at least ``minimum``.

    >>> positive_int({"STEPS": "8"}, "STEPS", 1), positive_int({}, "SEED", 0, minimum=0)
    (8, 0)
    """
    return parse_int(name, env.get(name) or str(default), minimum, maximum)


def parse_int(name: str, value: str, minimum: int = 1, maximum: int | None = None) -> int:
    """``value`` of the setting or flag ``name`` as an integer in ``[minimum, maximum]``, or :class:`SettingError`.

    >>> parse_int("--num_generations", "0")
    Traceback (most recent call last):
    ...
    swift_plugins.core.errors.SettingError: --num_generations must be a positive integer, got '0'
    """
    if not value.isdigit() or int(value) < minimum or (maximum is not None and int(value) > maximum):
        what = {0: "a non-negative integer", 1: "a positive integer"}.get(minimum, f"an integer >= {minimum}")
        if maximum == 65535:
            what = "a TCP port (1-65535)"
        elif maximum is not None:
            what += f" up to {maximum:,}"
        raise SettingError(f"{name} must be {what}, got {value!r}")
    return int(value)


def split_words(name: str, value: str) -> tuple[str, ...]:
    """Split ``value`` into words as a shell does (quotes, backslashes; no expansion).

    >>> split_words("ROLLOUT_ARGS", "--a '{\\"b\\": 1}'")
    ('--a', '{"b": 1}')
    """
    try:
        return tuple(shlex.split(value))
    except ValueError as error:
        raise SettingError(f"{name}: cannot split into arguments: unmatched quote ({error})") from None


def parse_gpus(name: str, value: str, inherited: str | None) -> tuple[str, ...]:
    """The CUDA_VISIBLE_DEVICES entries the setting ``name=value`` means.

    Under an inherited CUDA_VISIBLE_DEVICES (a scheduler's assignment) an index is a position in it and
    an id must be one of its entries: a recipe never reaches for GPUs outside what it was given.

    >>> parse_gpus("TRAIN_GPUS", "0,1", None), parse_gpus("TRAIN_GPUS", "0,1", "5,6,7")
    (('0', '1'), ('5', '6'))
    """
    items = _gpu_list(name, value)
    if inherited is None:
        return items
    if not inherited:
        raise SettingError(
            "CUDA_VISIBLE_DEVICES is set but empty (no GPU visible): unset it, or set it to the GPUs this job may use"
        )
    given = _gpu_list("CUDA_VISIBLE_DEVICES", inherited)
    resolved = []
    for item in items:
        if item.isdigit():
            if int(item) >= len(given):
                raise SettingError(
                    f"{name}={value}: position {item} is beyond the inherited CUDA_VISIBLE_DEVICES={inherited} "
                    f"({len(given)} GPU(s)); {name} indexes into that list"
                )
            item = given[int(item)]
        elif item not in given:
            raise SettingError(f"{name}={value}: {item} is not in the inherited CUDA_VISIBLE_DEVICES={inherited}")
        resolved.append(item)
    return tuple(resolved)


def _gpu_list(name: str, value: str) -> tuple[str, ...]:
    items = tuple(value.split(","))
    if not all(GPU_ITEM.fullmatch(item) for item in items):
        raise SettingError(
            f"{name}={value!r} is not a comma-separated list of GPU indices or ids such as 0,1 or GPU-<uuid>"
        )
    twice = [item for item in items if items.count(item) > 1]
    if twice:
        raise SettingError(f"{name}={value!r} lists GPU {twice[0]} twice")
    return items
