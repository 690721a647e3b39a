"""`python -m swift_plugins evaluate`: inputs checked before swift starts, Ctrl-C, the output folder, truncation.

The checks of model, data and output folder run without swift (fast); the rest run the real
``swift infer`` on the tiny model (marked e2e): the finished evaluation through vLLM's CPU build (the default
where vLLM is installed), the others through transformers (what they check does not depend on the backend).
"""

import contextlib
import io
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from swift_plugins.tools.evaluate import EvaluationError, Sampling, check_model, infer_command

from ..helpers import RUN_TIMEOUT, real_run

pytestmark = pytest.mark.stack  # swift, transformers or vLLM of this venv

PROGRAM = "python -m swift_plugins evaluate"
OFFLINE = {**os.environ, "HF_HUB_OFFLINE": "1", "MODELSCOPE_OFFLINE": "1"}
TINY = ["--", "--model_type", "qwen2", "--template", "qwen2_5", "--torch_dtype", "float32"]


def evaluate(*args, cwd=None, timeout=RUN_TIMEOUT):
    with real_run():
        return subprocess.run(
            [sys.executable, "-m", "swift_plugins", "evaluate", *map(str, args)],
            capture_output=True,
            text=True,
            env=OFFLINE,
            cwd=cwd,
            timeout=timeout,
        )


def _one_line_error(result, *fragments):
    assert result.returncode == 2, result.stderr[-2000:]
    assert len(result.stderr.splitlines()) == 1, result.stderr[-2000:]
    assert result.stderr.startswith(f"{PROGRAM}: error: ")
    for fragment in fragments:
        assert fragment in result.stderr


def _folder_names(folder: Path) -> list[str]:
    return sorted(path.name for path in folder.iterdir())


