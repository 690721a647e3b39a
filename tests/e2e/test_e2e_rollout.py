"""End to end on CPU: the launcher starts a real ``swift rollout`` (vLLM's CPU build) and stops it cleanly.

The multi-node recipe's rollout host (``ROLE=rollout SMOKE=1``) runs the same rollout command and health wait as
the one-node server recipes: the launcher builds the tiny model, starts ``swift rollout``, waits for ``/health/``,
says it is ready, and serves until Ctrl-C. Only ``nvidia-smi`` is a stand-in (the launcher checks the GPU
settings with it); swift, vLLM and the server are real. Server-mode *training* syncs weights over NCCL, which
needs CUDA: that part runs only on a GPU box.
"""

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from swift_plugins.core.think_answer import SYSTEM_PROMPT
from swift_plugins.countdown.data import prompt_for
from swift_plugins.launch.follow import POLL_SECONDS

from ..helpers import STAND_INS, free_port, real_run

# Rerun in vLLM 0.11's stack (vllm), not in 0.23's, whose server-path test starts, waits for and stops a real
# swift rollout through the same launcher.
pytestmark = [pytest.mark.e2e, pytest.mark.vllm]

STAND_IN = STAND_INS / "nvidia-smi"
READY_TIMEOUT = 600



def sessions_of(pids: set[int]) -> set[int]:
    sessions = set()
    for pid in pids:
        try:
            sessions.add(int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[3]))
        except OSError:
            continue
    return sessions


def alive_in(sessions: set[int]) -> list[str]:
    """The live (non-zombie) processes of ``sessions``, as ``pid command``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()[:120]
        except OSError:
            continue
        if int(fields[3]) in sessions and fields[0] != "Z":
            found.append(f"{entry.name} {command}")
    return found


def descendants(pid: int) -> set[int]:
    found, pending = set(), [pid]
    while pending:
        current = pending.pop()
        found.add(current)
        for task in Path(f"/proc/{current}/task").glob("*"):
            try:
                pending += [int(child) for child in (task / "children").read_text().split()]
            except OSError:
                continue
    return found


def kill_tree(launcher: subprocess.Popen) -> None:
    """SIGKILL the launcher and everything it started (the server runs in a session of its own)."""
    for pid in descendants(launcher.pid):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    launcher.wait()


@pytest.fixture(scope="module")
def server(repo, tmp_path_factory):
    """The rollout host, launched and ready; yields (launcher process, port, stderr lines so far)."""
    folder = tmp_path_factory.mktemp("rollout")
    (folder / "bin").mkdir()
    (folder / "bin" / "nvidia-smi").symlink_to(STAND_IN)
    port = free_port()
    env = {
        **os.environ,
        "PATH": os.pathsep.join([str(folder / "bin"), str(Path(sys.executable).parent), os.environ["PATH"]]),
        "ROLE": "rollout",
        "SMOKE": "1",
        "OUTPUT_DIR": str(folder / "out"),
        "ROLLOUT_PORT": str(port),
        "ROLLOUT_GROUP_PORT": str(free_port()),
        "ROLLOUT_ARGS": "--vllm_enforce_eager true",
    }
    with real_run():  # a slot held while the server runs
        launcher = subprocess.Popen(
            ["bash", str(repo / "shell" / "countdown_multinode.sh")],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        lines = []
        deadline = time.monotonic() + READY_TIMEOUT
        while not any("ready:" in line for line in lines):
            line = launcher.stderr.readline()
            if (not line and launcher.poll() is not None) or time.monotonic() > deadline:
                kill_tree(launcher)
                pytest.fail("the rollout host never became ready:\n" + "".join(lines[-40:]))
            lines.append(line)
        yield launcher, port, lines
        if launcher.poll() is None:  # a test failed before Ctrl-C
            kill_tree(launcher)


def test_the_launcher_waits_for_health_and_says_the_server_is_ready(server):
    _, port, lines = server
    text = "".join(lines)
    assert f"waiting up to 900s for http://127.0.0.1:{port}/health/" in text
    assert f"rollout server is healthy: http://127.0.0.1:{port}/health/" in text
    ready = f"ready: on each training node run ROLE=train ROLLOUT_HOST={socket.gethostname()} ROLLOUT_PORT={port}"
    assert ready in text


def test_the_server_answers_a_generation_request(server):
    _, port, _ = server
    messages = [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": prompt_for([1, 2, 3], 6)}]
    body = {"infer_requests": [{"messages": messages}], "request_config": {"max_tokens": 8, "temperature": 0}}
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/infer/", json.dumps(body).encode(), {"Content-Type": "application/json"}
    )
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(request, timeout=120) as response:
        (answer,) = json.loads(response.read())
    assert answer["response"]["usage"]["completion_tokens"] == 8
    assert answer["response"]["choices"][0]["finish_reason"] == "length"


def test_ctrl_c_stops_the_server_and_leaves_nothing_running(server):
    launcher, port, _ = server
    sessions = sessions_of(descendants(launcher.pid)) - sessions_of({os.getpid()})
    assert sessions  # swift rollout runs in a session of its own
    launcher.send_signal(signal.SIGINT)
    status = launcher.wait(timeout=120)
    rest = launcher.stderr.read()
    assert status == 128 + signal.SIGINT, rest
    assert "received SIGINT, stopping" in rest
    time.sleep(POLL_SECONDS)
    assert alive_in(sessions) == []
    with socket.socket() as sock:
        assert sock.connect_ex(("127.0.0.1", port)) != 0  # nobody listens any more
