"""The commands a recipe runs, as argv lists built from the settings: pure, no process started.

>>> from pathlib import Path
>>> from .settings import Settings
>>> s = Settings.from_env("countdown_3gpu", {"OUTPUT_DIR": "/runs/a"}, Path("/repo"))
>>> rollout, trainer = rollout_command(s), trainer_command(s, trainer_flags(s, []))
>>> rollout.argv[:4], dict(trainer.env)["NPROC_PER_NODE"]
(('swift', 'rollout', '--model', 'Qwen/Qwen2.5-3B-Instruct'), '2')
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..core.commands import Command
from ..core.errors import SettingError
from ..core.files import held_out_path
from ..core.flags import Flags
from ..integration.vllm_cpu import BF16_ROLLOUT, EAGER
from .settings import Settings

__all__ = ["ROLLOUT_LOG", "TRAINER_WORDS", "Plan", "answer_weights", "cpu_trainer_words", "rollout_command",
           "selection_command", "trainer_command", "trainer_flags"]

ROLLOUT_LOG = "rollout.log"  # the rollout server's log in OUTPUT_DIR (a training node's too, where it is shared)
SMOKE_MODEL_ARGS = ("--model_type", "qwen2", "--template", "qwen2_5")  # the tiny Qwen2.5-shaped model
SERVER_FLAGS = ("vllm_server_host", "vllm_server_port", "vllm_server_group_port", "vllm_server_base_url")


@dataclass(frozen=True)
class Plan:
    """What one launch runs, built once: the settings, the commands, the trainer's flags, the flags the user gave."""

    settings: Settings
    rollout: Command | None
    trainer: Command | None
    flags: Flags  # the trainer's (empty without a trainer)
    user: frozenset[str]
    selection: Command | None = None  # SELECT_SAMPLES: run on this host before the server and the trainer

    def origin(self, flag: str, value: object, setting: str) -> str:
        """How the user set ``--flag value``: as that flag, or through the environment ``setting``."""
        return f"--{flag} {value}" if flag in self.user or not setting else f"{setting}={value}"


def _bypass_proxy(settings: Settings, *hosts: str) -> tuple[tuple[str, str], ...]:
    # Python's requests (the trainer's vLLM client) honours http_proxy: without these a proxy in the caller's
    # environment would swallow the trainer's calls to the rollout server.
    listed = [host for host in settings.no_proxy.split(",") if host]
    value = ",".join(listed + [host for host in dict.fromkeys(hosts) if host not in listed])
    return (("no_proxy", value), ("NO_PROXY", value))


def _plugin(settings: Settings) -> str:
    return str(settings.repo / "swift_plugins" / "plugin.py")


def rollout_command(settings: Settings) -> Command:
    """``swift rollout`` on ``settings.rollout_gpus``: the one-node server and the multi-node rollout host alike.

    The plugin is loaded so that vLLM's CPU build serves too (:mod:`swift_plugins.integration.vllm_cpu`).
    """
    gpus = ",".join(settings.rollout_gpus)
    flags = Flags(["--model", settings.model, *(SMOKE_MODEL_ARGS if settings.smoke else ())])
    flags.update(
        [
            "--external_plugins", _plugin(settings),
            "--torch_dtype", "bfloat16",
            "--host", settings.rollout_host,
            "--port", str(settings.port("ROLLOUT_PORT")),
            "--vllm_data_parallel_size", str(len(settings.rollout_gpus)),
            "--vllm_max_model_len", str(settings.vllm_max_model_len),
            "--vllm_gpu_memory_utilization", settings.vllm_gpu_memory_utilization,
        ]
    )  # fmt: skip
    flags.update(settings.rollout_args, "ROLLOUT_ARGS")
    env = (("CUDA_VISIBLE_DEVICES", gpus), *_bypass_proxy(settings, "127.0.0.1", "localhost"))
    title = f"rollout server on GPU{'s' if len(settings.rollout_gpus) > 1 else ''} {gpus}"
    return Command(title, env, ("swift", "rollout", *flags.argv()), str(settings.output_dir / ROLLOUT_LOG))


def trainer_flags(settings: Settings, extra: Sequence[str]) -> Flags:
    """The ``swift rlhf`` flags: the task preset, the layout (a rollout host: none), the smoke run, then the user's
    ``extra`` flags."""
    flags = Flags(["--rlhf_type", "grpo"])
    flags.update(_task_words(settings))
    flags.update(_eval_words(settings))
    if settings.layout.trainer is not None:
        flags.update(TRAINER_WORDS[settings.layout.trainer](settings))
        flags.update(settings.objective.swift_args())
    if settings.smoke:
        flags.update(_smoke_words(settings))
    if settings.selection is not None:
        flags.update(["--dataset", str(settings.selected)])
    if settings.dynamic_sample:
        flags.update(["--dynamic_sample", "true", "--max_resample_times", str(settings.dynamic_sample)])
    _check_extra(settings, extra)
    flags.update(extra)
    if settings.dynamic_sample:
        flags.update(["--reward_weights", *answer_weights(settings.task.accuracy_reward.name, flags)])
    return flags


