"""Messages of a launcher: one line each on stderr, prefixed by the entry script's name.

>>> import io
>>> console = Console("countdown_1gpu.sh", io.StringIO())
>>> console.warn("save_steps=500 exceeds the 4 optimizer steps")
>>> console.stream.getvalue()
'countdown_1gpu.sh: warning: save_steps=500 exceeds the 4 optimizer steps\\n'
"""

from __future__ import annotations

import sys
from typing import TextIO

__all__ = ["Console"]


class Console:
    """Notes, warnings and errors of the script ``script`` on ``stream`` (default: stderr)."""

    def __init__(self, script: str, stream: TextIO | None = None) -> None:
        self.script = script
        self.stream = stream

    def note(self, message: str) -> None:
        self.show(f"{self.script}: {message}")

    def show(self, text: str) -> None:
        """``text`` as it is (a log's tail), without the script's name."""
        print(text, file=self.stream or sys.stderr, flush=True)

    def warn(self, message: str) -> None:
        self.note(f"warning: {message}")

    def error(self, message: str) -> None:
        self.note(f"error: {message}")
