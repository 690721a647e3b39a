"""What the launcher waits for: a rollout server's health, a trainer's end (its log copied to the terminal, its
``logging.jsonl`` judged by the watch meanwhile: :func:`watcher`), a server that must outlive nothing.

>>> import io
>>> from ..core.console import Console
>>> show_tail(Path("/no/such.log"), "rollout server", 40, Console("t.sh", io.StringIO()))
"""

from __future__ import annotations

import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

from ..core.console import Console
from ..core.errors import LaunchError
from ..watch.live import LiveWatch, stop_on_fatal
from ..watch.rules import Thresholds

__all__ = ["WATCH_LOG", "follow_trainer", "serve_until_stopped", "show_tail", "wait_for_health", "watcher"]

POLL_SECONDS = 0.1
WATCH_LOG = "watch.log"  # beside the run's other logs: every verdict of the watch, one line each


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
    server_log: Path | None,
    lines: int,
    console: Console,
    watch: Callable[..., object] | None = None,
) -> int:
    """Copy the trainer's log to stdout until it exits; return its status.  A rollout server that dies meanwhile
    aborts the run: the trainer would otherwise hang until its own vLLM timeout.  ``watch`` judges the trainer's
    ``logging.jsonl`` meanwhile (:func:`watcher`), and once more after a trainer that succeeded: its last lines."""
    with log.open("rb") as source:
        while trainer.poll() is None:
            _copy(source)
            if server is not None and server.poll() is not None:
                show_tail(server_log, "rollout server", lines, console)
                raise LaunchError("rollout server exited during training; stopping the trainer")
            if watch is not None:
                watch()
            time.sleep(POLL_SECONDS)
        _copy(source)
    if watch is not None and trainer.returncode == 0:
        watch(final=True)
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


def watcher(
    where: Path, mode: str, thresholds: Thresholds, record: Path, console: Console, server_log: Path | None = None
) -> Callable[..., None] | None:
    """What to call while a trainer runs (None with ``WATCH=off``): judge its log under ``where`` (and the rollout
    server's ``server_log``: a weight update it failed to load), say each verdict (also appended to ``record``)
    and, with ``WATCH=stop``, raise :class:`~swift_plugins.watch.live.WatchStopped` at a fatal one."""
    if mode == "off":
        return None

    def say(line: str) -> None:
        if mode == "warn" and line.startswith("fatal"):
            line += " (WATCH=warn: the run goes on)"
        console.warn(f"watch: {line}")
        with record.open("a", encoding="utf-8") as file:
            file.write(f"{time.strftime('%Y-%m-%d %H:%M:%S')} {line}\n")

    live = LiveWatch(where, say, thresholds, started=time.time(), server_log=server_log)

    def check(final: bool = False) -> None:
        verdicts = live.poll(final)
        if mode == "stop":
            stop_on_fatal(verdicts, live)

    return check
