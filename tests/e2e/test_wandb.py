"""`--report_to wandb` on a real CPU GRPO step, offline: the reward metrics reach the run's wandb files.

wandb (declared in the ``gpu`` and ``test`` extras) writes an offline run as a ``.wandb`` file: protobuf
``Record`` messages (``wandb.proto.wandb_internal_pb2``) framed in LevelDB-log-style 32 KiB blocks. wandb
0.31 ships no Python reader for it (its Go core writes and syncs it), so the test reads the frames itself.
"""

import json
import os
import struct
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from wandb.proto import wandb_internal_pb2

pytestmark = pytest.mark.e2e  # wandb beside one CPU GRPO step: the CPU stack's run is enough

BLOCK = 32 * 1024
HEADER = struct.Struct("<4sHB")  # ":W&B", magic, version
FRAME = struct.Struct("<IHB")  # checksum, length, kind
FULL, FIRST, MIDDLE, LAST = 1, 2, 3, 4
REWARDS = ("rewards/CountdownAccuracy/mean", "rewards/ThinkAnswerFormat/mean")


def wandb_records(path: Path) -> Iterator:
    """The protobuf records of a ``.wandb`` file, reassembled from their frames."""
    data = path.read_bytes()
    assert HEADER.unpack_from(data)[0] == b":W&B"
    position, pending = HEADER.size, b""
    while position + FRAME.size <= len(data):
        left = BLOCK - position % BLOCK
        _, length, kind = FRAME.unpack_from(data, position) if left >= FRAME.size else (0, 0, 0)
        if kind == 0:  # the zero padding at the end of a block
            position += left
            continue
        pending += data[position + FRAME.size : position + FRAME.size + length]
        position += FRAME.size + length
        if kind in (FULL, LAST):
            record = wandb_internal_pb2.Record()
            record.ParseFromString(pending)
            pending = b""
            yield record


def history(path: Path) -> list[dict[str, float]]:
    """Each ``wandb.log`` call of the run: metric name -> value."""
    steps = []
    for record in wandb_records(path):
        if record.WhichOneof("record_type") == "history":
            items = record.history.item
            steps.append({"/".join(item.nested_key) or item.key: json.loads(item.value_json) for item in items})
    return steps


def test_a_grpo_step_logs_the_reward_metrics_to_an_offline_wandb_run(tmp_path, tiny_model, countdown_jsonl, repo):
    env = {
        **os.environ,
        "WANDB_MODE": "offline",
        "WANDB_DIR": str(tmp_path),
        "HF_HUB_OFFLINE": "1",
        "MODELSCOPE_OFFLINE": "1",
        "TRL_EXPERIMENTAL_SILENCE": "1",
    }
    run_dir = tmp_path / "run"
    command = [
        str(Path(sys.executable).with_name("swift")), "rlhf", "--rlhf_type", "grpo",
        "--model", str(tiny_model), "--model_type", "qwen2", "--template", "qwen2_5", "--check_model", "false",
        "--torch_dtype", "float32", "--fp16", "false", "--bf16", "false",
        "--external_plugins", str(repo / "swift_plugins" / "plugin.py"), "--dataset", str(countdown_jsonl),
        "--reward_funcs", "external_countdown", "think_answer_format",
        "--use_vllm", "false", "--tuner_type", "full", "--num_generations", "4", "--per_device_train_batch_size", "4",
        "--max_completion_length", "8", "--max_steps", "1", "--learning_rate", "1e-5",
        "--gradient_checkpointing", "false", "--dataloader_num_workers", "0", "--logging_steps", "1",
        "--save_strategy", "no", "--report_to", "wandb", "--output_dir", str(run_dir),
    ]  # fmt: skip
    result = subprocess.run(command, capture_output=True, text=True, env=env, cwd=tmp_path, timeout=600)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]

    (offline_file,) = tmp_path.glob("wandb/offline-run-*/run-*.wandb")
    logged = [step for step in history(offline_file) if any(f"train/{key}" in step for key in REWARDS)]
    assert len(logged) == 1  # one GRPO step
    (swift_log,) = run_dir.glob("v*-*/logging.jsonl")
    swift_step = json.loads(swift_log.read_text().splitlines()[0])
    for key in REWARDS:  # the values swift logged for the step, as wandb recorded them
        assert logged[0][f"train/{key}"] == pytest.approx(swift_step[key])
