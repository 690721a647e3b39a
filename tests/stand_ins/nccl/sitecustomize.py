"""Test-only stand-in for NCCL: what lets ms-swift's server-mode GRPO run on a CPU, with everything else real.

On ``PYTHONPATH`` of both the trainer and ``swift rollout`` (Python imports ``sitecustomize`` at start-up, so it
also reaches the server's spawned vLLM worker, which a ``--external_plugins`` file reaches only after vLLM's
modules are bound). Each module below is patched right after it is first imported; each patch answers one failure
seen on a CPU (docs/server_mode_cpu.md), in the order they appear:

- ``accelerate.state``: under torchrun on a CPU, accelerate picks no distributed backend unless ``cpu=True``, which
  turns DeepSpeed off (then transformers counts 1 process and DeepSpeed 2). Here it picks gloo, ``MULTI_CPU``.
- ``vllm...pynccl``: without libnccl, ``PyNcclCommunicator`` disables itself before setting ``.device``; the
  stand-in broadcasts over gloo, on the ``StatelessProcessGroup``'s own store. This is the only thing NCCL does in
  the weight sync.
- ``swift.utils.torch_utils``: ``synchronize`` calls ``torch.cuda.synchronize``; a CPU has nothing to wait for.
- ``swift.rlhf_trainers.vllm_client``: it enters ``get_torch_device().device(...)``; ``torch.cpu`` has no ``device``.
- ``swift.pipelines.infer.rollout``: the server's in-place ``load_weights`` fails on vLLM's CPU backend (packed
  linear weights have no ``weight_loader``); the received tensors are kept and loaded in
  ``process_weights_after_loading`` through vLLM's checkpoint-format reload, as ``swift_plugins.integration.vllm_cpu``
  does for colocate. ``NCCL_STAND_IN_SERVER_LOAD=in-place`` leaves swift's own load in place: the server then fails
  to load every sync, logs it and keeps generating with its first weights, while the trainer goes on (the failure
  class the watch's ``stale-server`` rule catches).
"""

import contextlib
import importlib.abc
import importlib.util
import os
import sys
from datetime import timedelta


def _gloo_backend_under_torchrun(state) -> None:
    prepare = state.PartialState._prepare_backend

    def prepare_backend(self, cpu=False, sagemaker_dp=False, backend=None):
        backend, distributed_type = prepare(self, cpu, sagemaker_dp, backend)
        if distributed_type == state.DistributedType.NO and int(os.environ.get("WORLD_SIZE", 1)) > 1:
            return "gloo", state.DistributedType.MULTI_CPU
        return backend, distributed_type

    state.PartialState._prepare_backend = prepare_backend


class GlooCommunicator:
    """``PyNcclCommunicator``'s constructor and ``broadcast``, over a gloo group on the group's TCP store."""

    def __init__(self, group, device, library_path=None):
        import torch
        from torch.distributed import PrefixStore
        from torch.distributed.distributed_c10d import ProcessGroupGloo

        self.group, self.rank, self.world_size = group, group.rank, group.world_size
        self.device = torch.device("cpu")
        self.available, self.disabled = True, False
        store = PrefixStore("nccl-stand-in", group.store)
        self._gloo = ProcessGroupGloo(store, group.rank, group.world_size, timedelta(minutes=10))

    def broadcast(self, tensor, src, stream=None):
        from torch.distributed.distributed_c10d import BroadcastOptions

        options = BroadcastOptions()
        options.rootRank, options.rootTensor = src, 0
        self._gloo.broadcast([tensor], options).wait()


def _communicate_over_gloo(pynccl) -> None:
    pynccl.PyNcclCommunicator = GlooCommunicator


def _synchronize_nothing_on_cpu(torch_utils) -> None:
    synchronize = torch_utils.synchronize

    def synchronize_if_cuda(device=None):
        import torch

        if torch.cuda.is_available():
            synchronize(device)

    torch_utils.synchronize = synchronize_if_cuda


def _cpu_device_context(vllm_client) -> None:
    import torch

    if not hasattr(torch.cpu, "device"):
        torch.cpu.device = lambda device: contextlib.nullcontext()


def _reload_received_weights(rollout) -> None:
    if os.environ.get("NCCL_STAND_IN_SERVER_LOAD") == "in-place":
        return
    extension = rollout.WeightSyncWorkerExtension

    def keeping(update):
        def update_and_keep(self, *args, **kwargs):
            model, received = self.model_runner.model, self.__dict__.setdefault("_received", {})
            model.load_weights = lambda weights: received.update(weights)  # shadows the method for this call
            try:
                update(self, *args, **kwargs)
            finally:
                del model.load_weights

        return update_and_keep

    finish = extension.process_weights_after_loading

    def reload_then_finish(self):
        received = self.__dict__.pop("_received", {})
        if received:
            self.model_runner.reload_weights(weights_iterator=iter(received.items()), is_checkpoint_format=True)
        finish(self)

    extension.update_flattened_params = keeping(extension.update_flattened_params)
    extension.update_named_param = keeping(extension.update_named_param)
    extension.process_weights_after_loading = reload_then_finish


PATCHES = {
    "accelerate.state": _gloo_backend_under_torchrun,
    "vllm.distributed.device_communicators.pynccl": _communicate_over_gloo,
    "swift.utils.torch_utils": _synchronize_nothing_on_cpu,
    "swift.rlhf_trainers.vllm_client": _cpu_device_context,
    "swift.pipelines.infer.rollout": _reload_received_weights,
}


class PatchAfterImport(importlib.abc.MetaPathFinder):
    """Runs ``PATCHES[name]`` on a module right after it is executed, before its importer sees it."""

    def find_spec(self, name, path=None, target=None):
        if name not in PATCHES:
            return None
        sys.meta_path.remove(self)
        try:
            spec = importlib.util.find_spec(name)
        finally:
            sys.meta_path.insert(0, self)
        if spec is None or spec.loader is None:
            return spec
        execute = spec.loader.exec_module

        def execute_and_patch(module):
            execute(module)
            PATCHES[name](module)

        spec.loader.exec_module = execute_and_patch
        return spec


sys.meta_path.insert(0, PatchAfterImport())
