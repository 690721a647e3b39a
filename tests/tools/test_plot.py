"""Curves of a swift run's logging.jsonl, finished or still running."""

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from swift_plugins.core.errors import DataError
from swift_plugins.core.files import write_jsonl
from swift_plugins.core.intervals import wilson
from swift_plugins.tools.plot import (
    _draw_verdicts,
    _figure,
    draw_run,
    find_log,
    plot_run,
    read_steps,
    smooth,
    smoothing_window,
)
from swift_plugins.watch import Verdict, judge

from ..helpers import TESTS

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def step_record(step: int, total: int = 3) -> dict:
    return {
        "loss": 0.01 * step,
        "grad_norm": 0.5,
        "learning_rate": 1e-6,
        "completions/mean_length": 30.0 + step,
        "completions/min_length": 12.0,
        "completions/max_length": 48.0,
        "completions/clipped_ratio": 0.5,
        "reward": 0.2 * step,
        "reward_std": 0.3,
        "frac_reward_zero_std": 0.25,
        "rewards/CountdownAccuracy/mean": 0.1 * step,
        "rewards/CountdownAccuracy/std": 0.2,
        "rewards/ThinkAnswerFormat/mean": 0.5,
        "rewards/ThinkAnswerFormat/std": 0.1,
        "kl": 0.001 * step,
        "step_time": 2.0,
        "epoch": 0.1 * step,
        "global_step/max_steps": f"{step}/{total}",
        "elapsed_time": f"{2 * step}s",
        "remaining_time": "2s",
    }


