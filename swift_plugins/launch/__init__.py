"""The GRPO launcher behind the ``shell/*.sh`` GPU recipes (standard library only: DRY_RUN needs no torch).

``python -m swift_plugins.launch countdown_3gpu [swift rlhf flags...]`` reads its settings from the environment
(:mod:`.layouts`, :mod:`.settings`, the table of :mod:`.catalog`), builds the commands (:mod:`.commands`), checks
them and this host with :mod:`swift_plugins.preflight` (:mod:`.checks`), prints them (DRY_RUN) or runs them,
following the trainer under the watch (:mod:`.follow`, :mod:`.runs`): :mod:`.recipes`, entered through
:mod:`.script`.
"""

__all__: list[str] = []
