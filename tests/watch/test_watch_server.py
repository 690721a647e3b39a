"""The stale-server rule on a real rollout server's log: a weight update it failed to load stops the run.

``tests/data/rollout_failed_load.log`` is ``swift rollout``'s log from the server-path smoke run with the server's
own in-place load (vLLM's CPU backend: ``'Parameter' object has no attribute 'weight_loader'``), paths shortened.
"""

import json

import pytest

from swift_plugins.watch.live import FATAL_STATUS, STOPPED, LiveWatch, WatchStopped, stop_on_fatal
from swift_plugins.watch.rules import Thresholds
from swift_plugins.watch.server import ServerLogReader, failed_loads

from ..helpers import DATA, START_WAIT, wait_until

FAILED_LOAD = DATA / "rollout_failed_load.log"
STEPS = "".join(f'{{"loss": 0.1, "reward": 0.5, "global_step/max_steps": "{step}/9"}}\n' for step in (1, 2))


def test_the_real_failed_load_is_found_with_its_method_and_error():
    assert failed_loads(FAILED_LOAD.read_text().splitlines()) == [
        "update_flattened_params: AttributeError: 'Parameter' object has no attribute 'weight_loader'"
    ]


def test_a_failed_generation_request_is_not_a_failed_load():
    text = FAILED_LOAD.read_text().replace("in update_flattened_params", "in infer")
    assert failed_loads(text.splitlines()) == []


def test_a_log_written_in_pieces_is_judged_once_each_traceback_is_whole(tmp_path):
    log, text = tmp_path / "rollout.log", FAILED_LOAD.read_text()
    reader, found = ServerLogReader(log), []
    for cut in range(0, len(text) + 997, 997):  # pieces that end anywhere: inside lines and tracebacks
        log.write_text(text[:cut])
        found += reader.read()
    assert len(found) == 1 and found[0].startswith("update_flattened_params: AttributeError")


def test_what_the_log_held_before_is_not_judged_and_a_replaced_log_is_read_whole(tmp_path):
    log, text = tmp_path / "rollout.log", FAILED_LOAD.read_text()
    log.write_text(text)  # an earlier training run's failure, in the log of a server that outlived it
    reader = ServerLogReader(log)
    assert reader.read() == []
    log.rename(tmp_path / "rollout.log.1")  # the server restarted: its old log kept, a new one begun
    log.write_text(text)
    assert len(reader.read()) == 1
    log.write_text(text[: len(text) // 3])  # cut short in place: read again from its start
    found = reader.read()
    with log.open("a") as file:
        file.write(text[len(text) // 3 :])
    assert len(found + reader.read()) == 1


@pytest.mark.parametrize("thresholds", [Thresholds(), Thresholds.plumbing()], ids=["default", "smoke"])
def test_the_launchers_watch_stops_the_run_at_the_failed_load(tmp_path, thresholds):
    run = tmp_path / "v0-20260101-000000"
    run.mkdir()
    (run / "logging.jsonl").write_text(STEPS)
    server_log = tmp_path / "rollout.log"
    said = []
    watch = LiveWatch(tmp_path, said.append, thresholds, interval=0, server_log=server_log)
    stop_on_fatal(watch.poll(), watch)  # two healthy steps, the server's log not written yet: nothing
    server_log.write_text(FAILED_LOAD.read_text())
    with pytest.raises(WatchStopped) as stopped:
        stop_on_fatal(watch.poll(), watch)
    verdict = stopped.value.verdict
    assert (verdict.rule, verdict.fatal, verdict.step, verdict.since) == ("stale-server", True, 2, 3)
    assert said[-1].startswith("fatal: stale-server at step 2 (failing since step 3): the rollout server failed")
    assert json.loads((run / STOPPED).read_text())["rule"] == "stale-server"
    assert watch.poll() == []  # one verdict per run


def test_a_training_node_watches_the_shared_rollout_log_from_its_own_start(sandbox):
    """The multi-node recipe's rollout host outlives training runs: a failed load an earlier run left in its log is
    not this run's; one written while this node trains stops it (OUTPUT_DIR shared, as docs/recipes.md advises)."""
    server = sandbox.start("countdown_multinode.sh", ROLE="rollout", ROLLOUT_BIND_HOST="127.0.0.1")
    assert wait_until(lambda: "ready" in server.err_path.read_text(), START_WAIT), server.err_path.read_text()
    with (sandbox.out / "rollout.log").open("a") as log:
        log.write(FAILED_LOAD.read_text())  # an earlier training run's failure
    node = {"ROLE": "train", "ROLLOUT_HOST": "127.0.0.1", "TRAIN_GPUS": "0", "FAKE_TRAIN_LOG": "2"}
    healthy = sandbox.run("countdown_multinode.sh", timeout=60, **node)
    assert healthy.returncode == 0 and "stale-server" not in healthy.stderr, healthy.stderr

    trainer = sandbox.start("countdown_multinode.sh", FAKE_TRAIN_MODE="sleep", **node)
    logs = sandbox.out.glob
    assert wait_until(lambda: len(list(logs("v*/logging.jsonl"))) == 2, START_WAIT), trainer.err_path.read_text()
    with (sandbox.out / "rollout.log").open("a") as log:
        log.write(FAILED_LOAD.read_text())  # this run's
    assert trainer.wait(timeout=60) == FATAL_STATUS, trainer.err_path.read_text()
    assert "the watch stopped the run: fatal: stale-server" in trainer.err_path.read_text()