def write_log(folder: Path, lines: list[str]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    log = folder / "logging.jsonl"
    log.write_text("".join(line + "\n" for line in lines))
    return log


def test_plot_run_finds_the_versioned_run_and_skips_a_half_written_line(tmp_path):
    run = tmp_path / "output" / "v0-20260101-000000"
    lines = [json.dumps(step_record(1)), json.dumps(step_record(2)), '{"loss": 0.0, "grad_no']  # still running
    log = write_log(run, lines)
    assert find_log(tmp_path / "output") == find_log(run) == find_log(log) == log
    assert [record["step"] for record in read_steps(log)] == [1, 2]

    png = plot_run(tmp_path / "output")
    assert png == run / "curves.png"
    assert png.read_bytes().startswith(PNG_MAGIC) and png.stat().st_size > 10_000


def test_plot_run_of_a_finished_run_to_a_chosen_file(tmp_path):
    summary = {"train_runtime": 6.1, "train_loss": 0.0, "global_step/max_steps": "3/3"}
    final = {"last_model_checkpoint": "x/checkpoint-3", "log_history": [step_record(1)]}
    log = write_log(
        tmp_path / "run", [json.dumps(step_record(s)) for s in (1, 2, 3)] + [json.dumps(summary), json.dumps(final)]
    )
    assert [record["step"] for record in read_steps(log)] == [1, 2, 3]
    png = plot_run(log, tmp_path / "plots" / "run.png")
    assert png == tmp_path / "plots" / "run.png" and png.read_bytes().startswith(PNG_MAGIC)


def test_plot_run_names_the_path_when_there_is_nothing_to_plot(tmp_path):
    with pytest.raises(ValueError, match=re.escape(f"{tmp_path / 'missing'}: no such file")):
        plot_run(tmp_path / "missing")
    with pytest.raises(ValueError, match=re.escape(f"{tmp_path}: no logging.jsonl")):
        plot_run(tmp_path)
    empty = write_log(tmp_path / "v0-empty", [])
    with pytest.raises(ValueError, match=re.escape(f"{empty}: no training step logged yet")):
        plot_run(tmp_path / "v0-empty")
    summary_only = write_log(tmp_path / "v1-summary", ['{"train_runtime": 1.0}', '{"loss'])
    with pytest.raises(ValueError, match=re.escape(f"{summary_only}: no training step")):
        plot_run(summary_only)


def test_plot_command_warns_when_the_run_cannot_learn(tmp_path):
    stuck = [{**step_record(s), "completions/clipped_ratio": 1.0, "frac_reward_zero_std": 1.0} for s in range(2, 7)]
    write_log(tmp_path / "run", [json.dumps(step_record(1))] + [json.dumps(record) for record in stuck])
    result = subprocess.run(
        [sys.executable, "-m", "swift_plugins", "plot", str(tmp_path / "run")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    # the watch's verdicts (swift_plugins.watch): one line each, as `python -m swift_plugins watch` prints them
    assert "warning: truncation at step 2 (failing since step 1): completions/clipped_ratio 1.00" in result.stderr
    assert "warning: zero-spread at step 6 (failing since step 1): frac_reward_zero_std >= 0.95" in result.stderr
    assert len(result.stderr.splitlines()) == 2
    healthy = write_log(tmp_path / "healthy", [json.dumps(step_record(1))])
    assert judge(read_steps(healthy)) == []


def test_verdicts_are_drawn_on_the_panels_red_when_fatal():
    axes = _figure((4, 3)).add_subplot()
    axes.plot([1, 2, 3], [0.0, 1.0, 0.5])
    verdicts = [Verdict("truncation", False, 2, 1, "", ""), Verdict("non-finite", True, 3, 2, "", "")]
    _draw_verdicts(axes, verdicts)
    (_, warning, fatal) = axes.lines  # the curve, then a line per verdict
    assert (warning.get_xdata()[0], warning.get_color()) == (2, "darkorange")
    assert (fatal.get_xdata()[0], fatal.get_color()) == (3, "red")
    assert [text.get_text() for text in axes.texts] == ["truncation", "non-finite"]


def write_evaluation(folder: Path, accuracy: float, prompts: int = 200, first: int = 0) -> Path:
    """An evaluate folder of ``prompts`` greedy answers (prompts ``first`` on), the first ``accuracy`` of them right."""
    right = round(accuracy * prompts)
    write_jsonl(({"key": first + n, "verdict": "correct" if n < right else "wrong", "formatted": True}
                 for n in range(prompts)), folder / "examples.jsonl")  # fmt: skip
    return folder


def held_out_title_and_points(evaluations):
    figure = draw_run(TESTS / "data" / "h100_grpo_logging.jsonl", evaluations)
    held_out = figure.axes[0]
    return held_out.get_title(), [round(y, 2) for y in held_out.lines[0].get_ydata()]


def test_the_learning_curve_has_the_comparison_tables_rates_and_intervals(tmp_path):
    evals = {"base": write_evaluation(tmp_path / "base", 0.1, prompts=100),  # its first rows only: evaluate --limit
             "sft": write_evaluation(tmp_path / "sft", 0.135)}  # fmt: skip
    title, points = held_out_title_and_points(evals)
    assert title == "Held-out accuracy (100/200 prompts, greedy; 95% intervals)" and points == [10.0, 13.5]
    assert [round(100 * bound, 1) for bound in wilson(27, 200)] == [9.4, 18.9]  # sft's, as compare reports it


def test_plot_with_evaluations_draws_the_learning_curve_beside_the_rewards(tmp_path):
    write_log(tmp_path / "grpo" / "v0-run", [json.dumps(step_record(s, 12)) for s in range(1, 13)])
    evals = {name: write_evaluation(tmp_path / "eval" / name, accuracy)
             for name, accuracy in [("base", 0.0), ("sft", 0.135), ("grpo-6", 0.14), ("grpo-12", 0.16)]}  # fmt: skip
    stages = [f"{name}={folder}" for name, folder in evals.items()]
    figure = tmp_path / "fig.png"
    command = [sys.executable, "-m", "swift_plugins", "plot", str(tmp_path / "grpo"), "--out", str(figure), "--evals"]
    result = subprocess.run(
        command + stages,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    png = (tmp_path / "fig.png").read_bytes()
    assert png.startswith(PNG_MAGIC) and len(png) > 20_000
    plain = plot_run(tmp_path / "grpo", tmp_path / "plain.png")  # without evaluations: the run's own panels
    assert plain.read_bytes() != png


def test_plot_refuses_evaluations_compare_refuses(tmp_path):
    write_log(tmp_path / "run", [json.dumps(step_record(1))])
    refusals = {
        "no examples.jsonl (is this an evaluate output folder?)": {"sft": tmp_path / "none"},
        "the evaluations are not of the same prompts": {"sft": write_evaluation(tmp_path / "sft", 0.5),
                                                        "grpo": write_evaluation(tmp_path / "other", 0.5, first=500)},
    }  # fmt: skip
    for message, evaluations in refusals.items():
        with pytest.raises(DataError, match=re.escape(message)):
            plot_run(tmp_path / "run", tmp_path / "fig.png", evaluations=evaluations)
    assert not (tmp_path / "fig.png").exists()


def test_smoothing_keeps_the_mean_level_of_a_noisy_reward():
    noisy = [0.0, 0.25] * 10
    assert all(abs(value - 0.125) < 0.05 for value in smooth(noisy, 4)[2:-2])


LOGS = {"h100": TESTS / "data" / "h100_grpo_logging.jsonl", "cpu_demo": TESTS / "data" / "cpu_demo_grpo_logging.jsonl"}


def check_panels(figure, steps):
    """Each panel has data and the panels of a row fill it; a legend lies outside its panel; each labelled line is
    the moving average of the faint points of its colour, drawn over them. Returns the panels per row."""
    figure.canvas.draw()
    for axes in figure.axes:
        assert axes.lines and all(len(line.get_xdata()) for line in axes.lines), axes.get_title()
        legend = axes.get_legend()
        if legend is not None:
            assert not legend.get_window_extent().overlaps(axes.get_window_extent()), axes.get_title()
        for smoothed in (line for line in axes.lines if not line.get_label().startswith("_")):
            faint = [line for line in axes.lines if line.get_label().startswith("_")]  # matplotlib's unlabelled
            (raw,) = [line for line in faint if line.get_color() == smoothed.get_color()]
            assert list(smoothed.get_ydata()) == smooth(list(raw.get_ydata()), smoothing_window(len(steps)))
            assert smoothed.get_zorder() > raw.get_zorder()
    rows = [row.axes for row in figure.subfigs]
    assert sum(map(len, rows)) == len(figure.axes)
    for row in rows:  # no empty cell: a row of n panels is a grid of n columns
        assert sorted(c for axes in row for c in axes.get_subplotspec().colspan) == list(range(len(row)))
    return [[axes.get_title() for axes in row] for row in rows]


@pytest.mark.parametrize("name", LOGS)
def test_the_measured_logs_plot_without_an_empty_panel_or_a_legend_on_the_curves(name):
    steps = read_steps(LOGS[name])
    rows = check_panels(draw_run(LOGS[name]), steps)
    # ms-swift logs no kl at --beta 0 (both runs): its panel is left out, the other four fill two rows of two
    assert rows == [
        ["Rewards (mean over completions)", "Reward spread"],
        ["Completion length", "Truncated completions"],
    ]
    assert smoothing_window(len(steps)) == {"h100": 15, "cpu_demo": 3}[name]


def test_five_panels_fill_a_row_of_three_and_a_row_of_two(tmp_path):
    log = write_log(tmp_path / "run", [json.dumps(step_record(s, 12)) for s in range(1, 13)])
    rows = check_panels(draw_run(log), read_steps(log))
    assert [len(row) for row in rows] == [3, 2] and rows[1][1] == "KL to the reference model"
