"""The watch: each rule fires on the real H100 run's log altered to fail it, and stays silent on healthy runs."""

import json
import math
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

import pytest

from swift_plugins.core.errors import DataError, SettingError
from swift_plugins.watch import RULES, LogTail, Thresholds, Verdict, Watch, find_log, is_grpo, judge, read_steps
from swift_plugins.watch.live import FATAL_STATUS
from swift_plugins.watch.rules import Rule

from ..helpers import DATA

H100 = DATA / "h100_grpo_logging.jsonl"  # a healthy 150-step GRPO run of this package on an H100
CPU_DEMO = DATA / "cpu_demo_grpo_logging.jsonl"  # make demo's 16-step CPU GRPO stage, from its SFT checkpoint
# the same stage with vLLM's sampling corrected (ROLLOUT_CORRECTION=token_truncate): rollout_correction/* every step
CORRECTED = DATA / "cpu_demo_corrected_grpo_logging.jsonl"
HEALTHY = [H100, CPU_DEMO, CORRECTED]


def h100_records() -> list[dict]:
    return [json.loads(line) for line in H100.read_text().splitlines()]


def altered(change: Callable[[dict, int], None], first: int, last: int = 10**9) -> list[dict]:
    """The H100 log's lines, with ``change(record, step)`` applied to the step lines ``first``..``last``."""
    records = h100_records()
    for record in records:
        progress = record.get("global_step/max_steps", "")
        step = int(progress.partition("/")[0]) if "train_runtime" not in record and "log_history" not in record else 0
        if first <= step <= last:
            change(record, step)
    return records


def write(path: Path, records: list[dict], tail: str = "") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(record) + "\n" for record in records) + tail)  # NaN as swift writes it
    return path


def steps_of(records: list[dict]) -> list[dict]:
    return [dict(record, step=int(record["global_step/max_steps"].partition("/")[0])) for record in records
            if "train_runtime" not in record and "log_history" not in record]  # fmt: skip


def format_collapse(record: dict, step: int) -> None:  # format reward to 0.2, the total with it
    record["reward"] -= record["rewards/ThinkAnswerFormat/mean"] - 0.2
    record["rewards/ThinkAnswerFormat/mean"] = 0.2


def all_clipped(record: dict, step: int) -> None:
    record["completions/clipped_ratio"] = 1.0


def no_spread(record: dict, step: int) -> None:
    record.update({"frac_reward_zero_std": 1.0, "reward_std": 0.0})


def nan_loss(record: dict, step: int) -> None:
    record["loss"] = math.nan


def inf_grad_norm(record: dict, step: int) -> None:
    record["grad_norm"] = math.inf


def kl_growing(record: dict, step: int) -> None:  # kl 0.002 (beta > 0), growing 1.5x a step from step 80
    record["kl"] = 0.002 * 1.5 ** max(0, step - 80)


def stale_sampler(record: dict, step: int) -> None:
    # the CPU demo's mismatch (k3_kl 4e-4) until step 60, then a server that stopped taking weights: the gap grows
    # with each update the trainer makes without it (the H100 run's steps, its own KL to the reference at beta 0.04
    # in another run: a few thousandths after tens of steps)
    record["rollout_correction/k3_kl"] = 4e-4 + 1e-3 * max(0, step - 60)


def clipped_every_update(record: dict, step: int) -> None:  # several updates a generation, too large a step
    record["clip_ratio/region_mean"] = 0.45


def std_only_no_spread(record: dict, step: int) -> None:  # a log without frac_reward_zero_std
    record.pop("frac_reward_zero_std", None)
    if step >= 50:
        record["reward_std"] = 0.0


# (name, change, from step, rule, step of the fatal verdict or None where it depends on smoothing, its since)
BROKEN = [
    ("format-collapse", format_collapse, 60, "reward-collapse", None, None),
    ("all-clipped", all_clipped, 40, "truncation", 49, 39),
    ("no-spread", no_spread, 50, "zero-spread", 69, 49),
    ("nan-loss", nan_loss, 30, "non-finite", 32, 29),
    ("inf-grad-norm", inf_grad_norm, 30, "non-finite", 32, 29),
    ("kl-growing", kl_growing, 1, "kl-blowup", 100, 95),
    ("stale-sampler", stale_sampler, 1, "sampler-mismatch", 84, 79),
    ("clipped", clipped_every_update, 40, "clipping", 49, 39),
    ("std-only-no-spread", std_only_no_spread, 1, "zero-spread", 69, 49),
]


