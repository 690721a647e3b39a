"""The processes a command starts: each in a session of its own, stopped (and only they) on every exit:
SIGTERM to the whole tree, then SIGKILL after a grace period.  Linux only (/proc), like the GPU nodes.

The launcher's recipes, the demo and ``evaluate`` start their ms-swift processes here.

>>> import io, sys
>>> from .console import Console
>>> with Children(Console("demo", io.StringIO()), grace=1) as children:
...     sleeper = children.start_process([sys.executable, "-c", "import time; time.sleep(60)"], {}, None)
>>> sleeper.poll() is not None
True
"""

from __future__ import annotations

import contextlib
import os
import resource
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from .console import Console

__all__ = ["Children", "Interrupted", "children_cpu_seconds", "live_tree"]

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class Interrupted(KeyboardInterrupt):
    """SIGINT, SIGTERM or SIGHUP reached the command; ``status`` is the shell's 128 + signal number.

    A :class:`KeyboardInterrupt`, so a command line that reports Ctrl-C reports these too.
    """

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.status = 128 + signum


def children_cpu_seconds() -> float:
    """User + system CPU seconds of this process's children that have ended and been waited for (theirs included):
    the difference across a ``subprocess.run`` is that command's cost.

    >>> before = children_cpu_seconds()
    >>> _ = subprocess.run(["true"])
    >>> children_cpu_seconds() >= before
    True
    """
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _process_table() -> dict[int, tuple[str, int, int]]:
    table = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:  # exited meanwhile
                continue
            fields = stat.rsplit(")", 1)[1].split()  # the command name may hold blanks and parens
            table[int(entry)] = (fields[0], int(fields[1]), int(fields[3]))  # state, parent, session
    return table


def live_tree(roots: set[int], extra: set[int] = frozenset()) -> set[int]:
    """Live (non-zombie) pids among ``roots``, every process in their sessions, all their descendants, ``extra``.

    Descendants matter because torchrun puts each worker in a session of its own; sessions because orphans
    are re-parented away from the tree (pass the pids seen before as ``extra`` to keep them).
    """
    table = _process_table()
    marked = set(roots) | set(extra) | {pid for pid, (_, _, session) in table.items() if session in roots}
    grown = True
    while grown:
        children = {pid for pid, (_, parent, _) in table.items() if parent in marked} - marked
        marked |= children
        grown = bool(children)
    return {pid for pid in marked if pid in table and table[pid][0] != "Z"}


class Children:
    """A context in which SIGINT/SIGTERM/SIGHUP raise :class:`Interrupted`; on exit every process started
    in it is stopped (a second signal then skips the grace period)."""

    def __init__(self, console: Console, grace: int) -> None:
        self.console, self.grace = console, grace
        self.processes: list[subprocess.Popen] = []
        self.force = False
        self._starting = False
        self._pending: int | None = None

    def __enter__(self) -> Children:
        for signum in STOP_SIGNALS:
            signal.signal(signum, self._interrupt)
        return self

    def __exit__(self, *exc: object) -> None:
        for signum in STOP_SIGNALS:
            signal.signal(signum, self._force)
        self.stop()

    def _interrupt(self, signum: int, frame: object) -> None:
        if self._starting:  # raised once the new child is recorded, so the stop cannot miss it
            self._pending = signum
            return
        raise Interrupted(signum)

    def _force(self, signum: int, frame: object) -> None:
        self.force = True

    def start_process(self, argv: Sequence[str], env: Mapping[str, str] | None, log: Path | None) -> subprocess.Popen:
        """Start ``argv`` in a new session (its own process group, no terminal), output to ``log`` (None: this
        process's stdout and stderr).

        Ctrl-C then reaches only the launcher, which stops the children itself.  A stop signal that arrives
        while the child is being started is acted on once its pid is recorded.
        """
        output = log.open("ab") if log else None
        self._starting = True
        try:
            process = subprocess.Popen(
                list(argv), env=env, stdin=subprocess.DEVNULL, stdout=output, stderr=subprocess.STDOUT if log else None,
                start_new_session=True,
            )  # fmt: skip
            self.processes.append(process)
        finally:
            self._starting = False
            if log:
                output.close()
        if self._pending is not None:
            raise Interrupted(self._pending)
        return process

    def stop(self) -> None:
        """SIGTERM to every live process of the tree, SIGKILL to what is left after the grace period."""
        roots = {process.pid for process in self.processes}
        pids = live_tree(roots)
        if pids:
            self.console.note(f"stopping started processes (SIGTERM; SIGKILL after {self.grace}s)")
            _signal_all(pids, signal.SIGTERM)
            deadline = time.monotonic() + self.grace
            while pids and time.monotonic() < deadline and not self.force:
                time.sleep(0.1)
                self._reap()
                pids = live_tree(roots, pids)
            if pids:
                self.console.warn(
                    f"still running after {self.grace}s, sending SIGKILL to: {' '.join(map(str, sorted(pids)))}"
                )
                _signal_all(pids, signal.SIGKILL)
        for process in self.processes:
            with contextlib.suppress(subprocess.TimeoutExpired):  # unkillable (D state): nothing more to do
                process.wait(timeout=5)

    def _reap(self) -> None:
        for process in self.processes:
            process.poll()


def _signal_all(pids: set[int], signum: int) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signum)
