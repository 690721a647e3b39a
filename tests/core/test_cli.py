"""The command line, run as users run it: python -m swift_plugins ... (and the task aliases, python -m
swift_plugins.countdown ...)."""

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from swift_plugins.core.cli import run_command
from swift_plugins.core.processes import live_tree

from ..helpers import STOP_WAIT, wait_until


def run(*args, check=True):
    result = subprocess.run(
        [sys.executable, "-m", "swift_plugins.countdown", *map(str, args)], capture_output=True, text=True, timeout=300
    )
    if check:
        assert result.returncode == 0, result.stderr
    return result


def read_jsonl(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_generate_writes_train_and_holdout_then_audit_finds_all_solvable(tmp_path):
    out = tmp_path / "data" / "train.jsonl"
    run("generate", "--size", 500, "--test-size", 50, "--seed", 3, "--out", out, "--quiet")
    train, test = read_jsonl(out), read_jsonl(tmp_path / "data" / "train.test.jsonl")
    assert len(train) == 500 and len(test) == 50
    keys = [(tuple(sorted(r["nums"])), r["target"]) for r in train + test]
    assert len(set(keys)) == 550  # the holdout shares no puzzle with the training rows

    report = tmp_path / "report.json"
    result = run("audit", out, "--json", report, "--quiet")
    assert "500 rows, 500 solvable" in result.stdout
    assert json.loads(report.read_text())["solvable"] == 500


def test_generate_is_deterministic_and_takes_num_as_the_old_name_of_size(tmp_path):
    for name, option in (("a", "--size"), ("b", "--num")):
        run("generate", option, 200, "--seed", 9, "--out", tmp_path / f"{name}.jsonl", "--quiet", "--jobs", 1)
    assert (tmp_path / "a.jsonl").read_text() == (tmp_path / "b.jsonl").read_text()


def test_generate_of_held_out_rows_alone_writes_them_to_the_file_named(tmp_path):
    result = run("generate", "--size", 0, "--test-size", 20, "--seed", 4, "--out", tmp_path / "eval.jsonl", "--jobs", 1)
    assert result.stdout == f"wrote 20 held-out rows to {tmp_path / 'eval.jsonl'}\n"
    assert os.listdir(tmp_path) == ["eval.jsonl"]  # no empty training file, no eval.test.jsonl
    run("generate", "--size", 20, "--seed", 4, "--out", tmp_path / "train.jsonl", "--quiet", "--jobs", 1)
    assert read_jsonl(tmp_path / "eval.jsonl") == read_jsonl(tmp_path / "train.jsonl")


def test_audit_of_hub_style_parquet_writes_unsolvable_rows(tmp_path):
    path = tmp_path / "hub.parquet"
    pq.write_table(pa.table({"target": [24, 100, 10], "nums": [[6, 2, 6], [1, 1, 1], [2, 5, 1]]}), path)
    unsolvable = tmp_path / "unsolvable.jsonl"
    result = run("audit", path, "--unsolvable-out", unsolvable, "--quiet")
    assert "3 rows, 2 solvable" in result.stdout
    assert read_jsonl(unsolvable) == [{"row": 1, "nums": [1, 1, 1], "target": 100}]


def test_solve_prints_a_checked_solution_or_fails():
    assert run("solve", 24, 1, 3, 4, 6).stdout.strip() == "6 / (1 - 3 / 4) = 24"
    result = run("solve", 100, 1, 1, 1, check=False)
    assert result.returncode == 1 and "no solution" in result.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["generate", "--size", "-1", "--out", "x.jsonl"], "must be >= 0"),
        (["generate", "--size", "ten", "--out", "x.jsonl"], "invalid integer value: 'ten'"),
        (["generate", "--size", "5", "--out", "x.jsonl", "--jobs", "0"], "must be >= 1"),
        (["generate", "--size", "5", "--out", "x.jsonl", "--count", "2-9"], "max_count <= 4"),
        (["generate", "--size", "5", "--out", "x.jsonl", "--numbers", "9-1"], "empty range"),
        (["audit", "missing.jsonl"], "missing.jsonl: no such file"),
        (["audit", "data.csv"], "no such file"),
        (["solve", "24", "1", "2", "3", "4", "5"], "1 to 4 numbers"),
        (["solve", "24", "20000", "2"], "at most 10000"),
    ],
)
def test_bad_arguments_get_one_clear_line(args, message, tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "swift_plugins.countdown", *args],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=60,
    )
    assert result.returncode == 2
    assert message in result.stderr
    assert "Traceback" not in result.stderr


