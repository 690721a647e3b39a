"""The demo's settings, one table: what its ``--help`` lists and what it refuses.

Each row gives a setting's name, meaning, default and allowed values; ``--help`` renders them as the recipes'
``--help`` renders theirs (:func:`swift_plugins.core.fields.settings_section`). The settings the demo shares
with the recipes (``DRY_RUN``, the watch's, the gym scorers') are the launcher's own rows. A setting a recipe reads
and the demo does not (``MODEL``, ``DATASET``, ``GYM_SCORE_TIMEOUT`` with Countdown) is refused in one line, as a
recipe refuses another recipe's: set, it would be ignored without a word.

>>> refused({"DATASET": "rows.jsonl"}, ())  # doctest: +ELLIPSIS
'DATASET is not a setting of countdown_demo: unset it (it is read by ...)'
>>> refused({"GYM_SCORE_TIMEOUT": "2"}, ("GYM_SCORE_TIMEOUT",)) is None
True
>>> refused({"GYM_SETTINGS": "max_terms=2"}, ())
'GYM_SETTINGS is not a setting of countdown_demo: unset it (it is read with TASK=gym:<name>)'
"""

from __future__ import annotations

from collections.abc import Collection, Mapping

from ..core.fields import SettingHelp, help_rows, settings_section
from ..core.objective import Objective
from ..launch.catalog import ALL, refusal
from ..launch.layouts import LAYOUTS, recipe_named
from ..tasks import registered, task_names
from .task import DEFAULT_TASK

__all__ = ["DEMO_CORRECTION", "SCRIPT", "SETTINGS", "TASK_ONLY", "refused", "settings_help"]

SCRIPT = "countdown_demo"
GYM_RECIPE = "gym_1gpu"  # the recipe whose defaults of the shared settings the demo's help shows
DEMO_CORRECTION = "off"  # ROLLOUT_CORRECTION of the demo's GRPO stage where vLLM samples (without vLLM: off)
# the settings only some tasks read (their Demo.settings): set with another task, each is refused
TASK_ONLY = frozenset(name for task in registered() if task.demo for name in task.demo.settings)


def _shared(name: str) -> SettingHelp:
    """The launcher's row of ``name``, with the default the gym recipes give it."""
    entry = next(entry for entry in ALL if entry.name == name)
    recipe = recipe_named(GYM_RECIPE)
    return SettingHelp(name, entry.meaning, (entry.default(recipe, LAYOUTS[recipe.layouts[0]]),), entry.allowed)


SETTINGS = (
    SettingHelp("TASK", "the task the model learns", (DEFAULT_TASK,), task_names(lambda task: task.demo is not None)),
    SettingHelp("GYM_SETTINGS", "the gym dataset's settings, as gym generate takes them", ("the dataset's",),
                "key=value words, e.g. 'max_terms=2 max_digits=1' (python -m swift_plugins gym list)"),
    SettingHelp("DEMO_SCALE", "the scale: GRPO's steps and batch, the selection's candidates, the evaluation batch",
                ("gpu when torch sees a CUDA device, else cpu",), "cpu or gpu"),
    SettingHelp("OUTPUT_DIR", "model/ data/ sft/ grpo/ eval/ comparison.md (a rerun keeps an earlier sft/ and grpo/ "
                "as sft.1/, grpo.1/)", ("output/<scale>_demo; with TASK=gym:<name>, output/<scale>_demo-<name>",)),
    SettingHelp("SFT_STEPS", "cold-start SFT steps (8 rows each)", ("36",), "a positive integer"),
    SettingHelp("GRPO_STEPS", "GRPO steps", ("16 (cpu)", "150 (gpu)"), "a positive integer"),
    SettingHelp("GRPO_EVALS", "GRPO checkpoints saved and evaluated, evenly spaced (the last at the end)",
                ("1 (cpu)", "3 (gpu)"), "a positive integer"),
    SettingHelp("EVAL_PUZZLES", "held-out rows, from the first, evaluated after every stage", ("500",),
                "a positive integer up to 500 (each held-out split's rows)"),
    SettingHelp("EVAL_SPLIT", "the held-out split every stage is evaluated on: test for the figures a run reports, "
                "dev to choose a setting on rows no reported figure comes from", ("test",), "test or dev"),
    SettingHelp("SELECT_SAMPLES", "answers to each candidate training row before GRPO; GRPO trains on the rows "
                "solved sometimes", ("8",), "0 (no selection: GRPO on every training row), or an integer >= 2"),
    SettingHelp("SELECT_CANDIDATES", "training rows the selection answers, from the first",
                ("160 (cpu)", "every one (gpu)"),
                "0 (every one), or an integer up to the training rows (1,000; 1,500 with TASK=gym:<name>)"),
    SettingHelp("SEED", "the training rows' order, the SFT order, the selection's answers and GRPO's sampling; the "
                "dev and test rows are the same for every seed", ("0",), "a non-negative integer"),
    *help_rows(Objective, rollout_correction=DEMO_CORRECTION),
    *map(_shared, ("WATCH", "WATCH_SET", "GYM_SCORE_WORKERS", "GYM_SCORE_TIMEOUT", "DRY_RUN")),
)  # fmt: skip


def settings_help() -> str:
    """The ``Settings`` part of the demo's ``--help``."""
    return settings_section(SETTINGS)


def refused(env: Mapping[str, str], task_settings: Collection[str]) -> str | None:
    """The refusal of a setting in ``env`` that the demo does not read with a task that reads ``task_settings``
    (a recipe's, or another task's), or None."""
    own = {setting.name for setting in SETTINGS if setting.name not in TASK_ONLY or setting.name in task_settings}
    unread = sorted(name for name in TASK_ONLY - own if env.get(name))  # the demo's own, read with another task
    if unread:
        readers = task_names(lambda task: task.demo is not None and unread[0] in task.demo.settings)
        return f"{unread[0]} is not a setting of {SCRIPT}: unset it (it is read with TASK={readers})"
    return refusal(SCRIPT, own, env)
