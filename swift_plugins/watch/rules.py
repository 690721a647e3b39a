"""The watch's rules: what in a GRPO run's logged steps means it is failing (pure, standard library only).

A :class:`Watch` takes the step records of ms-swift's ``logging.jsonl`` in order (as
:func:`~swift_plugins.watch.log.read_steps` or :class:`~swift_plugins.watch.log.LogTail` give them) and
returns a :class:`Verdict` when a rule's condition starts (a *warning*: a passing spike is allowed) and
another when it has held for the rule's patience (*fatal*: sustained, the run will not recover by itself).
An ongoing condition is reported once as each, not at every step; once it clears, a new stretch is new.

The rules (``RULES``, one :class:`Rule` record each: its name, the :class:`Thresholds` fields it reads, its advice
and its check), each set by fields of :class:`Thresholds` whose comments give the defaults' reasons; a user sets
them with ``watch --set name=value`` or a recipe's ``WATCH_SET`` (:meth:`Thresholds.parse`):

- ``reward-collapse``: the moving average of ``reward`` or of any ``rewards/<Name>/mean`` falls far below
  its best, by a relative, an absolute *and* a noise margin (a multiple of the average's own noise, so that a
  reward without a trend cannot fire however noisy its steps), and stays there;
- ``truncation``: ``completions/clipped_ratio`` at 1 (every completion cut at ``--max_completion_length``:
  nothing can be scored);
- ``zero-spread``: ``frac_reward_zero_std`` at 1 (every group's completions rewarded alike: zero
  advantage, zero gradient), or ``reward_std`` 0 where the fraction is not logged;
- ``non-finite``: ``loss`` or ``grad_norm`` NaN or infinite;
- ``kl-blowup``: ``kl`` (logged when ``--beta`` > 0) above a bound;
- ``sampler-mismatch``: ``rollout_correction/k3_kl`` (the gap between the policy vLLM sampled with and the trainer's,
  per token) far above what precision alone gives: a server left with old weights, or a broken weight sync;
- ``clipping``: ``clip_ratio/region_mean`` (CISPO: ``cispo_clip_ratio``), the share of tokens whose importance ratio
  left the clip range, high for many steps: the policy moves past its trust region at every update;
- ``stalled``: no step logged for far longer than the steps take (a live rule: :meth:`Watch.idle`);
- ``stale-server``: the rollout server failed to load the trainer's weights (a live rule on the server's log,
  :meth:`Watch.server_failed`: ms-swift's trainer is not told and would train on against the old weights).

Another rule is one :class:`Rule` in ``RULES`` and its fields in :class:`Thresholds` (its check a method of
:class:`Watch`: ``_event`` counts its failing stretch and gives warning and fatal; ``_above`` serves a rule on one
logged number above a bound). A task adds to a rule's advice (:class:`Watch`'s ``advice``).

``since`` in a verdict is a checkpoint boundary: the numbers logged at step k come from the weights saved
at step k-1 (generation and the loss of step k run before its update), so for a stretch whose first failing
logged step is k, ``since`` is the step logged before it (k-1 with ``--logging_steps 1``, k-5 with 5: the
failure may have begun right after it), and a checkpoint saved at a step < ``since`` predates the failure. For
the first record of a log, the step one logging interval before it (a resumed run failing at once: the step it
resumed from). When ``since`` is 1 or less no checkpoint predates the failure: the advice is to restart from the
base model. For a stall it is the last step logged + 1: every checkpoint predates it. For reward collapse it is
where the fall began: a quarter window of logged steps (the most fallen steps such an average can hold) before
the last step at which the failing reward's moving average was still within a quarter of the firing drop of its
best; on a long plateau this is its end, not the plateau's noisy maximum. A fall begun inside the warm-up leaves
no such step (the first judged average is already its best): there ``since`` is where the first window's values
fell (the change point of their mean), when that is earlier.

>>> steps = [{"step": s, "loss": 0.0 if s < 5 else float("nan")} for s in range(1, 8)]
>>> [verdict.line() for verdict in judge(steps)]  # doctest: +NORMALIZE_WHITESPACE
['warning: non-finite at step 5 (failing since step 4): loss nan at step 5; a single skipped step is normal
  with fp16 loss scaling; if it repeats, resume from a checkpoint saved before step 4 with a lower
  --learning_rate or --max_grad_norm 1.0, in bf16 rather than fp16',
 'fatal: non-finite at step 7 (failing since step 4): loss or grad_norm non-finite for 3 steps (from step 5):
  loss nan at step 7; resume from a checkpoint saved before step 4 with a lower --learning_rate or
  --max_grad_norm 1.0, in bf16 rather than fp16']
"""

