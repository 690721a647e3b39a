"""ms-swift glue, in one place: the adapters every task's ``swift_adapter`` builds on, and vLLM's CPU build.

:mod:`.swift_adapter` (the preprocessor, dataset registration, reward classes, the shared format rewards) and
:mod:`.vllm_cpu` (what ms-swift 4.6 needs to run vLLM's CPU build) are the package's only modules, with the
tasks' own ``swift_adapter`` modules, that import ms-swift.
"""

__all__: list[str] = []
