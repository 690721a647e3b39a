"""The commands a recipe runs, as argv lists built from the settings: pure, no process started.

>>> from pathlib import Path
>>> from .settings import Settings
>>> s = Settings.from_env("countdown_3gpu", {"OUTPUT_DIR": "/runs/a"}, Path("/repo"))
>>> rollout, trainer = server_commands(s, [])
>>> rollout.argv[:4], dict(trainer.env)["NPROC_PER_NODE"]
(('swift', 'rollout', '--model', 'Qwen/Qwen2.5-3B-Instruct'), '2')
>>> print(Command("t", (("A", "1"),), ("swift", "rlhf", "--x", "a b"), "/l").shell())
env -u VLLM_PORT A=1 swift rlhf \\
    --x 'a b'
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from .flags import Flags
from .presets import PRESETS, Preset
from .settings import SettingError, Settings

__all__ = [
    "UNSET_ENV",
    "Command",
    "colocate_commands",
    "rollout_command",
    "server_commands",
    "train_node_command",
    "trainer_flags",
]

# vLLM reads VLLM_PORT as the base of its internal ports (vllm/envs.py; get_open_port in vllm/utils), and
# `swift rollout` takes its data-parallel master port from that get_open_port (swift/pipelines/infer/rollout.py,
# SwiftRolloutDeploy.__init__): an inherited VLLM_PORT equal to the HTTP port makes the server unreachable.
# No child of a recipe sees it.
UNSET_ENV = ("VLLM_PORT",)
SMOKE_MODEL_ARGS = ("--model_type", "qwen2", "--template", "qwen2_5")  # make smoke's tiny Qwen2.5-shaped model
SERVER_FLAGS = ("vllm_server_host", "vllm_server_port", "vllm_server_group_port", "vllm_server_base_url")


@dataclass(frozen=True)
class Command:
    """One process to start: a title, the variables it gets, its argv, its log file."""

    title: str
    env: tuple[tuple[str, str], ...]
    argv: tuple[str, ...]
    log: str

    def environment(self, base: Mapping[str, str]) -> dict[str, str]:
        """``base`` without :data:`UNSET_ENV`, plus this command's variables."""
        return {**{k: v for k, v in base.items() if k not in UNSET_ENV}, **dict(self.env)}

    def shell(self) -> str:
        """The command as a pasteable ``env -u VLLM_PORT K=V ... swift ...`` line, one flag per line."""
        head = ["env", *(w for name in UNSET_ENV for w in ("-u", name)), *(f"{k}={v}" for k, v in self.env)]
        lines, group = [], [*head, *self.argv[:2]]
        for word in self.argv[2:]:
            if word.startswith("--"):
                lines.append(shlex.join(group))
                group = []
            group.append(word)
        return " \\\n    ".join([*lines, shlex.join(group)])

    def to_json(self) -> dict:
        return {"title": self.title, "env": dict(self.env), "argv": list(self.argv), "log": self.log}

    @classmethod
    def from_json(cls, data: dict) -> Command:
        return cls(data["title"], tuple(data["env"].items()), tuple(data["argv"]), data["log"])


def _no_proxy(settings: Settings, *hosts: str) -> tuple[tuple[str, str], ...]:
    # Python's requests (the trainer's vLLM client) honours http_proxy: without these a proxy in the caller's
    # environment would swallow the trainer's calls to the rollout server.
    listed = [host for host in settings.no_proxy.split(",") if host]
    value = ",".join(listed + [host for host in dict.fromkeys(hosts) if host not in listed])
    return (("no_proxy", value), ("NO_PROXY", value))


def rollout_command(settings: Settings) -> Command:
    """``swift rollout`` on ``settings.rollout_gpus``: the one-node server and the multi-node rollout host alike."""
    gpus = ",".join(settings.rollout_gpus)
    host = "127.0.0.1" if settings.layout == "server" else settings.rollout_host
    flags = Flags(["--model", settings.model, *(SMOKE_MODEL_ARGS if settings.smoke else ())])
    flags.update(
        [
            "--torch_dtype", "bfloat16",
            "--host", host,
            "--port", str(settings.rollout_port),
            "--vllm_data_parallel_size", str(len(settings.rollout_gpus)),
            "--vllm_max_model_len", str(settings.vllm_max_model_len),
            "--vllm_gpu_memory_utilization", settings.vllm_gpu_memory_utilization,
        ]
    )  # fmt: skip
    flags.update(settings.rollout_args, "ROLLOUT_ARGS")
    env = (("CUDA_VISIBLE_DEVICES", gpus), *_no_proxy(settings, "127.0.0.1", "localhost"))
    title = f"rollout server (GPU{'s' if len(settings.rollout_gpus) > 1 else ''} {gpus})"
    return Command(title, env, ("swift", "rollout", *flags.argv()), str(settings.output_dir / "rollout.log"))