def answer_weights(accuracy: str, flags: Flags) -> list[str]:
    """DYNAMIC_SAMPLE's ``--reward_weights``: 1 for the task's ``accuracy`` reward, 0 for the others (logged, not
    trained on), unless the user gave weights (:func:`~.advice.advise` warns when they weigh another reward).
    ms-swift judges a group's spread on the weighted sum of its rewards (swift/rlhf_trainers/grpo_trainer.py,
    compute_std): with the format reward in it, a group of wrong answers that differ in format would pass as one
    that teaches.

    >>> answer_weights("external_countdown", Flags(["--reward_funcs", "external_countdown", "think_answer_format"]))
    ['1', '0']
    """
    given = flags.values("reward_weights")
    if given is not None:
        return given
    rewards = flags.values("reward_funcs") or []
    if accuracy not in rewards:
        raise SettingError(
            f"DYNAMIC_SAMPLE judges groups on the task's accuracy reward {accuracy}, which --reward_funcs "
            f"{' '.join(rewards)} lacks: add it, give --reward_weights yourself, or unset DYNAMIC_SAMPLE"
        )
    return ["1" if name == accuracy else "0" for name in rewards]


def selection_command(settings: Settings, flags: Flags, python: str = "python") -> Command:
    """``python -m swift_plugins select``: DATASET's rows the model solves sometimes, answered as the trainer
    samples (its model, temperature, top-k, top-p, completion length, system prompt), on the GPUs vLLM serves from
    (the trainer's, where it generates itself); the trainer's ``--dataset`` is its output."""
    band = settings.selection
    argv = [python, "-m", "swift_plugins", "select", flags.value("model"), "--task", settings.task.name,
            "--candidates", settings.dataset, "--out", str(settings.selected), "--samples", str(band.samples),
            "--band", f"{band.least}-{band.upper}",
            "--max-new-tokens", flags.value("max_completion_length")]  # fmt: skip
    for name in ("temperature", "top_k", "top_p", "system"):
        if flags.value(name) is not None:
            argv += [f"--{name.replace('_', '-')}", flags.value(name)]
    swift = [word for name in ("model_type", "template", "torch_dtype") if flags.value(name)
             for word in (f"--{name}", flags.value(name))]  # fmt: skip
    argv += ["--", *swift, "--vllm_max_model_len", str(settings.vllm_max_model_len),
             *(EAGER if settings.layout.trainer == "cpu" else ())]  # fmt: skip
    gpus = ",".join(settings.rollout_gpus or settings.train_gpus)
    env = (("CUDA_VISIBLE_DEVICES", gpus),) if gpus else ()
    return Command(f"selection of the training rows ({band.describe()})", env, tuple(argv),
                   str(settings.output_dir / "select.log"))  # fmt: skip


