"""A command line of ``--name value...`` groups in which every flag appears once.

Setting a flag that is already there replaces its value in place, so presets, the smoke run and the
user's extra flags compose without repeating a flag (argparse would keep the last one, but a reader of
the printed command would see both).

>>> flags = Flags(["--max_length", "2048", "--reward_funcs", "a", "b"])
>>> flags.update(["--max_length=512", "--seed", "1"])
['max_length', 'seed']
>>> flags.argv()
['--max_length=512', '--reward_funcs', 'a', 'b', '--seed', '1']
>>> flags.value("max_length"), flags.values("reward_funcs"), flags.value("beta")
('512', ['a', 'b'], None)
"""

from __future__ import annotations

from collections.abc import Iterable

from .errors import SettingError

__all__ = ["Flags"]


class Flags:
    """Ordered ``--flag`` groups, each flag once; ``source`` names where words came from in errors."""

    def __init__(self, words: Iterable[str] = (), source: str = "the flags") -> None:
        self._groups: dict[str, list[str]] = {}
        self.update(words, source)

    def update(self, words: Iterable[str], source: str = "the extra arguments") -> list[str]:
        """Set every flag of ``words`` (replacing values in place); return the names set."""
        names = []
        for group in _groups(list(words), source):
            name = group[0][2:].split("=", 1)[0]
            self._groups[name] = group
            names.append(name)
        return names

    def values(self, name: str) -> list[str] | None:
        """The words after ``--name`` (or its ``=value``), or None if the flag is absent."""
        group = self._groups.get(name)
        if group is None:
            return None
        head = group[0].split("=", 1)
        return head[1:] + group[1:]

    def value(self, name: str) -> str | None:
        """The value of ``--name`` as one string (several words joined by blanks), or None."""
        values = self.values(name)
        return None if values is None else " ".join(values)

    def names(self) -> list[str]:
        """The flags set, in order, without their dashes."""
        return list(self._groups)

    def argv(self) -> list[str]:
        """All words, in the order the flags were first set."""
        return [word for group in self._groups.values() for word in group]


def _groups(words: list[str], source: str) -> list[list[str]]:
    groups: list[list[str]] = []
    for word in words:
        if word.startswith("--") and len(word) > 2:
            groups.append([word])
        elif groups:
            groups[-1].append(word)
        else:
            raise SettingError(f"{source}: {word!r} is not a --flag (ms-swift takes --name value ...)")
    return groups
