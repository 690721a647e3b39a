"""``python -m swift_plugins doctor``: is this environment one the recipes run on?

Reads the installed ms-swift, vLLM, torch, transformers, trl, DeepSpeed and reasoning-gym from their metadata
(importing none of them), torch's CUDA from its ``torch/version.py``, the GPUs and driver from ``nvidia-smi``, and
checks them against the known-good stacks (:mod:`.stacks`) and the rules no metadata states (vLLM before 0.19.1
beside transformers 5; ms-swift's vLLM plugin beside a vLLM without qwen3_5; a CPU torch on a GPU box; a CUDA 13
torch on a driver older than R580; a reasoning-gym other than the release the gym task audited). The recipes'
preflight runs it with swift's interpreter as ``python -m swift_plugins.doctor --json``, where only PYTHONPATH may
point at this checkout: the standard library and ``packaging`` (a dependency of transformers, so present wherever
ms-swift is) only. This package imports none of its modules, so that :mod:`.environment` and :mod:`.plugins`
(standard library only) serve the launcher and the plugin without ``packaging``.

- :mod:`.stacks`: the known-good stacks as data, :func:`pair_problem` (pure);
- :mod:`.environment`: the installed facts; :mod:`.plugins`: ms-swift's vLLM plugin and ``VLLM_PLUGINS``;
- :mod:`.diagnose`: the findings (pure); :mod:`.report`: the table, ``--json``, the exit status.
"""

__all__: list[str] = []
