"""Gym: every reasoning-gym dataset as a task, ``TASK=gym:<name>``; seeded data, rewards that cannot hang.

The modules: :mod:`.entries` (an entry's metadata through JSON), :mod:`.generator` (names, settings, train and
held-out rows), :mod:`.data` (the prompt, the row contract), :mod:`.bounded` and :mod:`.worker` (scores under a
hard time bound), :mod:`.rewards`, :mod:`.scoring`, :mod:`.cli`. :func:`spec` is the task of one dataset as the
registry (:mod:`swift_plugins.tasks`) gives it; ``SPEC`` is what every dataset's task shares (the rows' contract,
the rewards, the commands), which the plugin registers once.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from functools import cache

from ..core import think_answer
from ..core.fields import SettingHelp
from ..core.rewards import FORMAT
from ..core.task import Demo, Preset, Reward, TaskSpec
from .data import GYM, NO_GOLD

__all__ = ["SPEC", "spec"]

REWARDS = (
    Reward("external_gym", "swift_plugins.gym.rewards:gym_accuracy_reward", "GymAccuracy", accuracy=True),
    FORMAT,
)
# the demo settings a gym task reads: the rows' settings, and the scorers' (which the trainer's rewards read too)
DEMO_SETTINGS = ("GYM_SETTINGS", "GYM_SCORE_WORKERS", "GYM_SCORE_TIMEOUT")
ROW_SETTINGS = SettingHelp("GYM_SETTINGS", "the gym dataset's settings, as gym generate takes them",
                           ("the dataset's",), "key=value words, e.g. 'max_terms=2 max_digits=1' "
                           "(python -m swift_plugins gym list)")  # fmt: skip


def _preset(name: str) -> Preset:
    # The think/answer preset (Countdown's batches and learning rates) with the gym reward; 500 steps instead of an
    # epoch, as the generated file has the size one asks for.
    generate = ("swift_plugins", "gym", "generate", name)
    return replace(
        think_answer.PRESET,
        dataset=f"data/gym-{name}.jsonl",
        args=think_answer.task_args("--max_steps", "500"),
        eval_steps=100,
        smoke_data=(*generate, "--size", "64", "--test-size", "16", "--seed", "0", "--quiet"),
    )


def _check_settings(name: str, words: Sequence[str]) -> None:
    from .settings import parse_settings

    parse_settings(name, list(words))


def _demo(name: str, preset: Preset) -> Demo:
    # the rows of `gym generate` at the dataset's settings or GYM_SETTINGS', the cold start of `gym sft-data`, and the
    # lengths of the task's preset, as the recipes use them
    return Demo(
        generate=("swift_plugins", "gym", "generate", name), sft_data=("swift_plugins", "gym", "sft-data"),
        unit="questions", answers="cold-start answers", completion_tokens=preset.completion_tokens,
        sft_length=preset.max_length, model_len=preset.vllm_max_model_len, settings=DEMO_SETTINGS,
        settings_help=(ROW_SETTINGS,), row_settings=ROW_SETTINGS.name,
        check_row_settings=lambda words: _check_settings(name, words),
    )  # fmt: skip


def _spec(name: str) -> TaskSpec:
    preset = _preset(name)
    return TaskSpec(
        name=f"gym:{name}",
        data=GYM,
        rewards=REWARDS,
        scoring="swift_plugins.gym.scoring",
        preset=preset,
        system_prompt=think_answer.SYSTEM_PROMPT,
        held_out_hint=f"held-out rows, e.g. python -m swift_plugins gym generate {name} --size 10000 --test-size 500 "
        f"--seed 0 --out data/gym-{name}.jsonl (writes data/gym-{name}.test.jsonl beside it)",
        result_columns=GYM.columns,
        cli="swift_plugins.gym.cli",
        check_environment="swift_plugins.gym.bounded:pool_settings",
        demo=None if name in NO_GOLD else _demo(name, preset),
        no_demo=f"its rows have no gold answer to write the cold start from; the demo takes a dataset with one (not "
        f"{', '.join(sorted(NO_GOLD))})",
    )


SPEC = _spec("<name>")


@cache
def spec(name: str) -> TaskSpec:
    """The task ``gym:<name>``; :class:`~swift_plugins.core.errors.SettingError` naming the closest datasets."""
    from .generator import check_name

    check_name(name)
    return _spec(name)
