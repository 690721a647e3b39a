"""``watch`` as a user runs it on a resumed run, a dead run, bad options and files that are not a log."""

import json
import os
import time
from pathlib import Path

import pytest

from swift_plugins.watch import LogTail, read_steps
from swift_plugins.watch.live import LiveWatch

from .test_watch import CPU_DEMO, FOLLOWING, H100, altered, append, follow, h100_records, nan_loss, watch, write

V0, V1 = "v0-20260101-000000", "v1-20260102-000000"


def lines_of(records: list[dict]) -> str:
    return "".join(json.dumps(record) + "\n" for record in records)


def aged(path: Path, seconds: float) -> Path:
    """``path`` as last written ``seconds`` ago."""
    then = time.time() - seconds
    os.utime(path, (then, then))
    return path


def test_follow_waits_for_a_resumed_run_instead_of_judging_the_finished_one(tmp_path):
    aged(write(tmp_path / V0 / "logging.jsonl", h100_records()), 60)  # finished: its train_runtime line came
    (tmp_path / V1).mkdir()  # RESUME=auto's run: swift made its folder, no step logged yet
    process = follow(tmp_path)
    log = tmp_path / V1 / "logging.jsonl"
    try:
        assert process.stderr.readline() == FOLLOWING.format(f"{log} (not written yet)")
        time.sleep(0.5)
        assert process.poll() is None  # not "150 steps judged ...; training finished" about v0
        append(log, lines_of(altered(nan_loss, 101)[100:103]))
        out, err = process.communicate(timeout=30)
    finally:
        process.kill()
    assert process.returncode == 3, err
    assert out == f"3 steps judged in {log}, fatal: non-finite at step 103 (1 warning)\n"


def test_follow_moves_to_a_run_that_starts_after_it(tmp_path):
    old = write(tmp_path / V0 / "logging.jsonl", h100_records()[:40])  # died without its summary line
    aged(old, 60)
    process = follow(tmp_path)
    try:
        assert process.stderr.readline() == FOLLOWING.format(old)
        (tmp_path / V1).mkdir()
        append(tmp_path / V1 / "logging.jsonl", lines_of(altered(nan_loss, 31)[30:33]))
        out, err = process.communicate(timeout=30)
    finally:
        process.kill()
    log = tmp_path / V1 / "logging.jsonl"
    assert process.returncode == 3, err
    assert err.splitlines()[0] == FOLLOWING.format(f"{log}, a newer run than {V0}").strip()
    assert err.splitlines()[-1].startswith("fatal: non-finite at step 33 (failing since step 30)")
    assert out.startswith(f"3 steps judged in {log}, fatal: non-finite at step 33")


def test_a_plain_watch_of_a_folder_judges_the_newest_run_and_names_it(tmp_path):
    aged(write(tmp_path / V0 / "logging.jsonl", h100_records()), 60)
    new = write(tmp_path / V1 / "logging.jsonl", altered(nan_loss, 101)[100:103])
    result = watch(tmp_path)
    assert result.returncode == 3 and result.stdout.startswith(f"3 steps judged in {new}, fatal: non-finite")


def test_follow_counts_the_stall_from_the_logs_last_write(tmp_path):
    log = aged(write(tmp_path / "logging.jsonl", h100_records()[:40]), 3 * 3600)  # dead for 3 hours
    process = follow(log)
    try:
        out, err = process.communicate(timeout=30)  # at once, not 30 minutes from now
    finally:
        process.kill()
    assert process.returncode == 3, err
    assert err.splitlines()[-1].startswith("fatal: stalled at step 40 (failing since step 41): no step logged for 10")
    assert out == f"40 steps judged in {log}, fatal: stalled at step 40\n"