def trainer_flags(settings: Settings, extra: Sequence[str]) -> Flags:
    """The ``swift rlhf`` flags: the task preset, the layout, the smoke run, then the user's ``extra`` flags."""
    preset = PRESETS[settings.task]
    flags = Flags(["--rlhf_type", "grpo"])
    flags.update(_task_words(settings, preset))
    flags.update(_eval_words(settings, preset))
    layout = _colocate_words if settings.layout == "colocate" else _server_words
    flags.update(layout(settings, preset))
    if settings.smoke:
        flags.update(_smoke_words(preset))
    _check_extra(settings, extra)
    flags.update(extra)
    return flags


def _task_words(settings: Settings, preset: Preset) -> list[str]:
    return [
        "--model", settings.model,
        "--torch_dtype", "bfloat16",
        "--dataset", settings.dataset,
        "--external_plugins", str(settings.repo / "swift_plugins" / "plugin.py"),
        *preset.args,
        # ms-swift 3.x sampled with top_k 50, top_p 0.9 (the runs its GRPO docs show); 4.x defaults to
        # -1 / 1.0 (swift/rlhf_trainers/args_mixin.py, RolloutTrainerArgumentsMixin).  Pass 3.x's so curves compare.
        "--temperature", "1.0",
        "--top_k", "50",
        "--top_p", "0.9",
        "--warmup_ratio", "0.01",
        "--dataloader_num_workers", "4",
        "--save_steps", "100",
        "--save_total_limit", "20",
        # Weights only: ZeRO-3 optimizer states are ~16 bytes per parameter per checkpoint (~1 TB for 20
        # checkpoints of a 3B model).  RESUME=auto continues from such a checkpoint (see runs.resume_flags).
        "--save_only_model", "true",
        "--logging_steps", "1",
        "--log_completions", "true",
        "--report_to", settings.report_to,
        "--output_dir", str(settings.output_dir),
    ]  # fmt: skip


def _eval_words(settings: Settings, preset: Preset) -> list[str]:
    # Held-out evaluation every eval_steps.  ms-swift 4.x defaults split_dataset_ratio to 0 (3.x: 0.01), so
    # without this nothing is evaluated.  VAL_DATASET: none | a dataset; default: a local DATASET's sibling
    # "<name>.test.<ext>" (what `generate --test-size` writes), else 1% of DATASET.
    val = settings.val_dataset
    dataset = Path(settings.dataset)
    sibling = dataset.with_name(f"{dataset.stem}.test{dataset.suffix}")
    if not val and dataset.suffix and dataset.is_file() and sibling.is_file():
        val = str(sibling)
    if val == "none":
        return ["--eval_strategy", "no"]
    if not val:
        return ["--split_dataset_ratio", "0.01", "--eval_steps", str(preset.eval_steps)]
    return ["--val_dataset", val, "--eval_steps", str(preset.eval_steps)]


def _server_words(settings: Settings, preset: Preset) -> list[str]:
    # Full fine-tune with ZeRO-3 against a `swift rollout` server: the 3-GPU and the multi-node layout.
    return [
        "--tuner_type", "full",
        "--deepspeed", "zero3",
        *preset.server_args,
        "--num_iterations", "1",
        "--use_vllm", "true",
        "--vllm_mode", "server",
        "--vllm_server_host", settings.rollout_host,
        "--vllm_server_port", str(settings.rollout_port),
        "--vllm_server_group_port", str(settings.group_port),
    ]  # fmt: skip


