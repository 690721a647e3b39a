"""The demo's settings: one typed field each (:mod:`swift_plugins.core.fields`), read from the environment once,
here, by :func:`read_demo_settings` and :func:`read_objective`; ``--help`` and the refusals come from the fields.

The settings the demo shares with the recipes (``DRY_RUN``, the watch's, ``LOSS_TYPE`` and the objective's) mean
what the launcher's rows say. A setting a recipe reads and the demo does not (``MODEL``, ``DATASET``), or one of
another task's (``GYM_SETTINGS`` with Countdown), is refused in one line, as a recipe refuses another recipe's:
set, it would be ignored without a word.

>>> read_demo_settings({"SFT_STEPS": "12", "EVAL_SPLIT": "dev"}).sft_steps
12
>>> read_demo_settings({"DATASET": "rows.jsonl"})  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
swift_plugins.core.errors.SettingError: DATASET is not a setting of countdown_demo: unset it (it is read by ...)
>>> read_demo_settings({"GYM_SETTINGS": "max_terms=2"})
Traceback (most recent call last):
...
swift_plugins.core.errors.SettingError: GYM_SETTINGS is not a setting of countdown_demo: unset it (it is read \
with TASK=gym:<name>)
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field, replace

from ..core.errors import SettingError
from ..core.fields import (
    Check,
    SettingHelp,
    boolean,
    choice,
    help_rows,
    read_settings,
    setting,
    settings_section,
    whole,
)  # fmt: skip
from ..core.objective import Objective
from ..core.task import load
from ..launch.catalog import ALL, refusal
from ..launch.layouts import LAYOUTS, recipe_named
from ..tasks import registered, task_named, task_names
from ..watch.live import watch_mode, watch_thresholds
from ..watch.rules import Thresholds
from .scales import by_scale
from .task import DEFAULT_TASK, HELD_OUT

__all__ = [
    "DEMO_OBJECTIVE", "SCRIPT", "TASK_ONLY", "DemoSettings", "read_demo_settings", "read_objective", "refused",
    "settings_help",
]  # fmt: skip

SCRIPT = "countdown_demo"
# the demo's GRPO objective, chosen on dev rows and kept after test rows (docs/measurements.md): GSPO's sequence ratio
# with vLLM's sampling corrected; the recipes keep the card's (core/objective.py)
DEMO_OBJECTIVE = {"importance_sampling_level": "sequence", "rollout_correction": "token_truncate"}
# the settings only some tasks read (their Demo.settings): set with another task, each is refused
TASK_ONLY = frozenset(name for task in registered() if task.demo for name in task.demo.settings)
DEFAULT_THRESHOLDS = Thresholds()
SHARED_RECIPE = "gym_1gpu"  # the recipe whose rows of the shared settings the demo's help shows


def _launcher(name: str) -> SettingHelp:
    """The launcher's row of ``name``, with the default the recipe the demo is closest to gives it."""
    entry = next(entry for entry in ALL if entry.name == name)
    recipe = recipe_named(SHARED_RECIPE)
    return SettingHelp(name, entry.meaning, (entry.default(recipe, LAYOUTS[recipe.layouts[0]]),), entry.allowed)


def _select_samples(name: str, text: str) -> int:
    samples = whole(0).parse(name, text)
    if samples == 1:
        raise SettingError(f"{name}=1: a solve rate needs at least 2 answers a puzzle (0: no selection)")
    return samples


