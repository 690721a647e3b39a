"""Unit tests of swift_plugins.core.processes and launch.processes: whole trees stopped, TERM then KILL, health without
proxies, a trainer's log followed and watched."""

import http.server
import os
import signal
import subprocess
import sys
import threading
import time

import pytest

from swift_plugins.core.errors import LaunchError
from swift_plugins.core.processes import Children, Interrupted, live_tree
from swift_plugins.launch.follow import follow_trainer, show_tail, wait_for_health
from swift_plugins.watch.live import STOPPED, WatchStopped, stopped_since, watcher
from swift_plugins.watch.rules import Thresholds

from .. import helpers
from ..helpers import START_WAIT, kept_signal_handlers, wait_until

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


@pytest.fixture(autouse=True)
def _signal_handlers():
    with kept_signal_handlers():  # Children take SIGINT/SIGTERM/SIGHUP over and keep them
        yield


def test_stop_ends_the_whole_tree_with_term(tmp_path):
    log = tmp_path / "tree.log"
    said = helpers.console()
    with Children(said, grace=5) as children:
        root = children.start_process([sys.executable, "-c", TREE], dict(os.environ), log)
        assert wait_until(lambda: "started" in log.read_text(), START_WAIT)
        tree = live_tree({root.pid})
        assert len(tree) == 2 and root.pid in tree
    assert not live_tree(tree)
    assert "sending SIGKILL" not in said.stream.getvalue()


def test_kill_after_the_grace_period(tmp_path):
    log = tmp_path / "stubborn.log"
    said = helpers.console()
    with Children(said, grace=1) as children:
        stubborn = children.start_process([sys.executable, "-c", IGNORES_TERM], None, log)
        assert wait_until(lambda: "ready" in log.read_text(), START_WAIT)
    assert stubborn.returncode == -9 and "sending SIGKILL" in said.stream.getvalue()


def test_a_stop_signal_is_an_interrupt_with_the_shells_status():
    stop = Interrupted(signal.SIGTERM)
    assert isinstance(stop, KeyboardInterrupt) and (stop.status, str(stop)) == (143, "SIGTERM")
    with Children(helpers.console(), grace=1), pytest.raises(Interrupted) as caught:
        os.kill(os.getpid(), signal.SIGINT)
        wait_until(lambda: False, 5)  # the handler raises while this waits
    assert caught.value.status == 130


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
    said = helpers.console()
    try:
        wait_for_health(f"http://127.0.0.1:{server.server_address[1]}/health/", 5, None, None, 40, said)
    finally:
        server.shutdown()
    assert "rollout server is healthy" in said.stream.getvalue()


def test_health_wait_fails_when_the_server_exits_or_time_runs_out(tmp_path):
    log = tmp_path / "rollout.log"
    log.write_text("loading\nCUDA out of memory\n")
    said = helpers.console()
    exited = subprocess.Popen([sys.executable, "-c", "raise SystemExit(3)"])
    exited.wait()
    with pytest.raises(LaunchError, match=r"exited \(status 3\) before it became healthy"):
        wait_for_health("http://127.0.0.1:9/health/", 60, exited, log, 1, said)
    assert "CUDA out of memory" in said.stream.getvalue() and "loading" not in said.stream.getvalue()
    with pytest.raises(LaunchError, match="not healthy after 1s"):
        wait_for_health("http://127.0.0.1:9/health/", 1, None, log, 1, said)


def test_the_trainers_log_reaches_stdout_and_its_status_is_returned(tmp_path, capsysbinary):
    log = tmp_path / "train.log"
    with log.open("wb") as output:
        trainer = subprocess.Popen([sys.executable, "-c", "print('step 1'); raise SystemExit(7)"], stdout=output)
    assert follow_trainer(trainer, log, None, tmp_path / "none.log", 40, helpers.console()) == 7
    assert capsysbinary.readouterr().out == b"step 1\n"


