"""Selecting training rows by solve rate: the band, the paths it refuses, and the prompt keys of every task.

The selection itself, on a real model, is in tests/e2e/test_learning.py (deterministic for a seed, disjoint from
the held-out rows).
"""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from swift_plugins.core.errors import DataError, OutputError, SettingError
from swift_plugins.gym.generator import generate
from swift_plugins.selection import select
from swift_plugins.selection.band import Band, histogram
from swift_plugins.selection.select import check_paths, prompt_keys
from swift_plugins.tools.evaluate import Sampling

from ..helpers import REPO

GSM8K = REPO / "tests" / "fixtures" / "gsm8k"


@pytest.mark.parametrize(
    ("band", "message"),
    [
        (dict(samples=1), "a solve rate needs at least 2 samples"),
        (dict(samples=8, least=5, most=3), "band 5-3 of 8: expected 0 <= least <= most <= samples"),
        (dict(samples=8, least=1, most=9), "band 1-9 of 8"),
        (dict(samples=4, least=0, most=4), "keeps every row: nothing is selected"),
    ],
)
def test_a_band_that_cannot_select_is_refused(band, message):
    with pytest.raises(SettingError, match=message):
        Band(**band)


def test_the_band_keeps_its_counts_and_the_histogram_stars_them():
    band = Band(samples=4, least=2, most=4)
    assert [band.keeps(solved) for solved in range(5)] == [False, False, True, True, True]
    assert histogram([4, 0, 2], band).splitlines() == ["solved  rows  kept", "  0/4      1", "  2/4      1     *",
                                                      "  4/4      1     *"]  # fmt: skip


def _write(path, rows):
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def test_the_output_is_never_the_candidates_or_a_held_out_file(tmp_path, countdown_rows):
    train = _write(tmp_path / "train.jsonl", countdown_rows[:20])
    test = _write(tmp_path / "train.test.jsonl", countdown_rows[20:])
    for out in (train, Path(f"{tmp_path}/../{tmp_path.name}/train.jsonl")):  # the candidates, however spelled
        with pytest.raises(OutputError, match=r"train\.jsonl: cannot write it \(an input of this command"):
            check_paths("countdown", train, out)
    report = _write(tmp_path / "kept.jsonl.selection.json", countdown_rows[30:])  # select's report of kept.jsonl
    with pytest.raises(OutputError, match=r"selection\.json: cannot write it \(an input of this command"):
        check_paths("countdown", train, tmp_path / "kept.jsonl", (report,))
    with pytest.raises(SettingError, match="never writes held-out rows"):
        check_paths("countdown", train, test)
    other = _write(tmp_path / "other.jsonl", countdown_rows[30:])
    with pytest.raises(SettingError, match="never writes held-out rows"):
        check_paths("countdown", train, other, (other,))
    assert check_paths("countdown", train, tmp_path / "kept.jsonl") == (test,)  # the sibling is kept apart
    dev = _write(tmp_path / "train.dev.jsonl", countdown_rows[25:30])
    with pytest.raises(SettingError, match="never writes held-out rows"):
        check_paths("countdown", train, dev)
    assert check_paths("countdown", train, tmp_path / "kept.jsonl") == (dev, test)  # both siblings
    _write(dev, countdown_rows[:1])
    with pytest.raises(DataError, match=r"train\.dev\.jsonl: 1 of its prompts are prompts of .*train\.jsonl too"):
        check_paths("countdown", train, tmp_path / "kept.jsonl")


def test_a_repeated_candidate_is_counted_per_row_as_the_band_judges_it(tmp_path, countdown_rows, monkeypatch):
    """Two copies of one puzzle, each solved 6 of 8 times: both kept, and the report counts two rows solved 6 times,
    as the histogram does, not the one question solved 12 of 16 times that the evaluation's report pools."""
    candidates = _write(tmp_path / "train.jsonl", [countdown_rows[0], countdown_rows[0], countdown_rows[1]])

    def evaluate(model, asked, out, **options):  # swift infer's answers, each result row with its row's count
        out.mkdir()
        _write(out / "results.jsonl", [{"solved": solved} for solved in (6, 6, 0) for _ in range(8)])
        return {"solve_counts": {"0": 1, "12": 1}}  # what evaluate reports: answers pooled by question

    monkeypatch.setattr(select, "evaluate", evaluate)
    kept = tmp_path / "kept.jsonl"
    selection = select.select_rows("model", candidates, kept, task="countdown", band=Band(samples=8),
                                   sampling=Sampling(samples=8))
    assert (selection.kept, selection.solve_counts) == (2, {"0": 1, "6": 2})
    assert json.loads((tmp_path / "kept.jsonl.selection.json").read_text())["solve_counts"] == {"0": 1, "6": 2}
    assert [json.loads(line) for line in kept.read_text().splitlines()] == [countdown_rows[0]] * 2


def test_candidates_sharing_a_held_out_prompt_are_refused(tmp_path, countdown_rows):
    train = _write(tmp_path / "train.jsonl", countdown_rows[:20])
    # the same puzzle with its numbers in another order is the same puzzle
    leaked = dict(countdown_rows[5], nums=list(reversed(countdown_rows[5]["nums"])))
    held_out = _write(tmp_path / "held.jsonl", [leaked, *countdown_rows[20:]])
    with pytest.raises(DataError, match=r"held\.jsonl: 1 of its prompts are prompts of .*train\.jsonl too"):
        check_paths("countdown", train, tmp_path / "kept.jsonl", (held_out,))


def test_every_task_gives_its_rows_prompt_keys_without_scoring_them(tmp_path, countdown_rows):
    gym = _write(tmp_path / "gym.jsonl", generate("basic_arithmetic", size=12).train)
    gsm8k_rows = len(GSM8K.joinpath("test.jsonl").read_text().splitlines())
    countdown = _write(tmp_path / "c.jsonl", countdown_rows)
    for task, path, rows in (("countdown", countdown, len(countdown_rows)), ("gsm8k", GSM8K / "test.jsonl", gsm8k_rows),
                             ("gym:basic_arithmetic", gym, 12)):  # fmt: skip
        assert len(prompt_keys(task, path)) == rows, task  # distinct rows, distinct keys


@pytest.mark.parametrize(("band", "message"), [
    ("3-1", "band 3-1 of 4: expected 0 <= least <= most <= samples"),
    ("7", "band '7': expected LEAST-MOST right answers of 4, such as 1-7"),
])  # fmt: skip
def test_the_command_refuses_a_bad_band_in_one_line(tmp_path, countdown_rows, band, message):
    train = _write(tmp_path / "train.jsonl", countdown_rows)
    result = subprocess.run(
        [sys.executable, "-m", "swift_plugins", "select", "Qwen/Qwen2.5-0.5B-Instruct", "--task", "countdown",
         "--candidates", str(train), "--out", str(tmp_path / "kept.jsonl"), "--samples", "4", "--band", band],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.strip().splitlines()[-1].endswith(message)
    assert not (tmp_path / "kept.jsonl").exists()
