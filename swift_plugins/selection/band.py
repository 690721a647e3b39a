"""Which rows to keep: a band of solve counts out of N samples, and the histogram that shows what was kept (pure).

>>> band = Band(samples=8)  # the default: solved sometimes (1 to 7 of 8)
>>> [band.keeps(solved) for solved in (0, 1, 7, 8)]
[False, True, True, False]
>>> print(histogram([0, 0, 0, 1, 2, 8], band))
solved  rows  kept
  0/8      3
  1/8      1     *
  2/8      1     *
  8/8      1
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from ..core.errors import SettingError

__all__ = ["Band", "histogram"]


@dataclass(frozen=True)
class Band:
    """Keep a row whose solve count of ``samples`` answers is from ``least`` to ``most`` (default 1 to N-1)."""

    samples: int
    least: int = 1
    most: int | None = None  # None: samples - 1

    def __post_init__(self) -> None:
        if self.samples < 2:
            raise SettingError(f"--samples {self.samples}: a solve rate needs at least 2 samples a row")
        if not 0 <= self.least <= self.upper <= self.samples:
            raise SettingError(
                f"band {self.least}-{self.upper} of {self.samples}: expected 0 <= least <= most <= samples"
            )
        if (self.least, self.upper) == (0, self.samples):
            raise SettingError(f"band 0-{self.samples} of {self.samples} keeps every row: nothing is selected")

    @property
    def upper(self) -> int:
        return self.samples - 1 if self.most is None else self.most

    @classmethod
    def parse(cls, samples: int, text: str | None) -> Band:
        """``LEAST-MOST`` right answers of ``samples`` (None: the default band), refused in one line otherwise.

        >>> Band.parse(8, "2-6").describe()
        '2-6 of 8'
        """
        if text is None:
            return cls(samples)
        least, sep, most = text.partition("-")
        if not (sep and least.isdigit() and most.isdigit()):
            raise SettingError(f"band {text!r}: expected LEAST-MOST right answers of {samples}, such as 1-7")
        return cls(samples, int(least), int(most))

    def keeps(self, solved: int) -> bool:
        return self.least <= solved <= self.upper

    def describe(self) -> str:
        """``1-7 of 8``."""
        return f"{self.least}-{self.upper} of {self.samples}"


def histogram(solved: Iterable[int], band: Band) -> str:
    """Rows by solve count, those the band keeps starred."""
    counts = Counter(solved)
    lines = ["solved  rows  kept"]
    for count in sorted(counts):
        lines.append(f"{count:>3}/{band.samples:<3}{counts[count]:>5}{'     *' if band.keeps(count) else ''}")
    return "\n".join(lines)
