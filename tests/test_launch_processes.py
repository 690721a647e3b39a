"""Unit tests of swift_plugins.launch.processes: whole trees stopped, TERM then KILL, health without proxies."""

import http.server
import io
import os
import subprocess
import sys
import threading
import time

import pytest

from swift_plugins.launch.console import Console
from swift_plugins.launch.processes import Children, LaunchError, live_tree, wait_for_health

# A child that starts a grandchild in a session of its own (as torchrun does with its workers), then waits.
TREE = """
import subprocess, sys, time
subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], start_new_session=True)
print("started", flush=True)
time.sleep(60)
"""
IGNORES_TERM = (
    "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); print('ready', flush=True); time.sleep(60)"
)


def wait_for_text(path, text, timeout=10):
    deadline = time.monotonic() + timeout
    while text not in path.read_text() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert text in path.read_text()


def test_stop_ends_the_whole_tree_with_term(tmp_path):
    log = tmp_path / "tree.log"
    console = Console("t.sh", io.StringIO())
    with Children(console, grace=5) as children:
        root = children.start_process([sys.executable, "-c", TREE], dict(os.environ), log)
        wait_for_text(log, "started")
        tree = live_tree({root.pid})
        assert len(tree) == 2 and root.pid in tree
    assert not live_tree(tree)
    assert "sending SIGKILL" not in console.stream.getvalue()


def test_kill_after_the_grace_period(tmp_path):
    log = tmp_path / "stubborn.log"
    console = Console("t.sh", io.StringIO())
    with Children(console, grace=1) as children:
        stubborn = children.start_process([sys.executable, "-c", IGNORES_TERM], None, log)
        wait_for_text(log, "ready")
    assert stubborn.returncode == -9 and "sending SIGKILL" in console.stream.getvalue()


class Health(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200 if self.path == "/health/" else 404)
        self.end_headers()

    def log_message(self, *args):
        pass


def test_health_wait_bypasses_proxies(monkeypatch):
    server = http.server.HTTPServer(("127.0.0.1", 0), Health)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    dead = http.server.HTTPServer(("127.0.0.1", 0), Health)
    dead.server_close()  # nothing listens there: a proxied request would fail
    for name in ("http_proxy", "HTTP_PROXY", "all_proxy"):
        monkeypatch.setenv(name, f"http://127.0.0.1:{dead.server_address[1]}")
    monkeypatch.delenv("no_proxy", raising=False)
    monkeypatch.delenv("NO_PROXY", raising=False)
    console = Console("t.sh", io.StringIO())
    try:
        wait_for_health(f"http://127.0.0.1:{server.server_address[1]}/health/", 5, None, None, 40, console)
    finally:
        server.shutdown()
    assert "rollout server is healthy" in console.stream.getvalue()


def test_health_wait_fails_when_the_server_exits_or_time_runs_out(tmp_path):
    log = tmp_path / "rollout.log"
    log.write_text("loading\nCUDA out of memory\n")
    console = Console("t.sh", io.StringIO())
    exited = subprocess.Popen([sys.executable, "-c", "raise SystemExit(3)"])
    exited.wait()
    with pytest.raises(LaunchError, match=r"exited \(status 3\) before it became healthy"):
        wait_for_health("http://127.0.0.1:9/health/", 60, exited, log, 1, console)
    assert "CUDA out of memory" in console.stream.getvalue() and "loading" not in console.stream.getvalue()
    with pytest.raises(LaunchError, match="not healthy after 1s"):
        wait_for_health("http://127.0.0.1:9/health/", 1, None, log, 1, console)
