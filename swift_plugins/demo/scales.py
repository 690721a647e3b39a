"""The demo's two scales, one row each: GRPO's length and batch, vLLM's flags, the selection's candidates, the
evaluation batch, and the precision. The scale is chosen from the hardware (``DEMO_SCALE`` to force it): ``gpu``
when torch sees a CUDA device, else ``cpu``.

>>> choose_scale("auto", "NVIDIA H100")[0].name, choose_scale("cpu", "NVIDIA H100")[1]
('gpu', 'DEMO_SCALE=cpu (a CUDA device is visible: NVIDIA H100)')
>>> by_scale("grpo_steps")
'16 (cpu) / 150 (gpu)'
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["SCALES", "Scale", "by_scale", "choose_scale"]


@dataclass(frozen=True)
class Scale:
    """What a scale runs: GRPO's length and batch, how many GRPO checkpoints are evaluated, the selection's
    candidates, the evaluation batch, the precision."""

    name: str
    grpo_steps: int
    grpo_evals: int
    eval_batch: int  # transformers evaluation batch
    grpo_args: tuple[str, ...]
    vllm_args: tuple[str, ...]  # GRPO's flags when vLLM generates on a GPU
    vllm_model_len: int  # tokens vLLM holds a sequence, unless the task asks for more
    select_candidates: int = 0  # the selection answers the first this many training rows (0: every one)
    completion_cap: int | None = None  # the most tokens a completion has, whatever the task's own length
    base_limit: int = 0  # the base model answers the first this many held-out rows (0: every one)
    bf16: bool = False  # GRPO in bfloat16 autocast over the float32 weights, on a CPU with AVX-512


SCALES = {
    # 32 completions a step with bfloat16 autocast over the float32 weights (benchmarks/bench_grpo_cpu.py); a
    # constant rate, so that the last of a few steps teach as much as the first (swift's cosine ends at 0).
    "cpu": Scale(
        "cpu", 16, 1, 50, ("--per_device_train_batch_size", "32", "--lr_scheduler_type", "constant"), (), 512,
        select_candidates=160, completion_cap=256, bf16=True, base_limit=100,
    ),
    # The one-H100 run of the README: 64 completions a step, float32; a third of the card is ample for vLLM.
    "gpu": Scale("gpu", 150, 3, 250, ("--per_device_train_batch_size", "64"), ("--vllm_gpu_memory_utilization", "0.3"),
                 512),
}  # fmt: skip


def by_scale(field: str, every: str = "every one") -> str:
    """A field of every scale, as ``--help`` shows a default that depends on it (0 shown as ``every``)."""
    return " / ".join(f"{getattr(scale, field) or every} ({name})" for name, scale in SCALES.items())


def choose_scale(requested: str, cuda_device: str | None) -> tuple[Scale, str]:
    """The scale ``DEMO_SCALE=requested`` (``auto``, ``cpu`` or ``gpu``) means on hardware with ``cuda_device`` (or
    none), and why."""
    if requested == "cpu":
        return SCALES["cpu"], "DEMO_SCALE=cpu" + (f" (a CUDA device is visible: {cuda_device})" if cuda_device else "")
    if cuda_device is None:
        if requested == "gpu":
            return SCALES["gpu"], "DEMO_SCALE=gpu, but torch sees no CUDA device"
        return SCALES["cpu"], "torch sees no CUDA device"
    return SCALES["gpu"], ("DEMO_SCALE=gpu; " if requested == "gpu" else "") + f"CUDA device visible ({cuda_device})"
