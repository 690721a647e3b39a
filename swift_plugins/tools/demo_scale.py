"""Which scale ``make demo`` runs at, and why: GPU scale when torch sees a CUDA device, else CPU.

``python -m swift_plugins.tools.demo_scale [auto|cpu|gpu]`` prints one line for the demo script:
``SCALE GENERATION CUDA REASON…`` — the scale, GRPO's generation backend (``vllm`` colocate when vLLM is
installed at GPU scale, else ``transformers``), whether a CUDA device is visible (``yes``/``no``) and the
reason in words.

>>> choose_scale("auto", cuda_device="NVIDIA H100 80GB HBM3", vllm_version=None)
('gpu', 'transformers', 'CUDA device visible (NVIDIA H100 80GB HBM3); vLLM not installed: transformers generation')
>>> choose_scale("auto", cuda_device=None, vllm_version="0.11.0")[:2]
('cpu', 'transformers')
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import shutil
import sys

from ..core.errors import PluginError

__all__ = ["SCALES", "choose_scale", "cpu_torch_hint", "detect", "main"]

SCALES = ("auto", "cpu", "gpu")


def choose_scale(requested: str, *, cuda_device: str | None, vllm_version: str | None) -> tuple[str, str, str]:
    """(scale, generation backend, reason) for a ``DEMO_SCALE`` of ``requested`` on this hardware.

    >>> choose_scale("cpu", cuda_device="NVIDIA A100", vllm_version="0.11.0")
    ('cpu', 'transformers', 'DEMO_SCALE=cpu (a CUDA device is visible: NVIDIA A100)')
    >>> choose_scale("gpu", cuda_device=None, vllm_version=None)[2]
    'DEMO_SCALE=gpu, but torch sees no CUDA device'
    >>> choose_scale("fast", cuda_device=None, vllm_version=None)
    Traceback (most recent call last):
    swift_plugins.core.errors.PluginError: DEMO_SCALE=fast: expected cpu or gpu (or unset: chosen from the hardware)
    """
    if requested not in SCALES:
        raise PluginError(f"DEMO_SCALE={requested}: expected cpu or gpu (or unset: chosen from the hardware)")
    if requested == "cpu":
        seen = f" (a CUDA device is visible: {cuda_device})" if cuda_device else ""
        return "cpu", "transformers", f"DEMO_SCALE=cpu{seen}"
    if cuda_device is None:
        if requested == "gpu":
            return "gpu", "transformers", "DEMO_SCALE=gpu, but torch sees no CUDA device"
        return "cpu", "transformers", "torch sees no CUDA device"
    why = "DEMO_SCALE=gpu; " if requested == "gpu" else ""
    seen = f"{why}CUDA device visible ({cuda_device})"
    if vllm_version is None:
        return "gpu", "transformers", f"{seen}; vLLM not installed: transformers generation"
    return "gpu", "vllm", f"{seen}; vLLM {vllm_version} installed: vLLM colocate"


def detect() -> tuple[str | None, str | None]:
    """(name of CUDA device 0 or None, installed vLLM version or None), as this interpreter's torch sees them."""
    import torch

    cuda_device = torch.cuda.get_device_name(0) if torch.cuda.is_available() else None
    vllm_version = importlib.metadata.version("vllm") if importlib.util.find_spec("vllm") else None
    return cuda_device, vllm_version


def cpu_torch_hint(cuda_device: str | None) -> str:
    """Advice when a GPU driver is present but this torch cannot use it (a CPU build), else ``""``.

    ``make install`` installs the CPU build of torch by default, so on a GPU box ``make demo`` would
    quietly run at CPU scale; the plan line says why and how to change it.
    """
    import torch

    if cuda_device is not None or torch.version.cuda is not None or shutil.which("nvidia-smi") is None:
        return ""
    return (f"; nvidia-smi is on PATH but torch {torch.__version__} is a CPU build: for GPU scale, "
            "make clean && make demo TORCH_SPEC=torch==2.8.0 (or your CUDA build)")  # fmt: skip


def main(argv: list[str]) -> int:
    requested = argv[0] if argv else "auto"
    try:
        cuda_device, vllm_version = detect() if requested in SCALES else (None, None)
        scale, generation, reason = choose_scale(requested, cuda_device=cuda_device, vllm_version=vllm_version)
    except PluginError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(scale, generation, "yes" if cuda_device else "no", reason + cpu_torch_hint(cuda_device))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