def test_a_log_tail_is_its_last_lines_between_markers(tmp_path):
    log = tmp_path / "rollout.log"
    log.write_text("one\ntwo\nthree\n")
    said = helpers.console()
    show_tail(log, "rollout server", 2, said)
    show_tail(log, "rollout server", 0, said)  # LOG_TAIL_LINES=0: no tail
    assert said.stream.getvalue() == (
        f"t.sh: ---- last 2 lines of rollout server ({log}) ----\ntwo\nthree\nt.sh: ---- end of rollout server ----\n"
    )


NAN_STEPS = "".join(f'{{"reward": 0.5, "loss": NaN, "global_step/max_steps": "{step}/9"}}\n' for step in range(1, 5))


@pytest.mark.parametrize("mode", ["stop", "warn", "off"])
def test_the_watch_of_a_trainer_stops_warns_or_stays_off(tmp_path, mode):
    said, record = helpers.console(), tmp_path / "watch.log"
    (tmp_path / "v0-old").mkdir()
    (tmp_path / "v0-old" / "logging.jsonl").write_text(NAN_STEPS)  # a log of an earlier run: not this one's
    os.utime(tmp_path / "v0-old" / "logging.jsonl", (1, 1))
    watch = watcher(tmp_path, mode, Thresholds(), record, said)
    if mode == "off":
        assert watch is None
        return
    watch()  # no log of this run yet
    assert said.stream.getvalue() == ""
    (tmp_path / "v1-new").mkdir()
    (tmp_path / "v1-new" / "logging.jsonl").write_text(NAN_STEPS)
    time.sleep(2.1)  # the watch reads every 2 s
    if mode == "stop":
        with pytest.raises(WatchStopped) as stopped:
            watch()
        assert stopped.value.verdict.rule == "non-finite" and stopped.value.run == tmp_path / "v1-new"
        assert stopped_since(tmp_path / "v1-new") == 0 and not (tmp_path / "v0-old" / STOPPED).exists()
    else:
        watch()
        assert "(WATCH=warn: the run goes on)" in said.stream.getvalue()
    lines = record.read_text().splitlines()
    assert [line.split(" ", 2)[2].split(":")[0] for line in lines] == ["warning", "fatal"]
    assert all(f"watch: {line.split(' ', 2)[2]}" in said.stream.getvalue() for line in lines)



def test_the_watch_waits_for_an_output_folder_the_trainer_has_not_made_yet(tmp_path):
    # The demo's GRPO stage moves the previous run aside; swift makes the folder only once it starts.
    output, said = tmp_path / "grpo", helpers.console()
    watch = watcher(output, "stop", Thresholds(), tmp_path / "watch.log", said)
    watch()  # neither the folder nor a log yet: nothing to judge, nothing said
    assert said.stream.getvalue() == ""
    (output / "v0-new").mkdir(parents=True)
    (output / "v0-new" / "logging.jsonl").write_text(NAN_STEPS)
    time.sleep(2.1)  # the watch reads every 2 s
    with pytest.raises(WatchStopped) as stopped:
        watch()
    assert stopped.value.verdict.rule == "non-finite" and stopped.value.run == output / "v0-new"


@pytest.mark.parametrize("status", [0, 1])
def test_what_a_trainer_logs_just_before_it_exits_0_is_judged_too(tmp_path, status):
    """The watch reads every 2 s: a trainer that writes its last lines and exits in between has them judged once
    more after it exited 0 (one that failed says so itself: its status is returned)."""
    run, log = tmp_path / "v0-new", tmp_path / "train.log"
    script = f"import pathlib, time; time.sleep(0.3); p = pathlib.Path({str(run)!r}); p.mkdir(); " \
             f"(p / 'logging.jsonl').write_text({NAN_STEPS!r}); raise SystemExit({status})"  # fmt: skip
    watch = watcher(tmp_path, "stop", Thresholds(), tmp_path / "watch.log", helpers.console())
    with log.open("wb") as output:
        trainer = subprocess.Popen([sys.executable, "-c", script], stdout=output)
    if status:
        assert follow_trainer(trainer, log, None, None, 40, helpers.console(), watch) == status
        assert not (run / STOPPED).exists()
        return
    with pytest.raises(WatchStopped) as stopped:
        follow_trainer(trainer, log, None, None, 40, helpers.console(), watch)
    assert stopped.value.verdict.rule == "non-finite" and stopped_since(run) == 0