@pytest.mark.parametrize("model", ["./nonexistent_model", "nonexistent_model", "../gone/model", "~/no/such/model"])
def test_a_missing_local_model_is_refused_in_one_line_before_swift_starts(model, tmp_path, countdown_jsonl):
    result = evaluate(model, "--task", "countdown", "--data", countdown_jsonl, "--out", "ev", cwd=tmp_path, timeout=60)
    _one_line_error(result, f"model {model}: no such folder")
    assert not (tmp_path / "ev").exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--samples", "4", "--temperature", "0"], "--samples 4 at --temperature 0: greedy decoding gives one answer"),
        (["--samples", "0"], "argument --samples: must be >= 1, got 0"),
        (["--samples", "2", "--temperature", "inf"], "argument --temperature: a number >= 0, got 'inf'"),
        (["--samples", "2", "--top-k", "0"], "argument --top-k: must be >= 1, got 0"),
    ],
)
def test_bad_sampling_is_refused_in_one_line_before_swift_starts(args, message, tmp_path, countdown_jsonl):
    result = subprocess.run(
        [sys.executable, "-m", "swift_plugins", "evaluate", "Qwen/Qwen2.5-0.5B-Instruct", "--task", "countdown",
         "--data", str(countdown_jsonl), "--out", str(tmp_path / "out"), *args],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert result.returncode == 2 and "Traceback" not in result.stderr and not (tmp_path / "out").exists()
    assert message in result.stderr.strip().splitlines()[-1]  # argparse's usage, then the one error line


def test_sampling_reaches_swift_as_its_decoding_flags():
    greedy = infer_command("m", "d", "r", backend="vllm")
    assert greedy[greedy.index("--temperature") : greedy.index("--max_new_tokens")] == ["--temperature", "0"]
    command = infer_command("m", "d", "r", backend="vllm", sampling=Sampling(8, 0.7, 50, 3))
    start = command.index("--temperature")
    flags = dict(zip(command[start : start + 10 : 2], command[start + 1 : start + 10 : 2], strict=True))
    assert flags == {"--temperature": "0.7", "--top_p": "1", "--seed": "3", "--top_k": "50",
                     "--max_new_tokens": "256"}  # fmt: skip


@pytest.mark.parametrize(("task", "tokens"), [("countdown", "1024"), ("gsm8k", "400")])
def test_answers_may_be_as_long_as_training_allowed_unless_told(task, tokens, tmp_path, monkeypatch):
    """Without --max-new-tokens, swift infer is asked for the task's training --max_completion_length (the help
    says which); swift itself is not run: the command it would get is recorded."""
    from swift_plugins import cli
    from swift_plugins.tools import evaluate as module

    rows = {"countdown": {"nums": [1, 2], "target": 3}, "gsm8k": {"question": "q", "answer": "a #### 1"}}[task]
    data = tmp_path / "rows.jsonl"
    data.write_text(json.dumps(rows) + "\n")
    asked = []
    monkeypatch.setattr(module, "_run", lambda command, log: asked.append(command) or 1)
    argv = ["evaluate", "org/model", "--task", task, "--data", str(data), "--out", str(tmp_path / "out")]
    with pytest.raises(SystemExit):
        cli.main([*argv, "--backend", "transformers"])
    assert asked[0][asked[0].index("--max_new_tokens") + 1] == tokens
    with pytest.raises(SystemExit), contextlib.redirect_stdout(io.StringIO()) as help_text:
        cli.main(["evaluate", "--help"])
    assert f"{task} {tokens}" in " ".join(help_text.getvalue().split())


def test_a_hub_id_or_an_existing_folder_passes_the_model_check(tmp_path):
    assert check_model("Qwen/Qwen2.5-3B-Instruct") == "Qwen/Qwen2.5-3B-Instruct"
    assert check_model(str(tmp_path)) == str(tmp_path)
    with pytest.raises(EvaluationError, match="no such folder"):
        check_model(str(tmp_path / "checkpoint-3125"))  # its parent exists: a local path


BAD_DATA = {
    "countdown": [
        ("", "no rows"),
        ('{"nums": [1, 2], "target": 3}\n{"nums": [1, 2], "target": "x"}\n', ":2: target must be an integer"),
        ('{"nums": [1, 2], "target": 3}\nnot json\n', ":2: not valid JSON"),
        ('{"question": "q", "answer": "a #### 1"}\n', ":1: Countdown data needs columns 'nums' and 'target'"),
    ],
    "gsm8k": [
        ("\n", "no rows"),
        ('{"question": "q?", "answer": "no final line"}\n', ":1: the GSM8K answer has no '#### N' final line"),
        ('{"nums": [1, 2], "target": 3}\n', ":1: GSM8K data needs columns 'question' and 'answer'"),
    ],
}


@pytest.mark.parametrize(
    ("task", "text", "message"), [(task, text, message) for task, cases in BAD_DATA.items() for text, message in cases]
)
def test_bad_data_is_refused_in_one_line_naming_file_and_row(task, text, message, tmp_path, tiny_model_stub):
    data = tmp_path / "data.jsonl"
    data.write_text(text)
    result = evaluate(tiny_model_stub, "--task", task, "--data", data, "--out", tmp_path / "ev", timeout=60)
    _one_line_error(result, str(data), message)
    assert _folder_names(tmp_path) == ["data.jsonl", "model"]


def test_a_missing_data_file_is_refused(tmp_path, tiny_model_stub):
    result = evaluate(tiny_model_stub, "--task", "gsm8k", "--data", tmp_path / "gone.jsonl", "--out", tmp_path / "ev")
    _one_line_error(result, f"{tmp_path / 'gone.jsonl'}: no such file")


def test_an_out_folder_with_other_files_is_refused(tmp_path, tiny_model_stub, countdown_jsonl):
    out = tmp_path / "ev"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    result = evaluate(tiny_model_stub, "--task", "countdown", "--data", countdown_jsonl, "--out", out)
    _one_line_error(result, f"--out {out}: holds notes.txt")
    assert _folder_names(out) == ["notes.txt"]


@pytest.fixture
def tiny_model_stub(tmp_path) -> Path:
    """A folder standing for a model: enough for the checks that run before swift starts."""
    folder = tmp_path / "model"
    folder.mkdir()
    return folder


# ---- real swift infer on the tiny model ----


@pytest.fixture(scope="module")
def puzzles(tmp_path_factory, countdown_rows) -> Path:
    path = tmp_path_factory.mktemp("puzzles") / "eval.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in countdown_rows[:4]))
    return path


@pytest.fixture(scope="module")
def evaluation(tmp_path_factory, tiny_model, puzzles) -> Path:
    """A finished evaluation of the tiny model, 16 new tokens per answer (a random model never stops earlier)."""
    out = tmp_path_factory.mktemp("evaluation") / "ev"
    result = evaluate(tiny_model, "--task", "countdown", "--data", puzzles, "--out", out, "--max-new-tokens", 16,
                      "--quiet", *TINY)  # fmt: skip
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    score = json.loads((out / "score.json").read_text())
    assert (score["backend"], score["torch_dtype"]) == ("vllm", "float32")  # compare pairs stages in one precision
    return out


@pytest.mark.e2e
def test_every_cut_off_answer_counts_as_truncated_in_evaluate_and_score(evaluation, tmp_path):
    rows = [json.loads(line) for line in (evaluation / "results.jsonl").read_text().splitlines()]
    assert [(row["finish_reason"], row["completion_tokens"]) for row in rows] == [("length", 16)] * 4
    assert json.loads((evaluation / "score.json").read_text())["truncation_rate"] == 1.0
    report = tmp_path / "score.json"
    score = subprocess.run(
        [sys.executable, "-m", "swift_plugins.countdown", "score", evaluation / "results.jsonl", "--json", report],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert score.returncode == 0, score.stderr
    assert json.loads(report.read_text())["truncation_rate"] == 1.0
    assert _folder_names(evaluation) == ["examples.jsonl", "infer.log", "results.jsonl", "score.json"]
    assert _folder_names(evaluation.parent) == ["ev"]  # no temporary folder left beside it
    examples = [json.loads(line) for line in (evaluation / "examples.jsonl").read_text().splitlines()]
    assert examples[0]["source"] == f"{evaluation / 'results.jsonl'}:1"


def _children(pid: int) -> list[int]:
    found = []
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            fields = dict(line.split(":\t", 1) for line in status.read_text().splitlines() if ":\t" in line)
        except OSError:
            continue
        if fields.get("PPid", "").strip() == str(pid):
            found.append(int(status.parent.name))
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.e2e
def test_ctrl_c_stops_swift_prints_one_line_and_leaves_no_folder(tmp_path, tiny_model, puzzles):
    out = tmp_path / "ev"
    process = subprocess.Popen(
        [sys.executable, "-m", "swift_plugins", "evaluate", str(tiny_model), "--task", "countdown",
         "--data", str(puzzles), "--out", str(out), "--max-new-tokens", "4096", "--backend", "transformers", *TINY],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=OFFLINE,
        start_new_session=True,  # its own process group, as a shell runs a foreground job
    )  # fmt: skip
    deadline = time.monotonic() + 120
    while not (swift := _children(process.pid)) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert swift, "swift infer never started"
    time.sleep(2)
    os.killpg(process.pid, signal.SIGINT)  # what Ctrl-C in a terminal does: SIGINT to the foreground group
    _, stderr = process.communicate(timeout=120)
    assert process.returncode == 130, stderr[-3000:]
    assert stderr.splitlines()[-1] == f"{PROGRAM}: interrupted"
    assert "Traceback" not in stderr
    assert not any(_alive(pid) for pid in swift)
    assert _folder_names(tmp_path) == []  # no --out folder, no temporary one


@pytest.mark.e2e
def test_a_previous_evaluation_is_replaced_whole(evaluation, tiny_model, puzzles):
    before = (evaluation / "results.jsonl").read_text()
    (evaluation / "infer.log").unlink()  # the second run writes swift's output to the terminal instead
    result = evaluate(tiny_model, "--task", "countdown", "--data", puzzles, "--out", evaluation, "--limit", 3,
                      "--max-new-tokens", 8, "--backend", "transformers", *TINY)  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    assert _folder_names(evaluation) == ["examples.jsonl", "results.jsonl", "score.json"]
    rows = [json.loads(line) for line in (evaluation / "results.jsonl").read_text().splitlines()]
    assert (evaluation / "results.jsonl").read_text() != before
    assert {row["completion_tokens"] for row in rows} == {8}
    # --limit 3: the first 3 of the 4 rows, each answered once
    examples = [json.loads(line) for line in (evaluation / "examples.jsonl").read_text().splitlines()]
    assert [(example["nums"], example["target"]) for example in examples] == [
        (row["nums"], row["target"]) for row in map(json.loads, puzzles.read_text().splitlines()[:3])]  # fmt: skip
    report = json.loads((evaluation / "score.json").read_text())
    assert report["limit"] == 3 and report["data"] == str(puzzles)


@pytest.mark.e2e
def test_a_failing_swift_leaves_no_out_folder_and_keeps_its_log_beside(tmp_path, tiny_model_stub, countdown_jsonl):
    out = tmp_path / "ev"
    result = evaluate(tiny_model_stub, "--task", "countdown", "--data", countdown_jsonl, "--out", out, "--quiet",
                      "--backend", "transformers", *TINY)  # fmt: skip
    _one_line_error(result, f"swift infer failed with status 1 on {tiny_model_stub} (see {tmp_path / 'ev.infer.log'})")
    assert _folder_names(tmp_path) == ["countdown.jsonl", "ev.infer.log", "model"]
    assert "Traceback" in (tmp_path / "ev.infer.log").read_text()  # swift's own error, for the user to read
