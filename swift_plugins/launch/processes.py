"""The processes a launcher starts: each in a session of its own, stopped (and only they) on every exit:
SIGTERM to the whole tree, then SIGKILL after a grace period.  Linux only (/proc), like the GPU nodes.

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
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import BinaryIO

from ..core.errors import PluginError
from .console import Console

__all__ = [
    "Children",
    "Interrupted",
    "LaunchError",
    "follow_trainer",
    "live_tree",
    "serve_until_stopped",
    "show_tail",
    "wait_for_health",
]

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
POLL_SECONDS = 0.1


class LaunchError(PluginError):
    """A started process failed (the server died, never became healthy, left no checkpoint)."""


class Interrupted(Exception):
    """SIGINT, SIGTERM or SIGHUP reached the launcher; ``status`` is the shell's 128 + signal number."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.status = 128 + signum


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
        """Start ``argv`` in a new session (its own process group, no terminal), output to ``log``.

        Ctrl-C then reaches only the launcher, which stops the children itself.  A stop signal that arrives
        while the child is being started is acted on once its pid is recorded.
        """
        output = log.open("ab") if log else subprocess.DEVNULL
        self._starting = True
        try:
            process = subprocess.Popen(
                list(argv), env=env, stdin=subprocess.DEVNULL, stdout=output, stderr=subprocess.STDOUT,
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


def show_tail(log: Path, title: str, lines: int, console: Console) -> None:
    """The last ``lines`` lines of ``log`` on stderr, between two marker lines."""
    if not log.is_file() or lines == 0:
        return
    tail = log.read_text(errors="replace").splitlines()[-lines:]
    console.note(f"---- last {lines} lines of {title} ({log}) ----")
    console.show("\n".join(tail))
    console.note(f"---- end of {title} ----")


def wait_for_health(
    url: str, timeout: int, server: subprocess.Popen | None, log: Path, lines: int, console: Console
) -> None:
    """Poll ``url`` until it answers 200, bypassing any proxy; fail when ``server`` exits or ``timeout`` passes."""
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # no http_proxy, whatever the env says
    deadline = time.monotonic() + timeout
    console.note(f"waiting up to {timeout}s for {url}")
    while True:
        if server is not None and server.poll() is not None:
            show_tail(log, "rollout server", lines, console)
            raise LaunchError(f"rollout server exited (status {server.returncode}) before it became healthy; see {log}")
        try:
            with opener.open(url, timeout=3) as response:
                healthy = response.status == 200
        except Exception:
            healthy = False
        if healthy:
            console.note(f"rollout server is healthy: {url}")
            return
        if time.monotonic() >= deadline:
            if server is not None:
                show_tail(log, "rollout server", lines, console)
            raise LaunchError(
                f"rollout server not healthy after {timeout}s ({url}); raise ROLLOUT_TIMEOUT if it is still loading"
            )
        time.sleep(POLL_SECONDS)


def follow_trainer(
    trainer: subprocess.Popen,
    log: Path,
    server: subprocess.Popen | None,
    server_log: Path,
    lines: int,
    console: Console,
) -> int:
    """Copy the trainer's log to stdout until it exits; return its status.  A rollout server that dies meanwhile
    aborts the run: the trainer would otherwise hang until its own vLLM timeout."""
    with log.open("rb") as source:
        while trainer.poll() is None:
            _copy(source)
            if server is not None and server.poll() is not None:
                show_tail(server_log, "rollout server", lines, console)
                raise LaunchError("rollout server exited during training; stopping the trainer")
            time.sleep(POLL_SECONDS)
        _copy(source)
    return trainer.returncode


def _copy(source: BinaryIO) -> None:
    data = source.read()
    if data:
        sys.stdout.buffer.write(data)
        sys.stdout.flush()


def serve_until_stopped(server: subprocess.Popen, log: Path, lines: int, console: Console) -> None:
    """Wait while a long-running server lives; fail when it exits."""
    while server.poll() is None:
        time.sleep(1)
    show_tail(log, "rollout server", lines, console)
    raise LaunchError(f"rollout server exited (status {server.returncode}); see {log}")