def test_audit_names_the_bad_line(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"nums": [1, 2], "target": 3}\n{"nums": [1, 2], "target": \n')
    result = run("audit", path, check=False)
    assert result.returncode == 2
    assert "bad.jsonl:2: not valid JSON" in result.stderr


@pytest.mark.parametrize(("stop", "status"), [(lambda pid: os.killpg(pid, signal.SIGINT), 130),  # a terminal's Ctrl-C
                                              (lambda pid: os.kill(pid, signal.SIGTERM), 143)])  # kill PID: the parent
def test_ctrl_c_or_kill_during_generate_prints_one_line_ends_its_workers_and_writes_nothing(tmp_path, stop, status):
    out = tmp_path / "train.jsonl"
    process = subprocess.Popen(
        [sys.executable, "-m", "swift_plugins.countdown", "generate", "--size", "5000000", "--out", out, "--jobs", "2"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    chunks: list[str] = []
    reader = threading.Thread(target=lambda: chunks.extend(iter(lambda: process.stderr.read(1), "")), daemon=True)
    reader.start()
    deadline = time.monotonic() + 120
    while not re.search(r"[0-9]rows/s", "".join(chunks)):  # the progress bar's first rate: workers are generating
        assert process.poll() is None, f"generate ended before it could be interrupted: {''.join(chunks)}"
        assert time.monotonic() < deadline, f"no progress in 120 s: {''.join(chunks)[-500:]}"
        time.sleep(0.05)
    workers = live_tree({process.pid}) - {process.pid}
    stop(process.pid)
    try:
        process.wait(timeout=120)
        assert wait_until(lambda: not live_tree({process.pid}), timeout=STOP_WAIT), "the workers outlived generate"
    finally:
        if live_tree({process.pid}):  # never left running by a failed test
            os.killpg(process.pid, signal.SIGKILL)
    reader.join(timeout=10)
    stderr = "".join(chunks)
    assert len(workers) == 2 and process.returncode == status
    assert "Traceback" not in stderr and "KeyboardInterrupt" not in stderr
    assert stderr.count("interrupted") == 1
    assert stderr.rstrip().splitlines()[-1] == "python -m swift_plugins countdown generate: interrupted"
    assert not out.exists() and os.listdir(tmp_path) == []


def test_every_command_reports_ctrl_c_in_one_line(capsys):
    parser = argparse.ArgumentParser(prog="tool")
    command = parser.add_subparsers(dest="command", required=True).add_parser("slow")

    def interrupted(args):
        raise KeyboardInterrupt

    command.set_defaults(run=interrupted)
    with pytest.raises(SystemExit) as exit_status:
        run_command(parser, ["slow"])
    assert exit_status.value.code == 130
    assert capsys.readouterr().err == "tool slow: interrupted\n"


def test_generate_refuses_at_once_more_puzzles_than_the_ranges_allow(tmp_path):
    out = tmp_path / "e.jsonl"
    result = subprocess.run(
        [sys.executable, "-m", "swift_plugins.countdown", "generate", "--size", str(10**20), "--out", out],
        capture_output=True,
        text=True,
        timeout=60,  # today it draws for ever, memory growing
    )
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "more than the 437,206,275 distinct ones allowed by 3-4 numbers of 1-99 with targets 1-99" in result.stderr
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("suffix", [".parquet", ".json"])
def test_generate_writes_the_format_the_extension_names(tmp_path, suffix):
    out = tmp_path / f"train{suffix}"
    run("generate", "--size", 30, "--test-size", 5, "--out", out, "--quiet", "--jobs", 1)
    held_out = tmp_path / f"train.test{suffix}"
    rows = pq.read_table(out).to_pylist() if suffix == ".parquet" else json.loads(out.read_text())
    assert len(rows) == 30 and set(rows[0]) == {"nums", "target", "solution"}
    assert "5 rows, 5 solvable" in run("audit", held_out, "--quiet").stdout
    sft = tmp_path / f"sft{suffix}"
    run("sft-data", out, "--out", sft)
    assert "30 rows" in run("audit", out, "--quiet").stdout and sft.stat().st_size > 0


def _score_inputs(folder):
    """A swift-infer-like results file of two Countdown puzzles, and an evaluate folder scored from it."""
    results = folder / "results.jsonl"
    rows = [{"response": "<think>6 + 6</think><answer>6 + 6 = 12</answer>", "nums": [6, 6], "target": 12}] * 2
    results.write_text("".join(json.dumps(row) + "\n" for row in rows))
    run("score", results, "--json", folder / "eval" / "score.json", "--per-example", folder / "eval" / "examples.jsonl")
    (folder / "taken.jsonl").mkdir()
    (folder / "taken.json").mkdir()
    (folder / "file").write_text("")


FOLDER = "Is a directory"
DATA = "expected a .jsonl, .json or .parquet file"


@pytest.mark.parametrize(
    ("command", "path", "reason"),
    [
        (["countdown", "generate", "--size", "5", "--out", "taken.jsonl"], "taken.jsonl", FOLDER),
        (["countdown", "generate", "--size", "5", "--out", "rows.csv"], "rows.csv", DATA),
        (["countdown", "generate", "--size", "5", "--test-size", "1", "--out", "taken"], "taken", DATA),
        (
            ["countdown", "generate", "--size", "5", "--out", "file/rows.jsonl"],
            "file/rows.jsonl",
            "file is a file, not a folder",
        ),
        (["countdown", "audit", "results.jsonl", "--json", "report.jsonl"], "report.jsonl", "expected a .json file"),
        (["countdown", "audit", "results.jsonl", "--unsolvable-out", "taken.jsonl"], "taken.jsonl", FOLDER),
        (["countdown", "score", "results.jsonl", "--json", "taken.json"], "taken.json", FOLDER),
        (["countdown", "score", "results.jsonl", "--per-example", "examples.txt"], "examples.txt", DATA),
        (["countdown", "sft-data", "results.jsonl", "--out", "sft.csv"], "sft.csv", DATA),
        (
            ["gsm8k", "score", "results.jsonl", "--json", "file/score.json"],
            "file/score.json",
            "file is a file, not a folder",
        ),
        (["compare", "a=eval", "--out", "taken"], "taken.json", FOLDER),
        (["plot", "eval", "--out", "curves"], "curves", "expected a .png, .pdf or .svg file"),
    ],
)
def test_an_unusable_output_is_refused_before_any_work_naming_the_users_path(tmp_path, command, path, reason):
    _score_inputs(tmp_path)
    result = subprocess.run(
        [sys.executable, "-m", "swift_plugins", *command], capture_output=True, text=True, cwd=tmp_path, timeout=120
    )
    name = " ".join(command[:2] if command[0] in ("countdown", "gsm8k") else command[:1])
    assert result.returncode == 2
    assert result.stdout == ""  # no report printed before the failure
    assert result.stderr == f"python -m swift_plugins {name}: error: {path}: cannot write it ({reason})\n"
    assert sorted(os.listdir(tmp_path)) == ["eval", "file", "results.jsonl", "taken.json", "taken.jsonl"]


@pytest.mark.parametrize("task, args", [("countdown", ["solve", "24", "6", "2", "6"]), ("gym", ["list"]),
                                        ("gsm8k", ["score", "--help"])])  # fmt: skip
def test_a_tasks_alias_runs_the_tasks_command_of_the_front_door(task, args):
    def run(*argv):
        return subprocess.run([sys.executable, "-m", *argv], capture_output=True, text=True, timeout=120)

    front, alias = run("swift_plugins", task, *args), run(f"swift_plugins.{task}", *args)
    assert front.returncode == alias.returncode == 0, alias.stderr
    assert front.stdout == alias.stdout and len(front.stdout.splitlines()) >= 1
