"""What the launcher waits for: a rollout server's health, a trainer's end (its log copied to the terminal, its
``logging.jsonl`` judged by the watch meanwhile: :func:`swift_plugins.watch.live.watcher`), a server that must
outlive nothing.

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

__all__ = ["follow_trainer", "serve_until_stopped", "show_tail", "wait_for_health"]

POLL_SECONDS = 0.1


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
    echo: bool = True,
) -> int:
    """Copy the trainer's log to stdout (unless not ``echo``) until it exits; return its status.  A rollout server that
    dies meanwhile aborts the run: the trainer would otherwise hang until its own vLLM timeout.  ``watch`` judges the
    trainer's ``logging.jsonl`` meanwhile (:func:`~swift_plugins.watch.live.watcher`), and once more after a trainer
    that succeeded: its last lines."""
    with log.open("rb") as source:
        while trainer.poll() is None:
            if echo:
                _copy(source)
            if server is not None and server.poll() is not None:
                show_tail(server_log, "rollout server", lines, console)
                raise LaunchError("rollout server exited during training; stopping the trainer")
            if watch is not None:
                watch()
            time.sleep(POLL_SECONDS)
        if echo:
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
