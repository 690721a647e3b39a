"""Training curves of an ms-swift GRPO run, from its ``logging.jsonl``, as one PNG.

ms-swift 4.x writes one JSON object per logged step into ``<output_dir>/v<N>-<time>/logging.jsonl``
(keys such as ``rewards/CountdownAccuracy/mean``, ``reward_std``, ``completions/mean_length``,
``completions/clipped_ratio``, ``kl`` and ``global_step/max_steps``), then a summary line
(``train_runtime``) and a final dump (``log_history``) when training ends. A run still in progress,
whose last line may be half-written, plots too.

Each panel draws every logged step faintly and, over it, the curve smoothed by a moving average. A panel
whose keys were not logged (``kl`` at ``--beta 0``) is left out, the others fill the rows without a gap,
and each legend sits beside its panel, off the curves.

Given held-out evaluations (``evaluate`` output folders, in order), the figure is the one a person
reads at a glance instead: held-out accuracy per stage and per GRPO checkpoint with 95% intervals
(the learning curve, as :mod:`.compare` tabulates it: stages that answered other prompts are refused), beside the
training rewards smoothed over steps.

The log is read by :mod:`swift_plugins.watch.log` and judged by :mod:`swift_plugins.watch.rules`: each verdict
is a vertical line on the panels at its step, red when fatal, orange for a warning, labelled with its rule.

Example::

    plot_run(Path("output/cpu_smoke/run"))  # -> output/cpu_smoke/run/v0-<time>/curves.png
    plot_run(Path("output/cpu_demo/grpo"), evaluations={"sft": Path("eval/sft"), "grpo-12": Path("eval/grpo-12")})
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from ..core.errors import DataError
from ..watch.log import LOG_NAME, find_log, is_number, read_records, read_steps, step_records
from ..watch.rules import Verdict, judge
from .compare import compare

# find_log, read_steps and LOG_NAME are swift_plugins.watch.log's, re-exported for plot's callers.
__all__ = [
    "LOG_NAME",
    "PANELS",
    "draw_run",
    "find_log",
    "plot_run",
    "read_steps",
    "smooth",
    "smoothing_window",
]

# (title, y label, [(key, legend label)]). A panel is drawn when any of its keys was logged;
# the reward panel also takes every ``rewards/<Name>/mean`` key.
PANELS: list[tuple[str, str, list[tuple[str, str]]]] = [
    ("Rewards (mean over completions)", "reward", [("reward", "total (weighted sum)")]),
    (
        "Reward spread",
        "value",
        [("reward_std", "reward std"), ("frac_reward_zero_std", "groups with zero std (no gradient)")],
    ),
    (
        "Completion length",
        "tokens",
        [("completions/mean_length", "mean"), ("completions/min_length", "min"), ("completions/max_length", "max")],
    ),
    ("Truncated completions", "fraction", [("completions/clipped_ratio", "clipped ratio")]),
    ("KL to the reference model", "KL", [("kl", "kl")]),
]
_REWARD_PREFIX, _REWARD_SUFFIX = "rewards/", "/mean"
_MARKERS = ["o", "s", "^", "v", "D", "x"]


def _is_number(value: Any) -> bool:
    """A value that can be drawn: a finite number (a NaN loss is the watch's, not a point)."""
    return is_number(value) and math.isfinite(value)


def _series(steps: list[dict[str, Any]], key: str) -> tuple[list[int], list[float]]:
    points = [(record["step"], float(record[key])) for record in steps if _is_number(record.get(key))]
    return [x for x, _ in points], [y for _, y in points]


def _panels(steps: list[dict[str, Any]]) -> list[tuple[str, str, list[tuple[str, str]]]]:
    keys = {key for record in steps for key, value in record.items() if _is_number(value)}
    rewards = sorted(key for key in keys if key.startswith(_REWARD_PREFIX) and key.endswith(_REWARD_SUFFIX))
    panels = []
    for title, unit, lines in PANELS:
        if title.startswith("Rewards"):
            lines = [(key, key[len(_REWARD_PREFIX) : -len(_REWARD_SUFFIX)]) for key in rewards] + lines
        present = [(key, label) for key, label in lines if key in keys]
        if present:
            panels.append((title, unit, present))
    return panels


def _draw_verdicts(axes: Any, verdicts: list[Verdict]) -> None:
    """Each verdict as a dashed vertical line at its step, labelled with its rule: red fatal, orange warning."""
    for verdict in verdicts:
        colour = "red" if verdict.fatal else "darkorange"
        axes.axvline(verdict.step, color=colour, linestyle="--", linewidth=1.2, alpha=0.8)
        axes.annotate(
            verdict.rule,
            (verdict.step, 1.0),
            xycoords=("data", "axes fraction"),
            xytext=(-2, -3),
            textcoords="offset points",
            rotation=90,
            ha="right",
            va="top",
            fontsize="x-small",
            color=colour,
            bbox={"facecolor": "white", "alpha": 0.7, "edgecolor": "none", "pad": 1},
        )


def smooth(values: list[float], window: int) -> list[float]:
    """Centred moving average over ``window`` points (fewer at the ends).

    >>> smooth([0.0, 0.0, 3.0, 0.0, 0.0], 3)
    [0.0, 1.0, 1.0, 1.0, 0.0]
    """
    half = window // 2
    return [
        sum(values[max(0, i - half) : i + half + 1]) / len(values[max(0, i - half) : i + half + 1])
        for i in range(len(values))
    ]


def smoothing_window(steps: int) -> int:
    """The moving average's width for a run of ``steps`` logged steps: a tenth of them, at least 3 (1: none).

    >>> smoothing_window(150), smoothing_window(16), smoothing_window(2)
    (15, 3, 1)
    """
    return max(3, steps // 10) if steps >= 3 else 1


def _draw_smoothed(axes: Any, steps: list[dict[str, Any]], key: str, label: str, window: int, marker: str) -> None:
    """Every logged value of ``key`` as faint points, under its moving average as a line labelled ``label``."""
    xs, ys = _series(steps, key)
    (line,) = axes.plot(xs, smooth(ys, window), linewidth=2, label=label, zorder=3)  # over the points
    axes.plot(xs, ys, marker=marker, markersize=3, linewidth=0.6, alpha=0.3, color=line.get_color())


def _legend_beside(axes: Any) -> None:
    """The legend to the right of the panel, outside it, so that it hides no curve."""
    axes.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0, fontsize="small")


def _draw_held_out(axes: Any, evaluations: dict[str, Path]) -> None:
    """Each stage's held-out accuracy with its 95% interval, as ``compare`` tabulates it: stages that did not answer
    the same prompts the same way are refused, not drawn as one curve."""
    table = compare(evaluations)
    names, rows = list(table["stages"]), list(table["stages"].values())
    values = [100 * row["accuracy"] for row in rows]
    errors = [[v - 100 * row["accuracy_ci95"][0] for v, row in zip(values, rows, strict=True)],
              [100 * row["accuracy_ci95"][1] - v for v, row in zip(values, rows, strict=True)]]  # fmt: skip
    axes.errorbar(range(len(names)), values, yerr=errors, marker="o", capsize=4, linestyle="-")
    for index, value in enumerate(values):
        axes.annotate(f"{value:.1f}%", (index, value), textcoords="offset points", xytext=(6, 4), fontsize="small")
    axes.set_xticks(range(len(names)), names, rotation=20 if len(names) > 4 else 0)
    prompts = "/".join(map(str, sorted({row["prompts"] for row in rows})))
    samples = table["samples_per_prompt"]
    answers = "greedy" if samples == 1 else f"pass@1 of {samples} samples"
    axes.set_title(f"Held-out accuracy ({prompts} prompts, {answers}; 95% intervals)")
    axes.set_xlabel("stage / GRPO checkpoint")
    axes.set_ylabel("accuracy (%)")
    axes.set_ylim(bottom=0)


def _draw_smoothed_rewards(axes: Any, steps: list[dict[str, Any]], window: int) -> None:
    keys = sorted({k for r in steps for k in r if k.startswith(_REWARD_PREFIX) and k.endswith(_REWARD_SUFFIX)})
    for number, key in enumerate(key for key in keys or ["reward"] if _series(steps, key)[0]):
        label = key[len(_REWARD_PREFIX) : -len(_REWARD_SUFFIX)] if keys else key
        _draw_smoothed(axes, steps, key, label, window, _MARKERS[number % len(_MARKERS)])
    axes.set_title(f"Training reward (dots: each step; line: mean over {window} steps)")
    axes.set_xlabel("GRPO step")
    axes.set_ylabel("reward")
    _legend_beside(axes)


def draw_run(run_dir: Path, evaluations: dict[str, Path] | None = None) -> Any:
    """The figure of the swift run at ``run_dir`` (a matplotlib ``Figure``, not saved).

    ``run_dir`` is a run folder, an ``--output_dir`` holding versioned run folders, or the
    ``logging.jsonl`` itself. ``evaluations`` (stage name -> ``evaluate`` folder, in order) draws the
    held-out learning curve beside the smoothed rewards instead of the run's panels. The watch's verdicts
    on the steps (:func:`swift_plugins.watch.judge`) are drawn on the step panels.
    Raises :class:`DataError` naming the path when there is no log or no step logged yet.

    Example::

        draw_run(Path("tests/data/h100_grpo_logging.jsonl")).axes[1].get_title()  # 'Reward spread'
    """
    log = find_log(Path(run_dir))
    records = read_records(log)  # read once: the steps, and whether training has ended
    steps = step_records(records)
    if not steps:
        raise DataError(f"{log}: no training step logged yet (empty or only summary lines)")
    panels = _panels(steps)
    if not panels:
        raise DataError(
            f"{log}: none of the plotted keys ({', '.join(k for _, _, ls in PANELS for k, _ in ls)}, "
            f"rewards/<Name>/mean) was logged"
        )
    verdicts = judge(steps)
    if evaluations:
        return _learning_figure(log, steps, evaluations, verdicts)
    finished = any("train_runtime" in record for record in records)
    return _panels_figure(log, steps, panels, finished, verdicts)


def plot_run(run_dir: Path, out: Path | None = None, evaluations: dict[str, Path] | None = None) -> Path:
    """Draw the swift run at ``run_dir`` (:func:`draw_run`) into a PNG and return its path.

    ``out`` defaults to ``curves.png`` next to the ``logging.jsonl``.
    """
    log = find_log(Path(run_dir))
    figure = draw_run(log, evaluations)
    out = Path(out) if out is not None else log.parent / "curves.png"
    out.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(out, dpi=100)
    return out


def _figure(size: tuple[float, float]) -> Any:
    """An empty figure that renders with Agg whatever the global matplotlib backend is."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=size, layout="constrained")
    FigureCanvasAgg(figure)
    return figure


def _row_sizes(panels: int, most: int = 3) -> list[int]:
    """Panels per row: as few rows as ``most`` a row allows, filled evenly (each row's panels share its width).

    >>> _row_sizes(4), _row_sizes(5), _row_sizes(2)
    ([2, 2], [3, 2], [2])
    """
    rows = math.ceil(panels / most)
    base, extra = divmod(panels, rows)
    return [base + 1] * extra + [base] * (rows - extra)


def _panels_figure(
    log: Path,
    steps: list[dict[str, Any]],
    panels: list[tuple[str, str, list[tuple[str, str]]]],
    finished: bool,
    verdicts: list[Verdict],
) -> Any:
    from matplotlib.ticker import MaxNLocator

    sizes = _row_sizes(len(panels))
    figure = _figure((6.2 * max(sizes), 3.6 * len(sizes)))
    rows = figure.subfigures(len(sizes), 1, squeeze=False)[:, 0]  # a row each: its panels share its width
    cells = [axes for row, size in zip(rows, sizes, strict=True) for axes in row.subplots(1, size, squeeze=False)[0]]
    total = str(steps[-1].get("global_step/max_steps", "")).partition("/")[2]
    status = "finished" if finished else "in progress"
    window = smoothing_window(len(steps))
    figure.suptitle(
        f"GRPO run {log.parent.name}: {len(steps)} logged steps{f' of {total}' if total else ''} ({status}); "
        f"dots: each step, lines: mean over {window} steps"
    )
    for axes, (title, unit, lines) in zip(cells, panels, strict=True):
        for number, (key, label) in enumerate(lines):
            _draw_smoothed(axes, steps, key, label, window, _MARKERS[number % len(_MARKERS)])
        axes.xaxis.set_major_locator(MaxNLocator(integer=True))
        axes.set_title(title)
        axes.set_xlabel("step")
        axes.set_ylabel(unit)
        axes.grid(alpha=0.3)
        _draw_verdicts(axes, verdicts)
        if len(lines) > 1:
            _legend_beside(axes)
    return figure


def _learning_figure(
    log: Path, steps: list[dict[str, Any]], evaluations: dict[str, Path], verdicts: list[Verdict]
) -> Any:
    from matplotlib.ticker import MaxNLocator

    figure = _figure((13, 4.4))
    held_out, rewards = figure.subplots(1, 2, width_ratios=[1.1, 1])
    _draw_held_out(held_out, evaluations)
    _draw_smoothed_rewards(rewards, steps, smoothing_window(len(steps)))
    _draw_verdicts(rewards, verdicts)
    for axes in (held_out, rewards):
        axes.grid(alpha=0.3)
    rewards.xaxis.set_major_locator(MaxNLocator(integer=True))
    figure.suptitle(f"GRPO run {log.parent.name}: {len(steps)} steps")
    return figure