@pytest.mark.parametrize("log", HEALTHY, ids=lambda path: path.name)
def test_no_fatal_verdict_on_a_healthy_run(log):
    verdicts = judge(read_steps(log))
    assert not [verdict for verdict in verdicts if verdict.fatal], [verdict.line() for verdict in verdicts]


def test_not_even_a_warning_on_the_h100_run():
    steps = read_steps(H100)
    assert len(steps) == 150 and judge(steps) == []
    zero = [record["frac_reward_zero_std"] for record in steps]
    assert zero.count(1.0) == 12  # isolated steps with every group alike: docs/watch.md quotes these figures
    assert max(record["completions/clipped_ratio"] for record in steps) < 0.05


@pytest.mark.parametrize(("name", "change", "first", "rule", "step", "since"), BROKEN, ids=[b[0] for b in BROKEN])
def test_each_rule_fires_fatal_on_the_log_made_to_fail_it(name, change, first, rule, step, since):
    verdicts = judge(steps_of(altered(change, first)))
    fatal = [verdict for verdict in verdicts if verdict.fatal]
    assert fatal and fatal[0].rule == rule, [verdict.line() for verdict in verdicts]
    assert len(fatal) == 1  # an ongoing condition is reported once as fatal, not at every step
    warnings = [verdict for verdict in verdicts if not verdict.fatal]
    assert [verdict.rule for verdict in warnings] == [rule]  # and once as a warning before that
    assert warnings[0].step < fatal[0].step and warnings[0].since == fatal[0].since
    if step is not None:
        assert (fatal[0].step, fatal[0].since) == (step, since)


def test_a_collapse_points_at_a_checkpoint_from_before_it():
    verdicts = judge(steps_of(altered(format_collapse, 60)))
    (fatal,) = [verdict for verdict in verdicts if verdict.fatal]
    # the end of the plateau, not its noisy best (format's 20-step average peaks at step 36), and before the fall
    assert 50 <= fatal.since < 60 < fatal.step <= 60 + 20 + 20  # judged within a window plus the patience
    assert "rewards/ThinkAnswerFormat/mean over 20 steps 0.20" in fatal.figures and "reward over 20" in fatal.figures
    assert fatal.line().startswith(f"fatal: reward-collapse at step {fatal.step} (failing since step {fatal.since}): ")
    assert "--learning_rate" in fatal.advice and f"before step {fatal.since}" in fatal.advice


def test_non_finite_since_is_the_step_before_the_first_nan():
    (warning, fatal) = judge(steps_of(altered(nan_loss, 30)))
    assert (warning.fatal, warning.step, warning.since) == (False, 30, 29)
    assert (fatal.fatal, fatal.step, fatal.since) == (True, 32, 29)
    assert fatal.figures == "loss or grad_norm non-finite for 3 steps (from step 30): loss nan at step 32"


# (name, change, first, last, rule that may warn or None for no verdict at all)
SPIKES = [
    ("format-dip-8-steps", format_collapse, 60, 67, "reward-collapse"),
    ("clipped-3-steps", all_clipped, 40, 42, "truncation"),
    ("no-spread-4-steps", no_spread, 50, 53, None),
    ("one-nan-loss", nan_loss, 30, 30, "non-finite"),
    ("nan-loss-twice", nan_loss, 30, 31, "non-finite"),
    ("kl-spike", lambda record, step: record.update(kl=5.0 if step == 90 else 0.01), 1, 150, "kl-blowup"),
]


@pytest.mark.parametrize(("name", "change", "first", "last", "rule"), SPIKES, ids=[s[0] for s in SPIKES])
def test_a_passing_spike_gives_at_most_one_warning(name, change, first, last, rule):
    verdicts = judge(steps_of(altered(change, first, last)))
    assert [(verdict.rule, verdict.fatal) for verdict in verdicts] == ([(rule, False)] if rule else [])


def test_the_plumbing_profile_only_warns_about_output_quality():
    tiny = [{"step": s, "loss": 0.0, "grad_norm": 0.1, "reward": 0.0, "reward_std": 0.0, "frac_reward_zero_std": 1.0,
             "completions/clipped_ratio": 1.0} for s in range(1, 61)]  # fmt: skip
    assert {verdict.rule for verdict in judge(tiny) if verdict.fatal} == {"truncation", "zero-spread"}
    plumbing = judge(tiny, Thresholds.plumbing())
    assert [(verdict.rule, verdict.fatal, verdict.step) for verdict in plumbing] == [
        ("truncation", False, 1),
        ("zero-spread", False, 5),
    ]
    broken = [dict(record, loss=math.nan) if record["step"] > 3 else record for record in tiny]
    assert [verdict.step for verdict in judge(broken, Thresholds.plumbing()) if verdict.fatal] == [6]


