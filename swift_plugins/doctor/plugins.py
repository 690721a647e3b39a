"""ms-swift's own vLLM plugin, and the ``VLLM_PLUGINS`` value that leaves it out where it would break vLLM.

ms-swift 4.6.0 declares a vLLM general plugin, ``swift_uembed`` (``swift.model.models.qwen:register_uembed_model``),
which vLLM runs in every engine process. It imports ``vllm.model_executor.models.qwen3_5``, which vLLM 0.11 lacks
(every engine dies with ``ModuleNotFoundError``), and torchvision, which vLLM's CPU build has no build of. vLLM's
``VLLM_PLUGINS`` (a comma-separated allow-list of plugin names, every group) is the switch; a user's own value
wins. The package's plugin (:mod:`swift_plugins.plugin`, loaded by every ``swift rlhf``/``rollout``/``infer`` it
starts, before vLLM starts an engine) calls :func:`leave_out_swift_plugin`; the doctor reports the same rule.

>>> print(swift_plugin_problem(("swift_uembed",), "0.11.0", has_qwen3_5=False, torchvision=True))
vLLM 0.11.0 has no vllm.model_executor.models.qwen3_5, which ms-swift's vLLM plugin swift_uembed imports
>>> swift_plugin_problem(("swift_uembed",), "0.23.0", has_qwen3_5=True, torchvision=True) is None
True
"""

from __future__ import annotations

import importlib.metadata
import os
from collections.abc import Iterable, MutableMapping, Sequence

from .environment import VLLM_DISTRIBUTIONS, find_distribution, read_package, swift_vllm_plugins, vllm_has_module

__all__ = [
    "PLUGIN_GROUPS",
    "SWIFT_VLLM_PLUGIN",
    "leave_out_swift_plugin",
    "swift_plugin_problem",
    "swift_plugin_problem_here",
    "vllm_plugins_without_swift",
]

SWIFT_VLLM_PLUGIN = "swift_uembed"
PLUGIN_GROUPS = ("vllm.general_plugins", "vllm.platform_plugins")


def swift_plugin_problem(
    declared: Sequence[str], vllm: str | None, *, has_qwen3_5: bool | None, torchvision: bool
) -> str | None:
    """Why ms-swift's vLLM plugin (when ``declared`` among ms-swift's entry points) would stop a ``vllm`` engine
    here, or None: vLLM lacks the qwen3_5 module it imports, or torchvision is not installed."""
    if SWIFT_VLLM_PLUGIN not in declared or vllm is None:
        return None
    if has_qwen3_5 is False:
        return (
            f"vLLM {vllm} has no vllm.model_executor.models.qwen3_5, which ms-swift's vLLM plugin "
            f"{SWIFT_VLLM_PLUGIN} imports"
        )
    if not torchvision:
        return f"torchvision is not installed, and ms-swift's vLLM plugin {SWIFT_VLLM_PLUGIN} imports it"
    return None


def swift_plugin_problem_here(path: Sequence[str] | None = None) -> str | None:
    """:func:`swift_plugin_problem` for the packages installed on ``path`` (default ``sys.path``)."""
    vllm = find_distribution(VLLM_DISTRIBUTIONS, path)
    if vllm is None:
        return None
    return swift_plugin_problem(
        swift_vllm_plugins(find_distribution(("ms-swift",), path)),
        read_package(vllm, "vllm").version or "(version unreadable)",
        has_qwen3_5=vllm_has_module(vllm),
        torchvision=find_distribution(("torchvision",), path) is not None,
    )


def vllm_plugins_without_swift(names: Iterable[str]) -> str:
    """A ``VLLM_PLUGINS`` value that loads every plugin of ``names`` but ms-swift's.

    >>> vllm_plugins_without_swift(["swift_uembed", "my_plugin"]), vllm_plugins_without_swift(["swift_uembed"])
    ('my_plugin', '')
    """
    return ",".join(name for name in dict.fromkeys(names) if name != SWIFT_VLLM_PLUGIN)


def leave_out_swift_plugin(environ: MutableMapping[str, str] | None = None) -> str | None:
    """Set ``VLLM_PLUGINS`` in ``environ`` (default ``os.environ``) to every installed vLLM plugin but ms-swift's,
    where that plugin would break vLLM here and the variable is unset; return why, or None when nothing was set."""
    environ = os.environ if environ is None else environ
    if "VLLM_PLUGINS" in environ:
        return None
    problem = swift_plugin_problem_here()
    if problem is not None:
        names = [entry.name for group in PLUGIN_GROUPS for entry in importlib.metadata.entry_points(group=group)]
        environ["VLLM_PLUGINS"] = vllm_plugins_without_swift(names)
    return problem