from __future__ import annotations

import difflib
import math
import re
import statistics
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, fields, replace
from functools import partial
from typing import Any

from ..core.errors import SettingError
from .log import is_number

__all__ = ["RULES", "Rule", "Thresholds", "Verdict", "Watch", "judge"]


@dataclass(frozen=True)
class Thresholds:
    """Every window and threshold of the rules; counts are logged steps (the recipes log every step).

    The defaults were checked against a healthy 150-step H100 GRPO run of this package (Countdown,
    SmolLM2-135M, 8 groups of 8 completions a step; ``tests/data/h100_grpo_logging.jsonl``): no verdict
    at all there. Its figures are quoted per field. Raises :class:`SettingError` on a value out of range.

    >>> Thresholds(truncation_patience=0)
    Traceback (most recent call last):
    ...
    swift_plugins.core.errors.SettingError: Thresholds.truncation_patience: must be an integer >= 1, got 0
    """

    # reward-collapse. Moving average over this many steps: the accuracy reward is 0/1 per completion and
    # swings 0.0-0.53 from step to step on the H100 run; over 20 steps its average stays within 0.05-0.23.
    collapse_window: int = 20
    # No judgement and no "best" before this many steps: the first full window, and the start of a run
    # (format being learned, exploration at temperature 1) is not a level to fall from.
    collapse_warmup: int = 20
    # Fires only when the average is both this fraction below its best ... (H100 run: at most 0.41 for the
    # accuracy, whose level is near 0.1, 0.08 for the total reward, 0.004 for the format reward) ...
    collapse_relative_drop: float = 0.3
    # ... and this much below it in reward units (H100 run: at most 0.094, the accuracy's noise): a noisy
    # accuracy near 0.05 cannot fire, a format reward falling from 1.0 to 0.7 can.
    collapse_absolute_drop: float = 0.2
    # ... and this many times the average's own noise (its standard deviation without a trend: the step-to-step
    # spread of the reward, from consecutive differences, over sqrt(collapse_window)). The best of a noisy average
    # is itself noise: over a run of N steps the average's maximum sits about sqrt(2 ln(N / window)) ~ 3.4 such
    # deviations above its mean (N = 6,187), so a fixed margin fires on a small batch's reward without any trend
    # (before this margin: 39 of 40 runs of 3,093 steps at 0.5 +- 0.25 went fatal). Measured with
    # benchmarks/bench_watch_collapse.py (100 runs each, no trend, per-step accuracy a normal clipped to [0, 1] or
    # the share right of 8-128 completions): at 7, no fatal verdict in any run at 500, 3,093 or 6,187 steps for
    # mean/spread 0.5/0.25, 0.6/0.20, 0.5/0.15, 0.1/0.1, 0.5/0.35 or 8, 16, 64, 128 completions at 0.5
    # (warnings: up to 8 of 100 runs at 3,093 steps, 29 at 6,187; 37 with 8 completions); at 6, 6 of 100 runs
    # fatal at 6,187 steps and 0.5/0.25; at 5, 16 of 20. A real fall still fires: 0.5 -> 0.1 at spread 0.25
    # (margin 0.39) in 100 of 100 runs, fatal 26-59 steps after the fall; 1.0 -> 0.2 at 0.05, 26-27 steps after.
    collapse_noise_drop: float = 7.0
    # Steps the average must stay down to be fatal: a dip shorter than a window (an oscillation) only warns.
    collapse_patience: int = 20

    # truncation. completions/clipped_ratio at or above this is "every completion cut" (granularity 1/64
    # on the H100 run, whose maximum is 0.047) ...
    truncation_ratio: float = 0.99
    # ... for this many steps in a row: rewards cannot judge cut answers, and nothing teaches shorter ones.
    truncation_patience: int = 10

    # zero-spread. frac_reward_zero_std at or above this is "every group alike" (granularity 1/8 there) ...
    zero_spread_fraction: float = 0.95
    # ... for this many steps in a row. The H100 run has 12 isolated steps at 1.0 (8% of its steps, never two
    # in a row); 20 in a row at that rate has a chance of 0.08**20 ~ 1e-22. A run with fewer groups per step
    # (the CPU demo: 4) reaches 1.0 more often, still never 20 times running while it learns.
    zero_spread_patience: int = 20
    # A single step with every group alike is common (see above) and says nothing: the warning comes once the
    # stretch is this long (0.08**5 ~ 3e-6 at the H100 run's rate).
    zero_spread_warning: int = 5

    # non-finite: loss or grad_norm NaN/inf this many steps in a row is fatal; one such step only warns, as
    # fp16 dynamic loss scaling skips an overflowing step and logs its inf grad_norm legitimately. Once the
    # weights are NaN every later step is NaN, so 3 in a row is divergence.
    non_finite_patience: int = 3

    # kl-blowup. Per-token KL to the reference above this ... Healthy GRPO runs with --beta 0.001-0.04 keep the
    # logged kl well below 1 (typically 1e-3 to 1e-1); a mean of 1 nat per token is a policy far from its
    # reference, no longer held by the KL term. (The H100 run has --beta 0: no kl logged.)
    kl_max: float = 1.0
    # ... for this many steps in a row (one spike only warns).
    kl_patience: int = 5

    # sampler-mismatch. rollout_correction/k3_kl, the KL per token between the policy vLLM sampled with and the
    # trainer's (ms-swift logs it with ROLLOUT_CORRECTION on, or --log_rollout_offpolicy_metrics). The CPU demo, vLLM's
    # CPU build in bfloat16 against the trainer's bfloat16 autocast: 5e-5 to 7e-4 a step in its 16-step runs
    # (tests/data/cpu_demo_corrected_grpo_logging.jsonl is one); GPU stacks report 1e-4 to 1e-3 (Yao et al., "Your
    # Efficient RL Framework Secretly Brings You Off-Policy RL Training", 2025). vLLM's log-probs are of the
    # distribution it sampled, after top-k and top-p: the recipes' --top_p 0.9 keeps at least 0.9 of the mass, a gap of
    # at most -ln 0.9 a token, a k3 of at most 0.0054. A server that kept old weights samples from a policy steps
    # behind, and the gap grows with every update. Above this (3.7 times precision and truncation together) ...
    mismatch_kl_max: float = 0.02
    # ... for this many steps in a row (one step's spike only warns).
    mismatch_patience: int = 5

    # clipping. With one update per generation (every recipe here) the ratio is 1 and no token is clipped: 0 in every
    # step of the H100 and CPU demo runs. With several updates per generation (--num_iterations > 1), a share of
    # clipped tokens this high ...
    clip_fraction_max: float = 0.3
    # ... for this many steps in a row means the learning rate moves the policy past its trust region each update.
    clip_patience: int = 10

    # stalled. No new step for longer than max(stall_seconds, stall_factor x the median time between
    # steps) is fatal. 30 minutes covers a ZeRO-3 checkpoint save of a 3B model and an --eval_steps
    # evaluation; steps took 2.2-4.8 s on the H100 run, so only runs with steps over 3 minutes raise it.
    stall_seconds: float = 1800.0
    stall_factor: float = 10.0

    # Rules that only warn, never fatal (see plumbing()).
    warn_only: frozenset[str] = field(default_factory=frozenset)

    def __post_init__(self) -> None:
        for item in fields(self):
            value = getattr(self, item.name)
            if item.name == "warn_only":
                unknown = sorted(set(value) - set(RULES))
                if not isinstance(value, frozenset) or unknown:
                    raise SettingError(f"Thresholds.warn_only: a frozenset of {', '.join(RULES)}; got {value!r}")
            elif item.type == "int" and (not isinstance(value, int) or isinstance(value, bool) or value < 1):
                raise SettingError(f"Thresholds.{item.name}: must be an integer >= 1, got {value!r}")
            elif item.type == "float" and not (isinstance(value, (int, float)) and 0 < value < math.inf):
                raise SettingError(f"Thresholds.{item.name}: must be a positive number, got {value!r}")
        for name in ("collapse_relative_drop", "truncation_ratio", "zero_spread_fraction", "clip_fraction_max"):
            if getattr(self, name) > 1:
                raise SettingError(f"Thresholds.{name}: must be a fraction in (0, 1], got {getattr(self, name)}")

    @classmethod
    def plumbing(cls) -> Thresholds:
        """For a smoke run on a random tiny model: every reward is 0, every completion is truncated and top-k
        sampling of a flat distribution is far from it by design, so the rules about output quality
        (reward-collapse, truncation, zero-spread, sampler-mismatch) only warn; non-finite, kl-blowup, clipping and
        stalled stay fatal.

        >>> sorted(Thresholds.plumbing().warn_only)
        ['reward-collapse', 'sampler-mismatch', 'truncation', 'zero-spread']
        """
        return cls(warn_only=frozenset(rule.name for rule in RULES.values() if rule.output_quality))

    def parse(self, settings: Iterable[str]) -> Thresholds:
        """These thresholds with ``name=value`` settings applied, each value read as its field's type;
        :class:`SettingError` in one line for an unknown name (naming the closest) or a value out of range.

        >>> Thresholds().parse(["stall_seconds=3600", "zero_spread_patience=40"]).stall_seconds
        3600.0
        >>> Thresholds().parse(["stall_second=1"])
        Traceback (most recent call last):
        ...
        swift_plugins.core.errors.SettingError: watch setting stall_second=1: no such threshold; closest stall_seconds
        """
        kinds = {item.name: item.type for item in fields(self) if item.name != "warn_only"}
        thresholds = self
        for setting in settings:
            name, sep, text = setting.partition("=")
            name = name.strip()
            if not sep or name not in kinds:
                closest = difflib.get_close_matches(name, kinds, n=1)
                hint = f"closest {closest[0]}" if closest else f"the thresholds are {', '.join(kinds)}"
                what = "expected NAME=VALUE" if not sep else "no such threshold"
                raise SettingError(f"watch setting {setting}: {what}; {hint}")
            try:
                thresholds = replace(thresholds, **{name: _threshold_value(text.strip(), kinds[name])})
            except (SettingError, ValueError) as error:
                raise SettingError(f"watch setting {setting}: {str(error).rpartition(': ')[2]}") from None
        return thresholds