@dataclass(frozen=True)
class DemoSettings:
    """Every setting of a demo run as the environment gives it (None: the scale's)."""

    task: str = setting("TASK", DEFAULT_TASK, "the task the model learns",
                        Check(lambda name, text: text, task_names(lambda task: task.demo is not None)))
    scale: str = setting("DEMO_SCALE", "auto", "the scale: GRPO's steps and batch, the selection's candidates, the "
                         "evaluation batch", choice("cpu", "gpu"), shown="gpu when torch sees a CUDA device, else cpu")
    output_dir: str = setting("OUTPUT_DIR", "", "model/ data/ sft/ grpo/ eval/ comparison.md (a rerun keeps an "
                              "earlier sft/ and grpo/ as sft.1/, grpo.1/)", Check(lambda name, text: text, ""),
                              shown="output/<scale>_demo; with another TASK, output/<scale>_demo-<name>")
    sft_steps: int = setting("SFT_STEPS", 36, "cold-start SFT steps (8 rows each)", whole(1))
    grpo_steps: int | None = setting("GRPO_STEPS", None, "GRPO steps", whole(1), shown=by_scale("grpo_steps"))
    grpo_evals: int | None = setting("GRPO_EVALS", None, "GRPO checkpoints saved and evaluated, evenly spaced (the "
                                     "last at the end)", whole(1), shown=by_scale("grpo_evals"))
    eval_puzzles: int = setting("EVAL_PUZZLES", HELD_OUT, "held-out rows, from the first, evaluated after every "
                                "stage", whole(1, HELD_OUT, f"a positive integer up to {HELD_OUT} (each held-out "
                                "split's rows)"))
    eval_split: str = setting("EVAL_SPLIT", "test", "the held-out split every stage is evaluated on: test for the "
                              "figures a run reports, dev to choose a setting on rows no reported figure comes from",
                              choice("test", "dev"))
    select_samples: int = setting("SELECT_SAMPLES", 8, "answers to each candidate training row before GRPO; GRPO "
                                  "trains on the rows solved sometimes", Check(_select_samples, "0 (no selection: "
                                  "GRPO on every training row), or an integer >= 2"))
    select_candidates: int | None = setting("SELECT_CANDIDATES", None, "training rows the selection answers, from "
                                            "the first", whole(0, allowed="0 (every one), or an integer up to the "
                                            "task's training rows"), shown=by_scale("select_candidates"))
    seed: int = setting("SEED", 0, "the training rows' order, the SFT order, the selection's answers and GRPO's "
                        "sampling; the dev and test rows are the same for every seed", whole(0))
    watch: str = setting("WATCH", "stop", _launcher("WATCH").meaning,
                         Check(lambda name, text: watch_mode({name: text}), _launcher("WATCH").allowed))
    thresholds: Thresholds = setting("WATCH_SET", DEFAULT_THRESHOLDS, _launcher("WATCH_SET").meaning,
                                     Check(lambda name, text: watch_thresholds({name: text}),
                                           _launcher("WATCH_SET").allowed), shown="-")
    dry_run: bool = setting("DRY_RUN", False, _launcher("DRY_RUN").meaning, boolean)
    task_env: dict[str, str] = field(default_factory=dict)  # the task's own settings (its Demo.settings), as given


def _task_rows() -> list[SettingHelp]:
    """The rows of the settings only some tasks read: the task's own, else the launcher's."""
    own = {row.name: row for task in registered() if task.demo for row in task.demo.settings_help}
    launcher = {entry.name for entry in ALL}
    return [own[name] if name in own else _launcher(name) for name in sorted(TASK_ONLY, key=lambda n: (n not in own, n))
            if name in own or name in launcher]  # fmt: skip


SETTINGS = (*help_rows(DemoSettings), *help_rows(Objective, **DEMO_OBJECTIVE), *_task_rows())


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


def read_demo_settings(env: Mapping[str, str]) -> DemoSettings:
    """The demo's settings in ``env``, each checked; :class:`SettingError` in one line for a bad value, a setting
    the demo does not read with its task, or a bad setting of the task (its own check: the gym scorers')."""
    settings = read_settings(DemoSettings, env)
    spec = task_named(settings.task)  # an unknown task: one line naming the closest
    own = spec.demo.settings if spec.demo else ()
    refusal_line = refused(env, own)
    if refusal_line:
        raise SettingError(refusal_line)
    if spec.check_environment:  # a bad setting of the task is one line now, not the trainer's first reward
        load(spec.check_environment)(dict(env))
    return replace(settings, task_env={name: env[name] for name in own if env.get(name)})


def read_objective(env: Mapping[str, str], vllm: bool) -> Objective:
    """GRPO's objective in ``env`` over the demo's (:data:`DEMO_OBJECTIVE`); where vLLM does not sample (``vllm``
    false) there is no sampling to correct, so the correction's default is off."""
    return read_settings(Objective, env, **{**DEMO_OBJECTIVE, **({} if vllm else {"rollout_correction": "off"})})