def test_a_plain_watch_warns_of_a_log_silent_for_longer_than_the_stall_limit(tmp_path):
    dead = aged(write(tmp_path / "dead" / "logging.jsonl", h100_records()[:40]), 3 * 3600)
    result = watch(dead)
    assert result.returncode == 0, result.stderr
    assert result.stderr.startswith("warning: stalled at step 40 (failing since step 41): no step logged for 10")
    assert result.stdout == f"40 steps judged in {dead}, no fatal verdict (1 warning)\n"
    fresh = write(tmp_path / "fresh" / "logging.jsonl", h100_records()[:40])  # still running: said nothing of
    finished = aged(write(tmp_path / "finished" / "logging.jsonl", h100_records()), 3 * 3600)  # ended: its summary
    for log in (fresh, finished):
        assert watch(log).stderr == ""


@pytest.mark.parametrize("interval", ["1e308", "nan", "inf", "0", "-1", "abc", "3601"])
def test_a_bad_interval_is_one_line(tmp_path, interval):
    result = watch(H100, "--follow", "--interval", interval)
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr == (
        f"python -m swift_plugins watch: error: --interval: a number of seconds from 0.01 to 3600, got '{interval}'\n"
    )


def test_an_interval_without_follow_is_refused():
    result = watch(H100, "--interval", "5")
    assert (result.returncode, result.stdout) == (2, "")
    refusal = "--interval: only with --follow (a plain watch reads the log once)"
    assert result.stderr == f"python -m swift_plugins watch: error: {refusal}\n"


@pytest.mark.parametrize(
    "content",
    [
        os.urandom(4096),  # garbage
        H100.read_text().encode("utf-16"),  # the right lines, in the wrong encoding
        json.dumps(h100_records()[:5]).encode(),  # a JSON array, on one line without its newline
        json.dumps(h100_records()[:5], indent=1).encode() + b"\n",  # a JSON array over many lines
    ],
    ids=["garbage", "utf-16", "json-array", "json-array-indented"],
)
def test_a_file_that_is_not_a_logging_jsonl_is_told_so(tmp_path, content):
    log = tmp_path / "logging.jsonl"
    log.write_bytes(content)
    for result in (watch(log), watch(log, "--follow", "--interval", "0.05")):
        assert (result.returncode, result.stdout) == (2, ""), result.stderr
        assert result.stderr == f"python -m swift_plugins watch: error: {log}: not a logging.jsonl (no line of it is " \
            "a JSON object; ms-swift writes one JSON object a line, in UTF-8)\n"  # fmt: skip


@pytest.mark.parametrize("log", [H100, CPU_DEMO], ids=["h100", "cpu-demo"])
def test_a_log_read_a_block_at_a_time_gives_the_same_steps(log):
    tail = LogTail(log)
    tail.file.CHUNK = 97  # blocks that end anywhere in a line
    chunks = list(tail.chunks())
    assert len(chunks) > 10 and [record for chunk in chunks for record in chunk] == read_steps(log)
    assert tail.finished and tail.file.offset == log.stat().st_size


def test_the_watch_reads_a_long_line_split_over_many_blocks(tmp_path):
    records = h100_records()
    records[3]["padding"] = "x" * 5000  # a line longer than many blocks
    log = write(tmp_path / "logging.jsonl", records)
    tail = LogTail(log)
    tail.file.CHUNK = 64
    steps = tail.read()
    assert [record["step"] for record in steps] == list(range(1, 151)) and steps == read_steps(log)
    assert steps[3]["padding"] == "x" * 5000


def test_the_launchers_watch_moves_to_a_newer_run_written_since_it_started(tmp_path):
    aged(aged(write(tmp_path / V0 / "logging.jsonl", h100_records()[:40]), 60).parent, 60)
    said = []
    live = LiveWatch(tmp_path, said.append, started=time.time() - 1, interval=0)
    assert live.poll() == [] and live.tail is None  # v0 predates the launch: not judged
    write(tmp_path / V1 / "logging.jsonl", altered(nan_loss, 41)[40:43])
    assert [verdict.rule for verdict in live.poll()] == ["non-finite", "non-finite"]
    assert live.tail.path == tmp_path / V1 / "logging.jsonl" and live.watch.steps == 3
