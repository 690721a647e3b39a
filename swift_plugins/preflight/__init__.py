"""Preflight: what would fail only minutes later, inside ms-swift or vLLM, fails before anything starts, in one line.

Standard library only (a DRY_RUN imports no torch); the launcher (:mod:`swift_plugins.launch.checks`) gives each
check what of its plan it reads.

- :mod:`.trainer`: the trainer's flags: the logger, the batch arithmetic, the reward weights, vLLM's length (pure);
- :mod:`.paths`: the plugin, a local model, every row of a local data file (the task's own row rules);
- :mod:`.host`: this host: the GPUs, swift's interpreter, the stack and modules it imports, free ports, and every
  ``swift`` command parsed by the installed ms-swift's own argument classes;
- :mod:`.advice`: warnings about settings that run but waste a run;
- :mod:`.table`: a settings table rendered as the ``Settings`` part of a ``--help``.

>>> from .trainer import check_reward_weights
>>> from ..core.flags import Flags
>>> check_reward_weights(Flags(["--reward_funcs", "accuracy", "format", "--reward_weights", "1"]))
Traceback (most recent call last):
...
swift_plugins.core.errors.SettingError: --reward_weights 1 gives 1 weight(s) to the 2 rewards of --reward_funcs ...
"""

__all__: list[str] = []
