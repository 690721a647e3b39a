"""The watch's ``since``: a checkpoint boundary whatever ``--logging_steps``, for a fall begun in the warm-up, and
for a failure at the very first steps (no checkpoint to resume from)."""

import math

from swift_plugins.watch import judge

from .test_watch import altered, format_collapse, nan_loss, steps_of


def fatal_of(steps: list[dict]):
    verdicts = judge(steps)
    fatal = [verdict for verdict in verdicts if verdict.fatal]
    assert fatal, [verdict.line() for verdict in verdicts]
    return fatal[0]


def every_fifth(steps: list[dict]) -> list[dict]:
    """The H100 log as ``--logging_steps 5`` would write it: the same records, at steps 5, 10, 15, …"""
    return [dict(record, step=5 * record["step"]) for record in steps]


def test_non_finite_since_is_the_previous_logged_step_not_the_step_before():
    steps = [{"step": step, "reward": 1.0, "loss": 0.1} for step in range(5, 50, 5)]
    steps += [{"step": step, "reward": 1.0, "loss": math.nan} for step in (50, 55, 60)]
    fatal = fatal_of(steps)
    # step 45 was healthy; the failure may have begun at 46, so checkpoint-45's weights are suspect
    assert (fatal.step, fatal.since) == (60, 45)
    assert "resume from a checkpoint saved before step 45" in fatal.advice


def test_collapse_since_counts_logged_steps_not_step_numbers():
    one = fatal_of(steps_of(altered(format_collapse, 60)))
    five = fatal_of(every_fifth(steps_of(altered(format_collapse, 60))))
    assert (five.step, five.since) == (5 * one.step, 5 * one.since)  # the same records, the same verdict
    assert five.since < 5 * 60  # before the first fallen record


def test_a_fall_begun_in_the_warm_up_gets_a_since_before_it():
    fatal = fatal_of(steps_of(altered(format_collapse, 10)))  # format reward at 0.2 from step 10 on
    assert fatal.rule == "reward-collapse" and fatal.since == 9, fatal.line()
    assert "resume from a checkpoint saved before step 9" in fatal.advice


def test_a_failure_at_the_first_step_says_to_restart_from_the_base_model():
    fatal = fatal_of(steps_of(altered(nan_loss, 1)))
    assert (fatal.step, fatal.since) == (3, 0)
    assert "restart from the base model" in fatal.advice and "before step" not in fatal.advice
    second = fatal_of(steps_of(altered(nan_loss, 2)))  # checkpoint-1 holds the weights that made step 2's NaN
    assert second.since == 1 and "restart from the base model" in second.advice


def test_a_failure_at_the_first_logged_step_counts_back_one_logging_interval():
    resumed = steps_of(altered(nan_loss, 31))[30:33]  # a run resumed from checkpoint-30, failing at once
    assert fatal_of(resumed).since == 30
    every_5 = [{"step": step, "reward": 1.0, "loss": math.nan} for step in (5, 10, 15)]  # may have begun at step 1
    assert fatal_of(every_5).since == 0
