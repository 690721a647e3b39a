"""The package's errors: one base class to catch them all, one subclass per kind.

Every failure the package expects (bad data, a bad setting, a path it cannot use, a tool that
fails) raises a :class:`PluginError` subclass whose message names the user's input; the command
line prints it as one line. Anything else is a bug and keeps its traceback.

>>> issubclass(DataError, PluginError) and issubclass(DataError, ValueError)
True
>>> str(OutputError("eval/score.json", PermissionError(13, "Permission denied")))
'eval/score.json: cannot write it (Permission denied)'
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["DataError", "LaunchError", "OutputError", "PluginError", "SettingError"]


class PluginError(Exception):
    """Base class of every error this package raises on purpose."""


class DataError(PluginError, ValueError):
    """A data file, row or result that cannot be used; the message names the file and the row."""


class SettingError(PluginError, ValueError):
    """A setting or option value out of its range; the message names the setting and the range."""


class OutputError(PluginError):
    """An output path that cannot be written: ``OutputError(path, reason)`` names the user's path.

    ``reason`` is the OSError met, or a sentence (a wrong extension, a file where a folder should be); ``path`` and
    ``reason`` (a sentence) stay on the error, for a caller that names the path its own way.
    """

    def __init__(self, path: str | Path, reason: OSError | str) -> None:
        self.path, self.reason = path, str(reason.strerror or reason if isinstance(reason, OSError) else reason)
        super().__init__(f"{path}: cannot write it ({self.reason})")


class LaunchError(PluginError):
    """A process the package started failed: a server died or never became healthy, a stage left no checkpoint."""
