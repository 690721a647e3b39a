"""The package's errors: one base class to catch them all, one subclass per kind.

>>> issubclass(DataError, PluginError) and issubclass(DataError, ValueError)
True
"""

from __future__ import annotations

__all__ = ["DataError", "PluginError"]


class PluginError(Exception):
    """Base class of every error this package raises on purpose."""


class DataError(PluginError, ValueError):
    """A data file, row or result that cannot be used; the message names the file and the row."""
