"""Warnings about settings that run but waste a run: no checkpoint before the end, a learning rate known to
collapse, a global batch other than the reference's, checkpoints that fill the disk, dynamic sampling that counts
another reward's spread as the answer's.

>>> from ..core.flags import Flags
>>> total_steps(Flags(["--dataset", "d#50000", "--split_dataset_ratio", "0.01", "--per_device_train_batch_size", "8",
...                    "--gradient_accumulation_steps", "8", "--num_generations", "8", "--num_train_epochs", "1"]), 2)
3093
"""

from __future__ import annotations

import math
import re
from fractions import Fraction

from ..core.console import Console
from ..core.flags import Flags
from ..core.task import TaskSpec

__all__ = ["advise", "model_billions", "total_steps"]


def _number(value: str | None) -> Fraction | None:
    try:
        return Fraction(value) if value is not None else None
    except ValueError:
        return None


def total_steps(flags: Flags, world: int) -> int | None:
    """Optimizer steps of a GRPO run, or None when unknown.

    Each step consumes per_device_train_batch_size x gradient_accumulation_steps x world completions, i.e. that
    / num_generations prompts; the last, incomplete group of prompts is dropped (TRL's RepeatSampler).
    --max_steps wins; the rows come from the ``#N`` suffixes of --dataset (unknown without them), less
    ceil(rows x split_dataset_ratio) held out (datasets' train_test_split).
    """
    max_steps = _number(flags.value("max_steps"))
    if max_steps is not None and max_steps > 0:
        return int(max_steps)
    sizes = [re.search(r"#(\d+)$", value) for value in flags.values("dataset") or []]
    names = ("per_device_train_batch_size", "gradient_accumulation_steps", "num_generations", "num_train_epochs")
    numbers = [_number(flags.value(name)) for name in names]
    if not sizes or not all(sizes) or None in numbers or not numbers[2]:
        return None
    rows = sum(int(size[1]) for size in sizes)
    batch, accumulation, generations, epochs = numbers
    prompts = batch * accumulation * world / generations
    held_out = math.ceil(rows * (_number(flags.value("split_dataset_ratio")) or 0))
    return math.floor(epochs * (rows - held_out) / prompts) if prompts > 0 else None


def model_billions(model: str) -> float | None:
    """Billions of parameters from a model's name (``...-3B-...``), or None.

    >>> model_billions("Qwen/Qwen2.5-1.5B-Instruct"), model_billions("/runs/model")
    (1.5, None)
    """
    match = re.search(r"(?:^|[-_])(\d+(?:\.\d+)?)[Bb](?:$|[-_])", model.rstrip("/").rsplit("/", 1)[-1])
    return float(match[1]) if match else None


def advise(
    flags: Flags,
    world: int,
    task: TaskSpec,
    console: Console,
    user: frozenset[str] = frozenset(),
    dynamic_sample: bool = False,
    reference_batch: bool = True,
) -> None:
    """Print the warnings (and the checkpoint size note) for a trainer of ``task`` with ``flags`` on ``world``
    processes: ``user`` names the flags the user gave, ``dynamic_sample`` says ms-swift resamples groups without
    spread, ``reference_batch`` that a step's completions should be the task's reference run's."""
    preset = task.preset
    if "output_dir" in user:
        console.warn(
            "--output_dir in the extra arguments: checkpoints go there but logs stay in OUTPUT_DIR; "
            "prefer OUTPUT_DIR=..."
        )
    steps = total_steps(flags, world)
    save = _number(flags.value("save_steps"))
    if steps is not None and save is not None and save > steps:
        console.warn(
            f"save_steps={save} exceeds the {steps} optimizer steps of this run: "
            "no intermediate checkpoint will be saved"
        )
    lr, beta = _number(flags.value("learning_rate")), _number(flags.value("beta") or "0.04")  # ms-swift's default beta
    collapses = preset.collapse and lr is not None and beta is not None
    if collapses and lr >= Fraction(preset.collapse[0]) and beta >= Fraction(preset.collapse[1]):
        console.warn(
            f"learning_rate={flags.value('learning_rate')} with beta={flags.value('beta') or '0.04'} is in the range "
            f"known to collapse on {task.name.capitalize()} (lr >= {preset.collapse[0]} with beta >= "
            f"{preset.collapse[1]}); the reference recipe uses lr {_reference(preset.server_args, 'learning_rate')}, "
            f"beta {_reference(preset.server_args, 'beta')}"
        )
    _checkpoint_size(flags, console)
    if dynamic_sample:
        _dynamic_weights(flags, task.accuracy_reward.name, console)
    if reference_batch:
        _global_batch(flags, world, preset.reference_completions, steps, console)