def _threshold_value(text: str, kind: str) -> int | float:
    """``text`` as a threshold of type ``kind`` (``"int"`` or ``"float"``); ValueError when it is not one."""
    if kind == "int" and not re.fullmatch(r"[0-9]+", text):
        raise ValueError(f"must be an integer >= 1, got {text!r}")
    try:
        return int(text) if kind == "int" else float(text)
    except ValueError:
        raise ValueError(f"must be a positive number, got {text!r}") from None


@dataclass(frozen=True)
class Verdict:
    """One rule's judgement of a run at one step.

    >>> Verdict("truncation", True, 49, 39, "completions/clipped_ratio >= 0.99 for 10 steps", "raise it").line()
    'fatal: truncation at step 49 (failing since step 39): completions/clipped_ratio >= 0.99 for 10 steps; raise it'
    """

    rule: str  # one of RULES
    fatal: bool  # sustained failure (fatal) or the start of one, maybe a passing spike (warning)
    step: int  # the step at which it was judged
    since: int  # first step of the failing stretch, as a checkpoint boundary: one saved at a step < since predates it
    figures: str  # the numbers that fired it
    advice: str  # what to change, naming the swift flag or setting

    def line(self) -> str:
        """The verdict as one line: ``fatal: <rule> at step N (failing since step M): <figures>; <advice>``."""
        kind = "fatal" if self.fatal else "warning"
        where = f"{self.rule} at step {self.step} (failing since step {self.since})"
        return f"{kind}: {where}: {self.figures}; {self.advice}"