def _task_words(settings: Settings) -> list[str]:
    preset, system = settings.task.preset, settings.task.system_prompt
    return [
        "--model", settings.model,
        "--torch_dtype", "bfloat16",
        "--dataset", settings.dataset,
        "--external_plugins", _plugin(settings),
        *settings.task.reward_args(),
        *preset.args,
        *(("--system", system) if system else ()),
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


def _eval_words(settings: Settings) -> list[str]:
    # Held-out evaluation every eval_steps.  ms-swift 4.x defaults split_dataset_ratio to 0 (3.x: 0.01), so
    # without this nothing is evaluated.  VAL_DATASET: none | a dataset; default: a local DATASET's sibling
    # "<name>.test.<ext>" (what `generate --test-size` writes), else 1% of DATASET.
    val, eval_steps = settings.val_dataset, str(settings.task.preset.eval_steps)
    dataset = Path(settings.dataset)
    sibling = held_out_path(dataset)
    if not val and dataset.suffix and dataset.is_file() and sibling.is_file():
        val = str(sibling)
    if val == "none":
        return ["--eval_strategy", "no"]
    if not val:
        return ["--split_dataset_ratio", "0.01", "--eval_steps", eval_steps]
    return ["--val_dataset", val, "--eval_steps", eval_steps]


def _server_words(settings: Settings) -> list[str]:
    # Full fine-tune with ZeRO-3 against a `swift rollout` server: the 3-GPU and the multi-node layout.
    return [
        "--tuner_type", "full",
        "--deepspeed", "zero3",
        *settings.task.preset.server_args,
        "--num_iterations", "1",
        "--use_vllm", "true",
        "--vllm_mode", "server",
        "--vllm_server_host", settings.rollout_host,
        "--vllm_server_port", str(settings.port("ROLLOUT_PORT")),
        "--vllm_server_group_port", str(settings.port("ROLLOUT_GROUP_PORT")),
    ]  # fmt: skip


def _colocate_words(settings: Settings) -> list[str]:
    # LoRA with vLLM in the trainer's process: the 1-GPU layout.  vLLM takes VLLM_GPU_MEMORY_UTILIZATION of the
    # card while generating and sleeps (--sleep_level 1) during the update; model and optimizer are offloaded
    # to CPU while vLLM generates.
    return [
        "--tuner_type", "lora",
        "--lora_rank", "32",
        "--lora_alpha", "64",
        "--target_modules", "all-linear",
        *settings.task.preset.colocate_args,
        "--num_iterations", "1",
        "--gradient_checkpointing", "true",
        *_colocated_vllm(settings),
        "--vllm_gpu_memory_utilization", settings.vllm_gpu_memory_utilization,
        "--sleep_level", "1",
        "--offload_model", "true",
        "--offload_optimizer", "true",
    ]  # fmt: skip


def cpu_trainer_words(bf16: bool, vllm_model_len: int | None) -> list[str]:
    """A full fine-tune in one process on the CPU, the trainer ``make smoke`` and the CPU demo share: float32
    weights (swift would derive fp16 from them), in bfloat16 autocast with ``bf16`` (a CPU with AVX-512), no
    gradient checkpointing, no worker processes, vLLM's CPU build colocated and eager (no sleep mode: not on the CPU
    platform), holding ``vllm_model_len`` tokens a sequence and sampling in the precision the trainer computes in
    (None: transformers generates).

    >>> cpu_trainer_words(True, None)[6:10]
    ['--bf16', 'true', '--use_cpu', 'true']
    """
    vllm = ["--use_vllm", "true", "--vllm_mode", "colocate", "--vllm_max_model_len", str(vllm_model_len), *EAGER,
            *(BF16_ROLLOUT if bf16 else ())] if vllm_model_len else ["--use_vllm", "false"]  # fmt: skip
    return [
        "--tuner_type", "full",
        "--torch_dtype", "float32",
        "--fp16", "false",
        "--bf16", "true" if bf16 else "false",
        "--use_cpu", "true",
        "--gradient_checkpointing", "false",
        "--dataloader_num_workers", "0",
        "--dataloader_pin_memory", "false",
        *vllm,
    ]  # fmt: skip


def _cpu_words(settings: Settings) -> list[str]:
    # The full fine-tune of the server layout, on the CPU in float32 (the tiny model's smoke run).
    return [*settings.task.preset.server_args, *cpu_trainer_words(False, settings.vllm_max_model_len)]


def _colocated_vllm(settings: Settings) -> list[str]:
    return ["--use_vllm", "true", "--vllm_mode", "colocate", "--vllm_max_model_len", str(settings.vllm_max_model_len)]


TRAINER_WORDS = {"server": _server_words, "colocate": _colocate_words, "cpu": _cpu_words}


def _smoke_words(settings: Settings) -> list[str]:
    # SMOKE=1: the tiny model, a few short steps, eval and one checkpoint; the rest as in the run.
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
    hub_sample = settings.dataset == settings.task.preset.smoke_data  # held out from the sample itself
    return [*words, "--split_dataset_ratio", "0.25"] if hub_sample else words


def _check_extra(settings: Settings, extra: Sequence[str]) -> None:
    # The flags that pair the trainer with the server come from the launcher's settings: changing them behind
    # its back would point the trainer at a server the launcher does not run (or check).
    for name in Flags(extra, "the extra arguments").names():
        if name in SERVER_FLAGS:
            raise SettingError(
                f"--{name} in the extra arguments would point the trainer away from the rollout server this "
                f"launcher runs and checks; {settings.layout.fix_server_flags}"
            )


def trainer_command(settings: Settings, flags: Flags) -> Command:
    """``swift rlhf`` with ``flags`` on this host. With NPROC_PER_NODE swift launches through torchrun, which also
    sets the RANK/WORLD_SIZE that vLLM's colocated (external_launcher) engine expects on one GPU."""
    gpus = ",".join(settings.train_gpus)
    env: list[tuple[str, str]] = []
    if settings.train_gpus:
        env += [("CUDA_VISIBLE_DEVICES", gpus), ("NPROC_PER_NODE", str(len(settings.train_gpus)))]
    if settings.layout.node:
        env += [("NNODES", str(settings.nnodes)), ("NODE_RANK", str(settings.node_rank)),
                ("MASTER_ADDR", settings.master_addr)]  # fmt: skip
    if "MASTER_PORT" in dict(settings.ports):
        env.append(("MASTER_PORT", str(settings.port("MASTER_PORT"))))
    if settings.layout.trainer == "server":
        env += _bypass_proxy(settings, "127.0.0.1", "localhost", settings.rollout_host, settings.master_addr)
    title = settings.layout.trainer_title.format(
        gpus=gpus, count=len(settings.train_gpus), rank=settings.node_rank, nnodes=settings.nnodes
    )
    log = settings.output_dir / settings.layout.log.format(rank=settings.node_rank)
    return Command(title, tuple(env), ("swift", "rlhf", *flags.argv()), str(log))
