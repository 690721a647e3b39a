"""End to end on CPU: the other server recipes' path, as tests/e2e/test_e2e_server.py runs the 3-GPU Countdown one.

The GSM8K 3-GPU recipe on local GSM8K rows (its smoke sample is a hub dataset) and the multi-node recipe on this
one host: ``ROLE=rollout``, then two ``ROLE=train`` nodes (``NNODES=2``, one process each) over 127.0.0.1. Each is
real ``swift rollout`` on vLLM's CPU build and real ``swift rlhf`` with DeepSpeed ZeRO-3 on 2 processes, with the
same stand-ins (``nvidia-smi``, NCCL's part of the weight sync). Not in ``make test``: its 45-minute budget does not
hold their 4.6 minutes; ``make test-server-recipes`` runs them in vLLM 0.23's venv (docs/server_mode_cpu.md).
"""

import json
import subprocess

import pytest

from swift_plugins.watch.checkpoints import newest_checkpoint
from swift_plugins.watch.server import failed_loads

from ..helpers import (
    REPO,
    SHELL,
    assert_answers_follow_the_checkpoints,
    run_server_smoke,
    server_smoke_env,
    server_trainer_flags,
    wait_until,
)

pytestmark = [pytest.mark.e2e, pytest.mark.server, pytest.mark.server_recipes]

STEPS = ("--max_steps", "3", "--save_steps", "1", "--eval_steps", "3")
# A high learning rate and a reward that varies between the random model's completions: its answers change.
SHORT = ("--max_completion_length", "24", "--learning_rate", "1e-2")
GSM8K_ROWS = REPO / "tests" / "fixtures" / "gsm8k"


def assert_the_sync_followed(out, run) -> None:
    """The server's answers after each sync are the saved checkpoint's, and no weight update failed on it."""
    records = {r["step"]: r["answers"] for r in map(json.loads, (out / "sync_probe.jsonl").read_text().splitlines())}
    assert set(range(3)) <= set(records)
    assert_answers_follow_the_checkpoints(records, run, next(out.glob("smoke*")) / "model")
    assert failed_loads((out / "rollout.log").read_text().splitlines()) == []


def test_the_gsm8k_recipe_runs_its_server_path_on_local_rows(tmp_path):
    rewards = ("--reward_funcs", "gsm8k_accuracy", "reasoning_answer_format", "distinct_characters")
    result = run_server_smoke(
        tmp_path, *rewards, *SHORT, *STEPS, script="gsm8k_3gpu.sh",
        DATASET=str(GSM8K_ROWS / "train.jsonl"), VAL_DATASET=str(GSM8K_ROWS / "test.jsonl"),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    assert "SMOKE passed" in result.stderr and "2 processes, DeepSpeed ZeRO-3" in result.stderr
    run = newest_checkpoint(tmp_path).parent
    args = json.loads((run / "args.json").read_text())
    assert (args["vllm_mode"], args["dataset"]) == ("server", [str(GSM8K_ROWS / "train.jsonl")])
    assert_the_sync_followed(tmp_path, run)


def test_the_multinode_recipe_runs_on_one_host(tmp_path):
    env = server_smoke_env(tmp_path, FAKE_GPU_COUNT="1")
    script = ["bash", str(SHELL / "countdown_multinode.sh")]
    served = tmp_path / "role-rollout.out"
    with served.open("w") as out:
        rollout = subprocess.Popen(script, env={**env, "ROLE": "rollout"}, stdout=out, stderr=subprocess.STDOUT)
    try:
        assert wait_until(lambda: "ready:" in served.read_text() or rollout.poll() is not None, timeout=600)
        assert rollout.poll() is None, served.read_text()[-3000:]
        node = {**env, "ROLE": "train", "ROLLOUT_HOST": "127.0.0.1", "NNODES": "2", "MASTER_ADDR": "127.0.0.1",
                "TRAIN_GPUS": "0"}  # fmt: skip
        rewards = ("--reward_funcs", "external_countdown", "countdown_probe", "distinct_characters")
        flags = [*server_trainer_flags(tmp_path), *rewards, *SHORT, *STEPS]
        nodes = []
        for rank in (0, 1):
            with (tmp_path / f"role-train{rank}.out").open("w") as out:
                node_rank = {**node, "NODE_RANK": str(rank)}
                nodes.append(subprocess.Popen([*script, *flags], env=node_rank, stdout=out, stderr=subprocess.STDOUT))
        codes = [process.wait(timeout=1200) for process in nodes]
    finally:
        rollout.terminate()
        rollout.wait(timeout=60)
    said = [(tmp_path / f"role-train{rank}.out").read_text() for rank in (0, 1)]
    assert codes == [0, 0], said[0][-3000:] + said[1][-3000:]
    assert all("the trainer ran on 2 node(s) x GPUs 0 (DeepSpeed ZeRO-3)" in text for text in said)
    run = newest_checkpoint(tmp_path).parent
    assert [record["rewards/CountdownProbe/mean"] for record in map(
        json.loads, (run / "logging.jsonl").read_text().splitlines()) if "rewards/CountdownProbe/mean" in record
    ] == [1.0, 1.0, 1.0]  # fmt: skip
    assert_the_sync_followed(tmp_path, run)