def _resume(since: int) -> str:
    """Where to go on from, for a failure whose checkpoint boundary is ``since``: no checkpoint is saved before
    step 1.

    >>> _resume(40), _resume(1)
    ('resume from a checkpoint saved before step 40', 'restart from the base model (no checkpoint predates step 1)')
    """
    if since > 1:
        return f"resume from a checkpoint saved before step {since}"
    return "restart from the base model (no checkpoint predates step 1)"


_SPIKE_ADVICE = {"non-finite": "a single skipped step is normal with fp16 loss scaling; if it repeats, "}
_WARNING_ADVICE = "if it lasts, "


def _finite(value: Any) -> bool:
    return is_number(value) and math.isfinite(value)


def _seconds(text: Any) -> float | None:
    """Seconds of ms-swift's ``elapsed_time`` (``"1h 2m 3s"``), or None."""
    parts = re.findall(r"(\d+(?:\.\d+)?)\s*([dhms])", text) if isinstance(text, str) else []
    unit = {"d": 86400, "h": 3600, "m": 60, "s": 1}
    return sum(float(amount) * unit[letter] for amount, letter in parts) if parts else None


@dataclass
class _Streak:
    """Consecutive failing steps of one rule."""

    length: int = 0
    start: int = 0  # first failing step
    since: int = 0
    peak: float = -math.inf  # the largest value of the stretch, where the rule has one