def test_a_stall_is_fatal_after_the_longer_of_the_floor_and_the_typical_step():
    watch = Watch()
    assert watch.idle(10**6) == []  # nothing before the first step: the model and vLLM are loading
    for record in read_steps(H100)[:30]:
        watch.add(record)
    assert watch.idle(1799.0) == [] and watch.fatal is None  # steps take ~3 s: the 30-minute floor rules
    (stalled,) = watch.idle(1801.0)
    assert (stalled.rule, stalled.fatal, stalled.step, stalled.since) == ("stalled", True, 30, 31)
    assert watch.fatal == stalled and watch.idle(5000.0) == []  # one verdict per silence

    slow = Watch(Thresholds(stall_seconds=60.0, stall_factor=10.0))
    for step in range(1, 6):
        slow.add({"step": step, "reward": 1.0, "elapsed_time": f"{step * 100 // 60}m {step * 100 % 60}s"})
    assert slow.idle(900.0) == []  # 10 x the 100 s between steps
    assert [verdict.rule for verdict in slow.idle(1001.0)] == ["stalled"]
    slow.add({"step": 6, "reward": 1.0})
    assert [verdict.rule for verdict in slow.idle(1001.0)] == ["stalled"]  # a new silence is a new verdict


def test_thresholds_refuse_values_out_of_range():
    with pytest.raises(SettingError, match="collapse_relative_drop: must be a fraction"):
        Thresholds(collapse_relative_drop=1.5)
    with pytest.raises(SettingError, match="kl_max: must be a positive number"):
        Thresholds(kl_max=math.nan)
    with pytest.raises(SettingError, match="warn_only"):
        Thresholds(warn_only=frozenset({"collapse"}))
    assert set(Thresholds.plumbing().warn_only) < set(RULES)


def test_every_threshold_belongs_to_exactly_one_rule():
    claimed = [name for rule in RULES.values() for name in rule.thresholds]
    fields = [name for name in vars(Thresholds()) if name != "warn_only"]
    assert sorted(claimed) == sorted(fields)  # none unclaimed, none claimed twice


def test_a_new_rule_is_one_record(monkeypatch):
    # A rule on a logged number, added as one Rule: the watch judges it, names it and gives its advice.
    rule = Rule("long-answers", ("kl_max", "kl_patience"), "ask for shorter answers",
                partial(Watch._above, rule="long-answers", key="completions/mean_length", limit="kl_max",
                        patience="kl_patience"))  # fmt: skip
    monkeypatch.setitem(RULES, rule.name, rule)
    steps = [{"step": step, "completions/mean_length": 2.0} for step in range(1, 8)]
    verdicts = judge(steps, Thresholds().parse(["kl_max=1.5", "kl_patience=3"]))
    assert [(v.rule, v.fatal, v.step) for v in verdicts] == [("long-answers", False, 1), ("long-answers", True, 3)]
    assert verdicts[-1].advice == "ask for shorter answers"


def test_a_task_says_its_words_before_a_rules_advice():
    steps = steps_of(altered(nan_loss, 5, 8))[:10]
    plain = judge(steps)[-1].advice
    advised = Watch(advice={"non-finite": "this task's runs diverge at lr 1e-5"})
    verdicts = [verdict for record in steps for verdict in advised.add(record)]
    assert verdicts[-1].advice == f"this task's runs diverge at lr 1e-5: {plain}"


@pytest.mark.parametrize(
    ("setting", "message"),
    [
        ("stall_second=60", "watch setting stall_second=60: no such threshold; closest stall_seconds"),
        ("stall_seconds", "watch setting stall_seconds: expected NAME=VALUE; closest stall_seconds"),
        ("truncation_patience=0", "watch setting truncation_patience=0: must be an integer >= 1, got 0"),
        ("truncation_patience=2.5", "watch setting truncation_patience=2.5: must be an integer >= 1, got '2.5'"),
        ("kl_max=1e400", "watch setting kl_max=1e400: must be a positive number, got inf"),
        ("kl_max=nan", "watch setting kl_max=nan: must be a positive number, got nan"),
        ("kl_max=big", "watch setting kl_max=big: must be a positive number, got 'big'"),
        ("zero_spread_fraction=1.5", "watch setting zero_spread_fraction=1.5: must be a fraction in (0, 1], got 1.5"),
    ],
)
def test_a_bad_threshold_setting_is_refused_in_one_line(setting, message):
    with pytest.raises(SettingError) as refused:
        Thresholds().parse([setting])
    assert str(refused.value) == message