def _reference(args: tuple[str, ...], name: str) -> str | None:
    return Flags(args).value(name)


def _dynamic_weights(flags: Flags, accuracy: str, console: Console) -> None:
    # ms-swift judges a group's spread on the weighted sum of its rewards: any other reward with weight counts.
    rewards, weights = flags.values("reward_funcs") or [], flags.values("reward_weights") or []
    weighted = [name for name, weight in zip(rewards, weights, strict=False)
                if name != accuracy and _number(weight) != 0]  # fmt: skip
    if weighted:
        console.warn(
            f"--reward_weights {' '.join(weights)} gives {', '.join(weighted)} weight with DYNAMIC_SAMPLE: ms-swift "
            f"then counts a group whose answers differ only in {weighted[0]} as one that teaches; leave "
            f"--reward_weights out to judge the answer ({accuracy}) alone"
        )


def _checkpoint_size(flags: Flags, console: Console) -> None:
    # bf16 weights are 2 bytes per parameter; with optimizer states (fp32 master weights, two Adam moments) 16.
    billions, keep = model_billions(flags.value("model") or ""), flags.value("save_total_limit") or ""
    if billions is None or not keep.isdigit() or flags.value("tuner_type") != "full":
        return
    only = flags.value("save_only_model") or "false"
    if only.lower() in ("true", "1", "yes"):
        console.note(f"checkpoints: weights only, ~{2 * billions:.0f} GB each, at most {keep} kept")
    else:
        console.warn(
            f"--save_only_model {only}: each checkpoint also keeps the optimizer states, ~{16 * billions:.0f} GB for "
            f"{billions:g}B parameters, ~{16 * billions * int(keep):.0f} GB for {keep} checkpoints"
        )


def _global_batch(flags: Flags, world: int, reference: int, steps: int | None, console: Console) -> None:
    # More training processes than the reference run multiply the completions of each optimizer step, and so
    # divide the number of steps, at a learning rate tuned for the reference's batch.  The launcher warns instead
    # of changing the batch behind the user's back, and names the flag that restores the reference's updates.
    batch, accumulation = flags.value("per_device_train_batch_size"), flags.value("gradient_accumulation_steps")
    if not (batch or "").isdigit() or not (accumulation or "").isdigit():
        return
    batch, accumulation = int(batch), int(accumulation)
    completions = world * batch * accumulation
    if completions == reference:
        return
    if reference % (world * batch) == 0:
        keep = f"pass --gradient_accumulation_steps {reference // (world * batch)} to keep the reference's updates"
    elif reference % world == 0:
        keep = (
            "to keep the reference's updates choose --per_device_train_batch_size x --gradient_accumulation_steps = "
            f"{reference // world}"
        )
    else:
        keep = (
            f"no batch split over {world} processes gives {reference}: "
            f"scale --learning_rate by {completions}/{reference} "
            f"(linear rule) or use a process count that divides {reference}"
        )
    console.warn(
        f"{world} training processes x {batch} x {accumulation} = {completions} completions per optimizer step, "
        "not the "
        f"reference's {reference}{f': {steps} steps' if steps else ''} at a learning rate tuned for {reference}; {keep}"
    )