@dataclass
class _Average:
    """A reward's moving average, its best value so far and its step-to-step noise."""

    values: deque[tuple[int, float]]  # (step, value) of the last collapse_window records
    before: int = 0  # the step logged just before values[0] (0: none)
    total: float = 0.0  # the sum of the values
    seen: int = 0
    squares: float = 0.0  # the sum of the squared differences between consecutive values (see noise)
    best: float = -math.inf
    best_step: int = 0
    mean: float = math.nan
    first: tuple[int, tuple[tuple[int, float], ...]] | None = None  # before and values of the first judged window
    level_since: int = 0  # the earliest step a fall seen now can have begun at (see the module's since)

    def add(self, step: int, value: float) -> None:
        if self.values:
            self.squares += (value - self.values[-1][1]) ** 2
            if len(self.values) == self.values.maxlen:
                self.before, dropped = self.values[0]
                self.total -= dropped
        self.values.append((step, value))
        self.total += value
        self.seen += 1

    def noise(self) -> float:
        """The standard deviation of the moving average of a reward without a trend: the step-to-step spread
        (von Neumann's estimate from consecutive differences, which a slow trend or one fall barely moves)
        over the square root of the window.

        >>> average = _Average(deque(maxlen=4))
        >>> for step, value in enumerate([0.0, 1.0, 0.0, 1.0], 1):
        ...     average.add(step, value)
        >>> round(average.noise(), 3)  # consecutive differences of 1: a step spread of 0.707, over 2
        0.354
        """
        if self.seen < 2:
            return 0.0
        return math.sqrt(self.squares / (2 * (self.seen - 1)) / len(self.values))


def _fall_start(before: int, values: Iterable[tuple[int, float]], middle: float) -> tuple[int, int]:
    """Where the values fall below ``middle`` for good: the step after which they sum lowest relative to it
    (the change point of a mean shift, CUSUM's estimate; ``before`` when it precedes them all), and how many
    values follow it.

    >>> _fall_start(0, [(1, 1.0), (2, 0.9), (3, 0.1), (4, 0.2), (5, 0.3)], 0.5)
    (2, 3)
    """
    values = list(values)
    total, highest, since, after = 0.0, 0.0, before, len(values)
    for index, (step, value) in enumerate(values):
        total += value - middle
        if total > highest:
            highest, since, after = total, step, len(values) - index - 1
    return since, after