def test_a_threshold_setting_is_read_as_its_fields_type():
    thresholds = Thresholds.plumbing().parse(["stall_seconds=3600", "zero_spread_patience=40", "kl_max=2"])
    assert (thresholds.stall_seconds, thresholds.zero_spread_patience, thresholds.kl_max) == (3600.0, 40, 2.0)
    assert type(thresholds.zero_spread_patience) is int and thresholds.warn_only == Thresholds.plumbing().warn_only


def test_a_verdict_is_one_line():
    verdict = Verdict("kl-blowup", False, 90, 89, "kl 5.00 (> 1)", "raise --beta")
    assert verdict.line() == "warning: kl-blowup at step 90 (failing since step 89): kl 5.00 (> 1); raise --beta"


# --- reading the log


def test_find_log_takes_the_file_a_run_folder_or_the_newest_versioned_folder(tmp_path):
    flat = write(tmp_path / "flat" / "logging.jsonl", [])  # swift --add_version false
    assert find_log(tmp_path / "flat") == find_log(flat) == flat
    old = write(tmp_path / "out" / "v0-20260101-000000" / "logging.jsonl", [])
    new = write(tmp_path / "out" / "v1-20260102-000000" / "logging.jsonl", [])
    os.utime(old, (2e9, 2e9))
    os.utime(new, (2e9 + 1, 2e9 + 1))  # the most recently written wins, whatever the names say
    assert find_log(tmp_path / "out") == new
    (tmp_path / "new").mkdir()
    with pytest.raises(DataError, match=r"no logging\.jsonl in it or in its run folders"):
        find_log(tmp_path / "new")


def test_read_steps_keeps_nan_and_skips_summary_eval_and_half_written_lines(tmp_path):
    records = [{"loss": math.nan, "reward": 1.0, "global_step/max_steps": "1/3"},
               {"eval_loss": 0.3, "global_step/max_steps": "1/3"}, {"train_runtime": 3.0}]  # fmt: skip
    log = write(tmp_path / "logging.jsonl", records, tail='{"loss": 0.1, "rew')
    assert "NaN" in log.read_text()
    (step,) = read_steps(log)
    assert step["step"] == 1 and math.isnan(step["loss"])


def test_log_tail_returns_each_step_once_as_the_file_grows(tmp_path):
    log = tmp_path / "v0" / "logging.jsonl"
    tail = LogTail(log)
    assert tail.read() == []  # the file does not exist yet
    lines = H100.read_text().splitlines(keepends=True)
    log.parent.mkdir()
    log.write_text(lines[0] + lines[1][:40])
    assert [record["step"] for record in tail.read()] == [1]
    with log.open("a") as file:
        file.write(lines[1][40:-1])  # the whole line but its newline
    assert [record["step"] for record in tail.read()] == [2]
    with log.open("a") as file:
        file.write("\n" + "".join(lines[2:10]))
    assert [record["step"] for record in tail.read()] == list(range(3, 11)) and not tail.finished
    assert tail.read() == []
    with log.open("a") as file:
        file.write("".join(lines[10:]))
    assert len(tail.read()) == 140 and tail.finished
    log.write_text(lines[0])  # replaced by a new run's log
    assert [record["step"] for record in tail.read()] == [1]


def test_a_log_of_another_trainer_is_told_apart():
    sft = [{"loss": 1.2, "grad_norm": 3.0, "token_acc": 0.6, "step": 1}]
    assert not is_grpo(sft) and is_grpo(read_steps(H100))


# --- the command line, as a user runs it


def watch(*args: object, timeout: float = 60) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "swift_plugins", "watch", *map(str, args)]
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout)


@pytest.mark.parametrize(("log", "steps"), [(H100, 150), (CPU_DEMO, 16)], ids=["h100", "cpu-demo"])
def test_watch_exits_0_on_the_healthy_runs(log, steps):
    result = watch(log)
    expected = f"{steps} steps judged in {log}, no fatal verdict\n"
    assert (result.returncode, result.stdout, result.stderr) == (0, expected, "")


@pytest.mark.parametrize(("name", "change", "first", "rule"), [b[:4] for b in BROKEN], ids=[b[0] for b in BROKEN])
def test_watch_exits_3_on_each_broken_log(tmp_path, name, change, first, rule):
    write(tmp_path / "out" / "v0-20260101-000000" / "logging.jsonl", altered(change, first))
    result = watch(tmp_path / "out")
    assert result.returncode == FATAL_STATUS == 3, result.stderr
    assert f"fatal: {rule} at step " in result.stderr and "Traceback" not in result.stderr
    log = tmp_path / "out" / "v0-20260101-000000" / "logging.jsonl"
    assert result.stdout.startswith(f"150 steps judged in {log}, fatal: {rule} at step ")


