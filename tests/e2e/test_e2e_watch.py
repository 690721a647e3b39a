"""End to end on CPU: a real GRPO run that fails is stopped by the launcher's watch.

The CPU smoke recipe (the tiny model, vLLM's CPU build colocated) at a learning rate that destroys the model: the
first update throws its weights to ~1e30 and a few steps later every gradient norm is NaN. The smoke run's watch
judges output quality only as warnings (a random model scores 0 by design) but a non-finite gradient as fatal: the
launcher must stop the run within the rule's window, exit 3, name the rule and the step, name a complete checkpoint
saved before the failure began, print the ``RESUME=auto`` command, and leave nothing running.
"""

import json
import os
from pathlib import Path

import pytest

from swift_plugins.watch.checkpoints import is_complete, newest_checkpoint
from swift_plugins.watch.live import FATAL_STATUS, STOPPED, WATCH_LOG
from swift_plugins.watch.log import read_steps
from swift_plugins.watch.rules import Thresholds

from ..helpers import process_gone, run_cpu_smoke

pytestmark = pytest.mark.e2e  # the run is test_e2e_grpo's path (run in every stack); the watch is pure

MAX_STEPS = 30


@pytest.fixture(scope="module")
def failed_run(repo, tmp_path_factory):
    out = tmp_path_factory.mktemp("nan_run")
    # The probe's distinct_characters reward varies between completions, so the updates are not zero.
    result = run_cpu_smoke(
        out, "--reward_funcs", "external_countdown", "distinct_characters", "--max_completion_length", "16",
        "--learning_rate", "1e30", "--max_steps", str(MAX_STEPS), "--save_steps", "1", "--eval_steps", str(MAX_STEPS),
    )  # fmt: skip
    return {"out": out, "result": result}


def test_the_watch_stops_the_run_and_names_the_rule(failed_run):
    result = failed_run["result"]
    assert result.returncode == FATAL_STATUS, result.stderr[-3000:]
    (line,) = [line for line in result.stderr.splitlines() if "the watch stopped the run" in line]
    assert "fatal: non-finite" in line and "grad_norm" in line
    assert "stopping started processes" in result.stderr
    assert "SMOKE passed" not in result.stderr
    watch_log = (failed_run["out"] / WATCH_LOG).read_text()
    assert "fatal: non-finite" in watch_log


def test_it_stops_within_the_rules_window(failed_run):
    (run,) = [log.parent for log in failed_run["out"].glob("v*-*/logging.jsonl")]
    steps = read_steps(run / "logging.jsonl")
    first_nan = next(record["step"] for record in steps if record["grad_norm"] != record["grad_norm"])
    stop = json.loads((run / STOPPED).read_text())
    assert stop["rule"] == "non-finite" and stop["since"] == first_nan - 1
    patience = Thresholds.plumbing().non_finite_patience
    assert stop["step"] == first_nan + patience - 1
    # judged every 2 s while a step takes longer: at most one more step logged before the stop took effect
    assert steps[-1]["step"] <= stop["step"] + 1 < MAX_STEPS


def test_it_names_a_complete_checkpoint_from_before_the_failure_and_the_resume_command(failed_run):
    out, result = failed_run["out"], failed_run["result"]
    checkpoint = newest_checkpoint(out)
    stop = json.loads(next(out.glob(f"v*-*/{STOPPED}")).read_text())
    assert checkpoint is not None and is_complete(checkpoint)
    assert int(checkpoint.name.rsplit("-", 1)[1]) == stop["since"] - 1  # a checkpoint every step: the last good one
    assert f"saved before the failure began (step {stop['since']}): {checkpoint}" in result.stderr
    resume = result.stdout.strip().splitlines()[-1]
    assert resume.startswith(f"RESUME=auto OUTPUT_DIR={out} bash ") and "countdown_cpu_smoke.sh" in resume
    assert "--learning_rate 1e30" in resume


def test_nothing_is_left_running(failed_run):
    out = str(failed_run["out"])
    survivors = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if out in command and not process_gone(int(pid)):
            survivors.append(command)
    assert survivors == []