class Watch:
    """Feed step records in order; get verdicts as they arise.

    >>> watch = Watch()
    >>> watch.add({"step": 1, "completions/clipped_ratio": 1.0})[0].line()  # doctest: +ELLIPSIS
    'warning: truncation at step 1 (failing since step 0): completions/clipped_ratio 1.00 (>= 0.99); if it ...'
    >>> watch.idle(600.0), watch.fatal
    ([], None)
    """

    def __init__(self, thresholds: Thresholds | None = None, advice: Mapping[str, str] | None = None) -> None:
        self.thresholds = thresholds or Thresholds()
        self.advice = dict(advice or {})  # a task's words for a rule, before its own advice (see Rule.advise)
        self.verdicts: list[Verdict] = []
        self.steps = 0  # step records judged
        self._streaks = {rule: _Streak() for rule in RULES}
        self._averages: dict[str, _Average] = {}
        self._last: dict[str, Any] | None = None
        self._previous = 0  # the step logged before the one being judged (see add)
        self._intervals: list[float] = []  # seconds between consecutive step records
        self._stalled = False

    @property
    def fatal(self) -> Verdict | None:
        """The first fatal verdict, if any."""
        return next((verdict for verdict in self.verdicts if verdict.fatal), None)

    def add(self, record: dict[str, Any]) -> list[Verdict]:
        """Judge one step record (with an int ``step``, as ``read_steps`` gives it); the new verdicts."""
        step = record.get("step")
        step = step if isinstance(step, int) and not isinstance(step, bool) else self.steps + 1
        if self._last is None:  # the first record (of a run, or of a resumed run): as if logged every step ...
            self._previous = max(0, step - 1)
        else:
            self._previous = self._last["step"]
            if self.steps == 1:  # ... until the second one tells the logging interval
                self._restate_first(self._previous, step)
        self._time(record, step)
        new = [verdict for rule in RULES.values() if rule.check for verdict in rule.check(self, record, step)]
        self.steps += 1
        self.verdicts += new
        return new

    def _restate_first(self, first: int, second: int) -> None:
        """A failing stretch begun at the first record: its boundary one logging interval before it."""
        for streak in self._streaks.values():
            if streak.length and streak.start == first:
                streak.since = max(0, first - (second - first))

    def idle(self, seconds: float) -> list[Verdict]:
        """Judge ``seconds`` without a new step record while the trainer runs (the stall rule); the new
        verdicts. Nothing before the first step record (loading the model and starting vLLM take their time)
        and one verdict per silence."""
        if self._last is None or self._stalled:
            return []
        thresholds = self.thresholds
        typical = statistics.median(self._intervals) if self._intervals else 0.0
        limit = max(thresholds.stall_seconds, thresholds.stall_factor * typical)
        if not seconds > limit:  # NaN included
            return []
        self._stalled = True
        step = self._last["step"]
        figures = (
            f"no step logged for {seconds:.0f} s after step {step} (limit {limit:.0f} s: the larger of "
            f"stall_seconds {thresholds.stall_seconds:.0f} and {thresholds.stall_factor:g} x the median "
            f"{typical:.1f} s between steps)"
        )
        verdict = Verdict("stalled", self._may_be_fatal("stalled"), step, step + 1, figures, self._advice("stalled", 0))
        self.verdicts.append(verdict)
        return [verdict]

    def server_failed(self, failure: str) -> list[Verdict]:
        """Judge a failed weight update in the rollout server's log (``failure``, as
        :func:`~swift_plugins.watch.server.failed_loads` gives it): fatal at once, one verdict per run. The weights
        that failed to load were sent after the last logged step, whose checkpoint is still good.

        >>> verdict = Watch().server_failed("update_flattened_params: AttributeError: boom")[0]
        >>> verdict.fatal, verdict.since, verdict.advice.endswith("from the base model (no checkpoint predates step 1)")
        (True, 1, True)
        """
        if any(verdict.rule == "stale-server" for verdict in self.verdicts):
            return []
        step = self._last["step"] if self._last else 0
        figures = f"the rollout server failed to load the trainer's weights after step {step} ({failure})"
        advice = self._advice("stale-server", step + 1)
        verdict = Verdict("stale-server", self._may_be_fatal("stale-server"), step, step + 1, figures, advice)
        self.verdicts.append(verdict)
        return [verdict]

    def _time(self, record: dict[str, Any], step: int) -> None:
        last, self._last, self._stalled = self._last, {**record, "step": step}, False
        if last is None:
            return
        now, before = _seconds(record.get("elapsed_time")), _seconds(last.get("elapsed_time"))
        if now is not None and before is not None and now > before:
            self._intervals.append(now - before)
        elif _finite(record.get("step_time")) and record["step_time"] > 0:
            self._intervals.append(record["step_time"] * max(1, step - last["step"]))

    def _may_be_fatal(self, rule: str) -> bool:
        return rule not in self.thresholds.warn_only

    def _event(self, rule: str, failing: bool, step: int, patience: int, warning: int = 1) -> bool | None:
        """None: nothing new to report; False: a failing stretch reached ``warning`` steps (a warning, at its start
        for most rules); True: it lasted ``patience`` steps (fatal)."""
        streak = self._streaks[rule]
        if not failing:
            self._streaks[rule] = _Streak()
            return None
        streak.length += 1
        if streak.length == 1:
            streak.start = step
            streak.since = self._previous  # the last healthy logged step: its weights produced this one
        if streak.length == patience and self._may_be_fatal(rule):
            return True
        return False if streak.length == warning and (warning < patience or not self._may_be_fatal(rule)) else None

    def _advice(self, rule: str, since: int) -> str:
        """What to do about ``rule``'s failure whose checkpoint boundary is ``since``: the task's words first."""
        advice = RULES[rule].advice.format(resume=_resume(since))
        return f"{self.advice[rule]}: {advice}" if rule in self.advice else advice

    def _verdict(self, rule: str, fatal: bool, step: int, figures: str) -> Verdict:
        since = self._streaks[rule].since
        advice = self._advice(rule, since)
        if not fatal:
            advice = _SPIKE_ADVICE.get(rule, _WARNING_ADVICE) + advice
        return Verdict(rule, fatal, step, since, figures, advice)

    def _collapse(self, record: dict[str, Any], step: int) -> list[Verdict]:
        thresholds = self.thresholds
        window = thresholds.collapse_window
        keys = [key for key in record if key == "reward" or (key.startswith("rewards/") and key.endswith("/mean"))]
        judged, failing = False, {}
        for key in keys:
            if not _finite(record[key]):
                continue
            average = self._averages.setdefault(key, _Average(deque(maxlen=window)))
            average.add(step, float(record[key]))
            if len(average.values) < window or average.seen < thresholds.collapse_warmup:
                continue
            judged = True
            average.mean = average.total / window
            if average.first is None:
                average.first = (average.before, tuple(average.values))
            if average.mean > average.best:
                average.best, average.best_step = average.mean, step
            margin = max(
                thresholds.collapse_absolute_drop,
                thresholds.collapse_relative_drop * abs(average.best),
                thresholds.collapse_noise_drop * average.noise(),
            )
            if average.mean >= average.best - margin / 4:
                average.level_since = average.values[-(window // 4) - 1][0]
            if average.mean <= average.best - margin:
                failing[key] = self._fall_since(average)
        if not judged:
            return []
        event = self._event("reward-collapse", bool(failing), step, thresholds.collapse_patience)
        streak = self._streaks["reward-collapse"]
        if failing:  # the checkpoint boundary: where the earliest failing reward began to fall
            fall = min(failing.values())
            streak.since = fall if streak.length == 1 else min(streak.since, fall)
        if event is None:
            return []
        shown = sorted(failing, key=lambda key: self._averages[key].mean - self._averages[key].best)
        figures = " and ".join(
            f"{key} over {window} steps {self._averages[key].mean:.2f}, best "
            f"{self._averages[key].best:.2f} at step {self._averages[key].best_step}"
            for key in shown
        )
        if event:
            figures = f"down for {streak.length} steps (from step {streak.start}): {figures}"
        return [self._verdict("reward-collapse", event, step, figures)]

    def _fall_since(self, average: _Average) -> int:
        """The checkpoint boundary of a fall of ``average``: a quarter window before the last step its average was
        near its best; where its best is its first judged average, the fall may have begun in the warm-up: then
        where the first window's values dropped, when that is earlier."""
        before, first = average.first
        if average.best_step != first[-1][0]:
            return average.level_since
        since, fallen = _fall_start(before, first, (average.best + average.mean) / 2)
        return min(since, average.level_since) if fallen > self.thresholds.collapse_window // 4 else average.level_since

    def _above(
        self, record: dict[str, Any], step: int, *, rule: str, key: str | tuple[str, ...], limit: str, patience: str,
        warning: str = "",
    ) -> list[Verdict]:
        """``rule`` on one logged number: ``key`` (of several, the first logged) at or above the threshold ``limit``
        (above, for kl-blowup), for the threshold ``patience`` steps (fatal), warned at once or after the threshold
        ``warning`` steps."""
        if isinstance(key, tuple):
            key = next((name for name in key if name in record), key[0])
        t = self.thresholds
        limit, patience, warning = getattr(t, limit), getattr(t, patience), getattr(t, warning) if warning else 1
        if rule == "zero-spread" and not _finite(record.get(key)) and _finite(record.get("reward_std")):
            key, limit = "reward_std", None  # every group alike: a spread of exactly 0
        value = record.get(key)
        if not _finite(value):
            return []  # not logged (kl with --beta 0), or NaN: the non-finite rule's business
        failing = value == 0 if limit is None else (value > limit if rule == "kl-blowup" else value >= limit)
        event = self._event(rule, failing, step, patience, warning)
        streak = self._streaks[rule]
        streak.peak = max(streak.peak, value) if failing else streak.peak
        if event is None:
            return []
        relation = "== 0" if limit is None else f"> {limit:g}" if rule == "kl-blowup" else f">= {limit:g}"
        shown = f"{value:.3g}" if rule == "sampler-mismatch" else f"{value:.2f}"  # a KL of thousandths
        figures = f"{key} {shown} ({relation})"
        if event or streak.length > 1:
            peak = f", max {streak.peak:.2f}" if rule == "kl-blowup" else ""
            figures = f"{key} {relation} for {streak.length} steps (from step {streak.start}), last {shown}{peak}"
        return [self._verdict(rule, event, step, figures)]

    def _non_finite(self, record: dict[str, Any], step: int) -> list[Verdict]:
        bad = [key for key in ("loss", "grad_norm") if is_number(record.get(key)) and not _finite(record[key])]
        event = self._event("non-finite", bool(bad), step, self.thresholds.non_finite_patience)
        if event is None:
            return []
        figures = f"{', '.join(f'{key} {record[key]}' for key in bad)} at step {step}"
        if event:
            length, start = self._streaks["non-finite"].length, self._streaks["non-finite"].start
            figures = f"loss or grad_norm non-finite for {length} steps (from step {start}): {figures}"
        return [self._verdict("non-finite", event, step, figures)]


@dataclass(frozen=True)
class Rule:
    """One rule of the watch: its name, the :class:`Thresholds` fields it reads, what to do when it fires (``{resume}``
    says where to go on from), and its check of one step record (None: a live rule, judged by :meth:`Watch.idle` or
    :meth:`Watch.server_failed`). ``output_quality``: a plumbing run's random model fails it by design (warn only)."""

    name: str
    thresholds: tuple[str, ...]
    advice: str
    check: Callable[[Watch, dict[str, Any], int], list[Verdict]] | None = None
    output_quality: bool = False


RULES: dict[str, Rule] = {
    rule.name: rule
    for rule in (
        Rule(
            "reward-collapse",
            ("collapse_window", "collapse_warmup", "collapse_relative_drop", "collapse_absolute_drop",
             "collapse_noise_drop", "collapse_patience"),
            "lower --learning_rate or raise --beta, and {resume}",
            Watch._collapse,
            output_quality=True,
        ),
        Rule(
            "truncation",
            ("truncation_ratio", "truncation_patience"),
            "every completion hits --max_completion_length: raise it (and --max_length, vllm_max_model_len), or ask "
            "for shorter answers in the system prompt",
            partial(Watch._above, rule="truncation", key="completions/clipped_ratio", limit="truncation_ratio",
                    patience="truncation_patience"),
            output_quality=True,
        ),
        Rule(
            "zero-spread",
            ("zero_spread_fraction", "zero_spread_patience", "zero_spread_warning"),
            "every group's completions got the same reward (zero advantage, no gradient): raise --num_generations or "
            "--temperature, or train on prompts the model solves sometimes, not always or never",
            partial(Watch._above, rule="zero-spread", key="frac_reward_zero_std", limit="zero_spread_fraction",
                    patience="zero_spread_patience", warning="zero_spread_warning"),
            output_quality=True,
        ),
        Rule(
            "non-finite",
            ("non_finite_patience",),
            "{resume} with a lower --learning_rate or --max_grad_norm 1.0, in bf16 rather than fp16",
            Watch._non_finite,
        ),
        Rule(
            "kl-blowup",
            ("kl_max", "kl_patience"),
            "the policy drifted far from the reference model: raise --beta or lower --learning_rate, and {resume}",
            partial(Watch._above, rule="kl-blowup", key="kl", limit="kl_max", patience="kl_patience"),
        ),
        Rule(
            "sampler-mismatch",
            ("mismatch_kl_max", "mismatch_patience"),
            "vLLM samples from a policy the trainer has left: a rollout server that did not load the trainer's "
            "weights (see its log), or a weight sync that fails; ROLLOUT_CORRECTION weighs tokens by the gap but "
            "cannot make a stale server's samples current: fix the sync and {resume}",
            partial(Watch._above, rule="sampler-mismatch", key="rollout_correction/k3_kl", limit="mismatch_kl_max",
                    patience="mismatch_patience"),
            output_quality=True,  # a random model's flat distribution: top-k alone is a gap of nats
        ),
        Rule(
            "clipping",
            ("clip_fraction_max", "clip_patience"),
            "the policy moves past its clip range at every update: lower --learning_rate or --num_iterations "
            "(EPSILON_HIGH widens the range only upward), and {resume}",
            partial(Watch._above, rule="clipping", key=("clip_ratio/region_mean", "cispo_clip_ratio"),
                    limit="clip_fraction_max", patience="clip_patience"),
        ),
        Rule(
            "stalled",
            ("stall_seconds", "stall_factor"),
            "the trainer stopped logging: look at its log and the rollout server's (a hung vLLM server or NCCL weight "
            "sync, a full disk); an evaluation or checkpoint save longer than that needs a larger stall_seconds",
        ),
        Rule(
            "stale-server",
            (),
            "the server keeps generating with weights the trainer has left behind; see the rollout server's log for "
            "why it could not load them (a vLLM and ms-swift pair no lock covers, a changed weight layout), fix that, "
            "and {resume}",
        ),
    )
}  # fmt: skip


def judge(steps: Iterable[dict[str, Any]], thresholds: Thresholds | None = None) -> list[Verdict]:
    """Every verdict on the step records ``steps`` of a finished or running log (the stall rule aside).

    >>> judge([{"step": s, "reward": 1.0, "frac_reward_zero_std": 0.5} for s in range(1, 200)])
    []
    """
    watch = Watch(thresholds)
    for record in steps:
        watch.add(record)
    return watch.verdicts
