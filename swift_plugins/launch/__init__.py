"""The GRPO launcher behind the ``shell/*.sh`` GPU recipes (standard library only: DRY_RUN needs no torch).

``python -m swift_plugins.launch countdown_3gpu [swift rlhf flags...]`` reads its settings from the
environment (:mod:`.settings`), builds the commands from the task presets (:mod:`.presets`,
:mod:`.commands`), checks them and the host (:mod:`.plan_checks`, :mod:`.host_checks`), prints them
(DRY_RUN) or runs them (:mod:`.processes`, :mod:`.runs`, :mod:`.results`): :mod:`.recipes`.
"""

__all__: list[str] = []