def test_watch_set_changes_a_threshold_and_refuses_a_bad_one():
    # The healthy H100 run has steps where every group was alike; a patience of 1 at that level makes them fatal.
    strict = watch(H100, "--set", "zero_spread_fraction=0.95", "--set", "zero_spread_patience=1")
    assert strict.returncode == 3 and "fatal: zero-spread at step " in strict.stderr
    refused = watch(H100, "--set", "zero_spread_patience=-1")
    assert refused.returncode == 2 and refused.stdout == ""
    assert refused.stderr.strip().endswith("watch setting zero_spread_patience=-1: must be an integer >= 1, got '-1'")


def test_watch_exits_2_with_one_line_on_bad_input(tmp_path):
    missing = watch(tmp_path / "missing")
    empty = watch(write(tmp_path / "empty" / "logging.jsonl", []))
    sft = [{"loss": 1.2, "grad_norm": 3.0, "token_acc": 0.6, "global_step/max_steps": f"{s}/9"} for s in (1, 2)]
    other = watch(write(tmp_path / "sft" / "logging.jsonl", sft))
    for result, message in [(missing, "no such file or folder"), (empty, "no training step logged"),
                            (other, "a log from another trainer")]:  # fmt: skip
        assert result.returncode == 2 and message in result.stderr, result.stderr
        assert len(result.stderr.splitlines()) == 1 and result.stdout == ""


def test_watch_judges_a_half_written_last_line_without_a_traceback(tmp_path):
    lines = H100.read_text().splitlines(keepends=True)
    log = tmp_path / "logging.jsonl"
    log.write_text("".join(lines[:50]) + lines[50][:100])
    result = watch(log)
    assert (result.returncode, result.stdout) == (0, f"50 steps judged in {log}, no fatal verdict\n"), result.stderr


FOLLOWING = "following {} every 0.05 s until the run ends or fails; Ctrl-C stops\n"


def follow(path: Path) -> subprocess.Popen:
    command = [sys.executable, "-m", "swift_plugins", "watch", str(path), "--follow", "--interval", "0.05"]
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def append(log: Path, text: str) -> None:
    with log.open("a") as file:
        file.write(text)
    time.sleep(0.2)


def test_follow_ends_with_3_when_a_fatal_pattern_is_appended(tmp_path):
    lines = H100.read_text().splitlines(keepends=True)
    log = tmp_path / "logging.jsonl"
    log.write_text("".join(lines[:20]))
    process = follow(log)
    try:
        append(log, "".join(lines[20:40]))
        assert process.poll() is None  # healthy steps: it keeps watching
        append(log, "".join(json.dumps(record) + "\n" for record in altered(nan_loss, 41, 43)[40:43]))
        out, err = process.communicate(timeout=30)
    finally:
        process.kill()
    assert process.returncode == 3, err
    assert err.splitlines()[-1].startswith("fatal: non-finite at step 43 (failing since step 40)")
    assert out == f"43 steps judged in {log}, fatal: non-finite at step 43 (1 warning)\n"


def test_follow_waits_for_the_log_and_ends_with_0_at_the_summary_line(tmp_path):
    lines = H100.read_text().splitlines(keepends=True)
    process = follow(tmp_path)  # the output folder exists; swift has not written its log yet
    try:
        waiting = FOLLOWING.format(f"{tmp_path} (no run yet: waiting for its logging.jsonl)")
        assert process.stderr.readline() == waiting and process.poll() is None
        log = tmp_path / "v0-20260101-000000" / "logging.jsonl"
        log.parent.mkdir()
        append(log, "".join(lines[:100]) + lines[100][:30])
        assert process.poll() is None
        append(log, lines[100][30:] + "".join(lines[101:]))  # the rest, the train_runtime line included
        out, err = process.communicate(timeout=30)
    finally:
        process.kill()
    err = err.replace(" (not written yet)", "")  # said if a read falls between the mkdir and the first write
    assert (process.returncode, err) == (0, FOLLOWING.format(log))  # each line names what it follows
    assert out == f"150 steps judged in {log}, no fatal verdict; training finished\n"


def test_follow_ends_with_130_on_ctrl_c(tmp_path):
    log = write(tmp_path / "logging.jsonl", h100_records()[:20])
    process = follow(log)
    try:
        assert process.stderr.readline() == FOLLOWING.format(log)  # following: Ctrl-C is the command's to handle
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=30)
    finally:
        process.kill()
    assert (process.returncode, out, err) == (130, "", "python -m swift_plugins watch: interrupted\n")