def _colocate_words(settings: Settings, preset: Preset) -> list[str]:
    # LoRA with vLLM in the trainer's process: the 1-GPU layout.  vLLM takes VLLM_GPU_MEMORY_UTILIZATION of the
    # card while generating and sleeps (--sleep_level 1) during the update; model and optimizer are offloaded
    # to CPU while vLLM generates.
    return [
        "--tuner_type", "lora",
        "--lora_rank", "32",
        "--lora_alpha", "64",
        "--target_modules", "all-linear",
        *preset.colocate_args,
        "--num_iterations", "1",
        "--gradient_checkpointing", "true",
        "--use_vllm", "true",
        "--vllm_mode", "colocate",
        "--vllm_gpu_memory_utilization", settings.vllm_gpu_memory_utilization,
        "--vllm_max_model_len", str(settings.vllm_max_model_len),
        "--sleep_level", "1",
        "--offload_model", "true",
        "--offload_optimizer", "true",
    ]  # fmt: skip


def _smoke_words(preset: Preset) -> list[str]:
    # SMOKE=1: make smoke's tiny model, a few short steps, eval and one checkpoint; the rest as in the run.
    words = [
        *SMOKE_MODEL_ARGS,
        "--check_model", "false",
        "--max_length", "512",
        "--max_completion_length", "64",
        "--gradient_accumulation_steps", "2",
        "--max_steps", "4",
        "--save_steps", "4",
        "--eval_steps", "2",
        "--report_to", "none",
    ]  # fmt: skip
    return words if preset.smoke_data == "generated" else [*words, "--split_dataset_ratio", "0.25"]


def _check_extra(settings: Settings, extra: Sequence[str]) -> None:
    # The flags that pair the trainer with the server come from the launcher's settings: changing them behind
    # its back would point the trainer at a server the launcher does not run (or check).
    for name in Flags(extra, "the extra arguments").names():
        if name in SERVER_FLAGS:
            fix = {
                "server": "set ROLLOUT_PORT / ROLLOUT_GROUP_PORT instead",
                "train": "set ROLLOUT_HOST / ROLLOUT_PORT / ROLLOUT_GROUP_PORT instead",
            }.get(settings.layout, "this recipe runs vLLM inside the trainer (colocate); a server needs a 3-GPU recipe")
            raise SettingError(
                f"--{name} in the extra arguments would point the trainer away from the rollout server this "
                f"launcher runs and checks; {fix}"
            )


def server_commands(settings: Settings, extra: Sequence[str]) -> tuple[Command, Command]:
    """The one-node server layout: the rollout server and the trainer."""
    flags = trainer_flags(settings, extra)
    env = (
        ("CUDA_VISIBLE_DEVICES", ",".join(settings.train_gpus)),
        ("NPROC_PER_NODE", str(len(settings.train_gpus))),
        ("MASTER_PORT", str(settings.master_port)),
        *_no_proxy(settings, "127.0.0.1", "localhost"),
    )
    trainer = Command(
        f"trainer (GPUs {','.join(settings.train_gpus)})",
        env,
        ("swift", "rlhf", *flags.argv()),
        str(settings.output_dir / "train.log"),
    )
    return rollout_command(settings), trainer


def colocate_commands(settings: Settings, extra: Sequence[str]) -> tuple[Command]:
    """The one-GPU layout.  NPROC_PER_NODE=1 makes swift launch through torchrun, which sets the
    RANK/WORLD_SIZE that vLLM's colocated (external_launcher) engine expects."""
    gpu = settings.train_gpus[0]
    env = (("CUDA_VISIBLE_DEVICES", gpu), ("NPROC_PER_NODE", "1"), ("MASTER_PORT", str(settings.master_port)))
    argv = ("swift", "rlhf", *trainer_flags(settings, extra).argv())
    return (Command(f"trainer with colocated vLLM (GPU {gpu})", env, argv, str(settings.output_dir / "train.log")),)


def train_node_command(settings: Settings, extra: Sequence[str]) -> Command:
    """One training node of the multi-node layout."""
    gpus = ",".join(settings.train_gpus)
    env = (
        ("CUDA_VISIBLE_DEVICES", gpus),
        ("NPROC_PER_NODE", str(len(settings.train_gpus))),
        ("NNODES", str(settings.nnodes)),
        ("NODE_RANK", str(settings.node_rank)),
        ("MASTER_ADDR", settings.master_addr),
        ("MASTER_PORT", str(settings.master_port)),
        *_no_proxy(settings, "127.0.0.1", "localhost", settings.rollout_host, settings.master_addr),
    )
    return Command(
        f"trainer node {settings.node_rank}/{settings.nnodes} (GPUs {gpus})",
        env,
        ("swift", "rlhf", *trainer_flags(settings, extra).argv()),
        str(settings.output_dir / f"train-node{settings.node_rank}.log"),
    )
