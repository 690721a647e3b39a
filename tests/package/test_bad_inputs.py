"""Bad input costs nothing: every command that writes, run as a user runs it on real files, given an output that is
one of its inputs, two outputs on one path, an output name the file system refuses, one input twice, or a broken
input file, refuses in one line (exit 2) before any work, and every file is as it was. A held-out file is never read
as one when it belongs to an older training file or holds training rows, and generate never leaves one behind."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from swift_plugins.cli import main
from swift_plugins.core.files import read_rows, write_rows
from swift_plugins.tasks import task_named

from ..helpers import DATA, REPO, assert_refused, flag, parse_dry_run

LONG = "x" * 300  # a name over the 255 bytes of every Linux file system


@pytest.fixture
def files(tmp_path, monkeypatch):
    """A folder of what the commands read: Countdown puzzles, swift infer results of Countdown and GSM8K, gym rows,
    two evaluations of the same puzzles and one of another puzzle, a training log, a model folder."""
    monkeypatch.chdir(tmp_path)
    main(["countdown", "generate", "--size", "12", "--out", "puzzles.jsonl", "--jobs", "1", "--quiet"])
    rows = [json.loads(line) for line in Path("puzzles.jsonl").read_text().splitlines()]
    Path("puzzles.json").write_text(json.dumps(rows))
    Path("link.jsonl").symlink_to("puzzles.jsonl")
    answers = [{"response": "<think>6 + 6</think><answer>6 + 6 = 12</answer>", "nums": [6, 6], "target": 12},
               {"response": "<think>1</think><answer>1 + 3 = 4</answer>", "nums": [1, 3], "target": 4}]  # fmt: skip
    other = [{"response": "<think>2</think><answer>2 + 5 = 7</answer>", "nums": [2, 5], "target": 7}]
    for name, results in (("results", answers), ("other", other)):
        Path(f"{name}.jsonl").write_text("".join(json.dumps(row) + "\n" for row in results))
    shutil.copy(REPO / "tests" / "fixtures" / "gsm8k" / "results.jsonl", "gsm8k.jsonl")
    main(["gym", "generate", "basic_arithmetic", "--size", "3", "--out", "gym.jsonl", "--quiet"])
    Path("completions.jsonl").write_text(json.dumps({"completion": "<answer>1</answer>"}) + "\n")
    for stage, results in (("base", "results"), ("sft", "results"), ("other", "other")):
        Path("eval", stage).mkdir(parents=True)
        shutil.copy(f"{results}.jsonl", f"eval/{stage}/results.jsonl")
        main(["countdown", "score", f"eval/{stage}/results.jsonl", "--json", f"eval/{stage}/score.json",
              "--per-example", f"eval/{stage}/examples.jsonl"])  # fmt: skip
    Path("run").mkdir()
    shutil.copy(DATA / "h100_grpo_logging.jsonl", "run/logging.jsonl")
    Path("model").mkdir()
    Path("model/config.json").write_text("{}")
    return tmp_path


def snapshot(folder):
    return {path: path.read_bytes() for path in sorted(folder.rglob("*")) if path.is_file()}


def refused(capsys, argv, *parts):
    """Run the command; assert it refused with one error line holding ``parts`` (argparse's usage line above it
    for a bad argument) and wrote nothing; return that line."""
    before = snapshot(Path.cwd())
    capsys.readouterr()
    with pytest.raises(SystemExit) as status:
        main(argv)
    out, err = capsys.readouterr()
    lines = [line for line in err.splitlines() if not line.startswith(("usage:", " "))]
    assert status.value.code == 2 and len(lines) == 1 and "Traceback" not in err, err
    assert all(part in lines[0] for part in parts), lines[0]
    assert snapshot(Path.cwd()) == before and "wrote" not in out, out
    return lines[0]


INPUT = "cannot write it (an input of this command: write it elsewhere)"


@pytest.mark.parametrize(("argv", "path"), [
    (["countdown", "sft-data", "puzzles.jsonl", "--out", "./puzzles.jsonl"], "puzzles.jsonl"),
    (["countdown", "sft-data", "link.jsonl", "--out", "puzzles.jsonl"], "puzzles.jsonl"),
    (["countdown", "sft-data", "puzzles.jsonl", "--out", "link.jsonl"], "link.jsonl"),
    (["countdown", "audit", "puzzles.json", "--json", "puzzles.json"], "puzzles.json"),
    (["countdown", "audit", "puzzles.jsonl", "--unsolvable-out", "puzzles.jsonl"], "puzzles.jsonl"),
    (["countdown", "score", "results.jsonl", "--per-example", "results.jsonl"], "results.jsonl"),
    (["countdown", "score", "other.jsonl", "results.jsonl", "--per-example", "results.jsonl"], "results.jsonl"),
    (["gsm8k", "score", "gsm8k.jsonl", "--per-example", "gsm8k.jsonl"], "gsm8k.jsonl"),
    (["gym", "sft-data", "gym.jsonl", "--out", "gym.jsonl"], "gym.jsonl"),
    (["compare", "base=eval/base", "sft=eval/sft", "--out", "eval/sft/score"], "eval/sft/score.json"),
    (["evaluate", "model", "--task", "countdown", "--data", "eval/base/results.jsonl", "--out", "eval/base"],
     "eval/base"),  # the folder it replaces holds its input
    (["select", "model", "--task", "countdown", "--candidates", "puzzles.jsonl", "--out", "puzzles.jsonl"],
     "puzzles.jsonl"),
    (["select", "model", "--task", "countdown", "--candidates", "puzzles.jsonl", "--out", "kept.jsonl",
      "--held-out", "kept.jsonl.selection.json"], "kept.jsonl.selection.json"),  # its report would be written there
])  # fmt: skip
def test_no_command_writes_over_one_of_its_inputs(files, capsys, argv, path):
    refused(capsys, argv, f"{path}: {INPUT}")


@pytest.mark.parametrize(("argv", "path"), [
    (["countdown", "score", "results.jsonl", "--json", "x.json", "--per-example", "./x.json"], "x.json"),
    (["countdown", "score", "results.jsonl", "--per-example", "results.score.json"], "results.score.json"),
    (["countdown", "audit", "puzzles.jsonl", "--json", "a.json", "--unsolvable-out", "a.json"], "a.json"),
    (["gsm8k", "score", "gsm8k.jsonl", "--json", "y.json", "--per-example", "y.json"], "y.json"),
])  # fmt: skip
def test_no_command_writes_two_of_its_outputs_on_one_path(files, capsys, argv, path):
    refused(capsys, argv, f"{path}: cannot write it (two outputs of this command go there: give each its own path)")


def test_comparisons_named_apart_are_written_apart(files):
    for version in ("v1", "v2"):
        main(["compare", "base=eval/base", "sft=eval/sft", "--out", f"cmp.{version}"])
    assert sorted(path.name for path in files.glob("cmp.*")) == ["cmp.v1.json", "cmp.v1.md", "cmp.v2.json", "cmp.v2.md"]


@pytest.mark.parametrize("argv", [
    ["countdown", "generate", "--size", "2", "--out", f"{LONG}.jsonl"],
    ["countdown", "generate", "--size", "2", "--test-size", "1", "--out", f"{LONG}/train.jsonl"],
    ["countdown", "sft-data", "puzzles.jsonl", "--out", f"{LONG}.jsonl"],
    ["countdown", "audit", "puzzles.jsonl", "--json", f"{LONG}.json"],
    ["countdown", "audit", "puzzles.jsonl", "--unsolvable-out", f"{LONG}.parquet"],
    ["countdown", "score", "results.jsonl", "--json", f"{LONG}.json"],
    ["countdown", "score", "results.jsonl", "--per-example", f"{LONG}.jsonl"],
    ["gsm8k", "score", "gsm8k.jsonl", "--per-example", f"{LONG}.json"],
    ["gym", "generate", "basic_arithmetic", "--size", "2", "--out", f"{LONG}.jsonl"],
    ["gym", "sft-data", "gym.jsonl", "--out", f"{LONG}.jsonl"],
    ["compare", "base=eval/base", "--out", LONG],
    ["plot", "run", "--out", f"{LONG}.png"],
    ["evaluate", "model", "--task", "countdown", "--data", "puzzles.jsonl", "--out", LONG],
    ["select", "model", "--task", "countdown", "--candidates", "puzzles.jsonl", "--out", f"{LONG}.jsonl"],
    ["select", "model", "--task", "countdown", "--candidates", "puzzles.jsonl", "--out", f"{'y' * 245}.jsonl"],
    ["tiny-model", LONG],
    ["smol-model", f"models/{LONG}"],
])  # fmt: skip
def test_an_output_name_the_file_system_refuses_is_one_line_before_any_work(files, capsys, argv):
    refused(capsys, argv, "cannot write it (a name of ", " bytes, over the 255 the file system takes)")


@pytest.mark.parametrize(("argv", "why"), [
    (["gsm8k", "score", "gsm8k.jsonl", "gsm8k.jsonl"], "gsm8k.jsonl: the same file as gsm8k.jsonl: give each once"),
    (["countdown", "score", "results.jsonl", "./results.jsonl"], "the same file as results.jsonl"),
    (["compare", "a=eval/base", "b=eval/base/", "--out", "cmp"], "eval/base is stage 'a' and 'b'"),
    (["plot", "run", "--evals", "base=eval/base", "base=eval/sft"], "stage name 'base' given twice"),
    (["plot", "run", "--evals", "a=eval/base", "b=./eval/base"], "eval/base is stage 'a' and 'b'"),
    (["plot", "run", "--evals", "base=eval/base", "other=eval/other"], "the evaluations are not of the same prompts"),
])  # fmt: skip
def test_one_input_is_never_counted_twice(files, capsys, argv, why):
    refused(capsys, argv, why)


BROKEN = {
    "cut.json": b'[{"nums": [1, 2], "target": 3}, {"nums": [',
    "empty.json": b"",
    "damaged.parquet": bytes(range(256)) * 4,
    "empty.parquet": b"",
    "binary.jsonl": b"\x89PNG\r\n\x1a\n\x00\xff",
}
READERS = {
    "countdown audit": ["countdown", "audit", "{}"],
    "countdown sft-data": ["countdown", "sft-data", "{}", "--out", "sft.jsonl"],
    "countdown score": ["countdown", "score", "{}"],
    "gsm8k score": ["gsm8k", "score", "{}"],
    "gym sft-data": ["gym", "sft-data", "{}", "--out", "sft.jsonl"],
    "gym score rows": ["gym", "score", "{}", "completions.jsonl"],
    "gym score completions": ["gym", "score", "gym.jsonl", "{}"],
    "evaluate": ["evaluate", "model", "--task", "countdown", "--data", "{}", "--out", "eval/new"],
    "select": ["select", "model", "--task", "countdown", "--candidates", "{}", "--out", "kept.jsonl"],
}


@pytest.mark.parametrize("name", BROKEN)
@pytest.mark.parametrize("reader", READERS)
def test_a_broken_input_file_is_one_line_naming_it(files, capsys, reader, name):
    (files / name).write_bytes(BROKEN[name])
    refused(capsys, [word.format(name) for word in READERS[reader]], name)


@pytest.mark.parametrize("name", [*BROKEN, "notes", "folder.jsonl"])
def test_a_recipe_refuses_a_broken_data_file_in_one_line(sandbox, name):
    if name == "folder.jsonl":  # a folder holds data files, or it is refused
        (sandbox.tmp / name).mkdir()
    else:
        (sandbox.tmp / name).write_bytes(BROKEN.get(name, b"a note, not rows"))
    for env in ({"DATASET": f"./{name}"}, {"VAL_DATASET": sandbox.tmp / name}):
        assert_refused(sandbox.launch("countdown_1gpu.sh", DRY_RUN=1, **env), "countdown_1gpu.sh", name)


def test_an_empty_or_unreadable_input_is_one_line(files, capsys):
    Path("empty.jsonl").write_text("")
    Path("folder.jsonl").mkdir()
    refused(capsys, ["countdown", "sft-data", "empty.jsonl", "--out", "sft.jsonl"], "empty.jsonl: no puzzles in it")
    refused(capsys, ["gym", "sft-data", "empty.jsonl", "--out", "sft.jsonl"], "empty.jsonl: no rows in it")
    refused(capsys, ["countdown", "audit", "folder.jsonl"], "folder.jsonl: a folder, not a file")
    Path("eval/other/score.json").write_text('{"accuracy": 0.5, "sam')
    for argv in (["compare", "base=eval/base", "other=eval/other", "--out", "cmp"],
                 ["plot", "run", "--evals", "base=eval/base", "other=eval/other"]):  # fmt: skip
        refused(capsys, argv, "eval/other/score.json: not a readable report (Unterminated string")
    Path("eval/sft/examples.jsonl").write_text(json.dumps({"key": [[6, 6], 12], "formatted": True}) + "\n")
    refused(capsys, ["compare", "base=eval/base", "sft=eval/sft", "--out", "cmp"], "no 'verdict'")


@pytest.fixture
def split(tmp_path, monkeypatch):
    """d/cd.jsonl with its dev and test files and the record of the split, as generate writes them."""
    monkeypatch.chdir(tmp_path)
    main(["countdown", "generate", "--size", "40", "--test-size", "8", "--dev-size", "4", "--seed", "2", "--out",
          "d/cd.jsonl", "--jobs", "1", "--quiet"])  # fmt: skip
    return tmp_path / "d"


def test_generate_records_its_split_and_recipes_take_its_held_out_file(split, sandbox):
    record = json.loads((split / "cd.split.json").read_text())
    assert {name: (entry["name"], entry["rows"]) for name, entry in record.items()} == {
        "train": ("cd.jsonl", 40), "dev": ("cd.dev.jsonl", 4), "test": ("cd.test.jsonl", 8)}  # fmt: skip
    result = sandbox.launch("countdown_1gpu.sh", DRY_RUN=1, DATASET=split / "cd.jsonl")
    assert result.returncode == 0, result.stderr
    assert flag(parse_dry_run(result.stdout)["rlhf"][1], "--val_dataset") == str(split / "cd.test.jsonl")


CD = ["countdown", "generate", "--out", "d/cd.jsonl"]


@pytest.mark.parametrize(("argv", "stale"), [
    ([*CD, "--size", "50"], "d/cd.dev.jsonl holds dev rows"),
    ([*CD, "--size", "9", "--dev-size", "4"], "d/cd.test.jsonl holds test rows"),
    ([*CD, "--size", "0", "--test-size", "8"], "d/cd.dev.jsonl holds dev rows"),  # to OUT itself: OUT.dev is stale
    (["gym", "generate", "basic_arithmetic", "--size", "5", "--out", "g/ba.jsonl"], "g/ba.test.jsonl holds test rows"),
])  # fmt: skip
def test_generate_never_leaves_a_held_out_file_of_the_file_it_replaces(split, capsys, argv, stale):
    main(["gym", "generate", "basic_arithmetic", "--size", "5", "--test-size", "2", "--out", "g/ba.jsonl", "--quiet"])
    out = argv[argv.index("--out") + 1]
    refused(capsys, argv, f"{out}: cannot write it ({stale} drawn beside the {Path(out).name} this would replace, "
                          "and the new rows may hold them: give --")  # fmt: skip


def _made_again(split):
    """d/cd.jsonl written anew (by hand, or by a generate of an older version) with its test rows among its own."""
    with (split / "cd.jsonl").open("a") as rows:
        rows.write((split / "cd.test.jsonl").read_text())


def _overlapping(split):
    """A held-out file, without a record of its split, that holds three training rows."""
    (split / "cd.split.json").unlink()
    training = (split / "cd.jsonl").read_text().splitlines(keepends=True)
    (split / "cd.test.jsonl").write_text("".join(training[:3]))


@pytest.mark.parametrize(("change", "why"), [(_made_again, "held out from an earlier"),
                                             (_overlapping, "of its prompts are prompts of")])  # fmt: skip
def test_every_reader_refuses_a_held_out_file_of_an_older_training_file_or_one_holding_training_rows(
    split, sandbox, capsys, change, why
):
    change(split)
    train, test = split / "cd.jsonl", split / "cd.test.jsonl"
    for script, env in (("countdown_1gpu.sh", {}), ("countdown_multinode.sh", {"ROLE": "train", "ROLLOUT_HOST": "h"}),
                        ("countdown_3gpu.sh", {"VAL_DATASET": test})):  # fmt: skip
        assert_refused(sandbox.launch(script, DRY_RUN=1, DATASET=train, **env), script, str(test), why)
    assert_refused(sandbox.launch("countdown_1gpu.sh", DRY_RUN=1, DATASET=train, VAL_DATASET=f"{split}/./cd.jsonl"),
                   "countdown_1gpu.sh", "prompts are prompts of")  # the training file itself: every prompt
    os.chdir(split.parent)
    Path("model").mkdir()
    refused(capsys, ["evaluate", "model", "--task", "countdown", "--data", "d/cd.test.jsonl", "--out", "ev"], why)
    refused(capsys, ["select", "model", "--task", "countdown", "--candidates", "d/cd.jsonl", "--out", "kept.jsonl"],
            "d/cd.", why)  # fmt: skip


def test_per_example_files_of_every_tasks_results_are_written_in_parquet_too(files):
    for task in ("countdown", "gsm8k"):
        results = "results.jsonl" if task == "countdown" else "gsm8k.jsonl"
        main([task, "score", results, "--per-example", f"{task}.examples.parquet", "--json", f"{task}.score.json"])
        main([task, "score", results, "--per-example", f"{task}.examples.jsonl", "--json", f"{task}.score.json"])
        parquet, jsonl = (read_rows(f"{task}.examples.{suffix}") for suffix in ("parquet", "jsonl"))
        assert [row for _, row in parquet] == [row for _, row in jsonl]
    keys = [row["key"] for _, row in read_rows("countdown.examples.parquet")]  # a puzzle: one type, list and number
    assert keys == [{"nums": [6, 6], "target": 12}, {"nums": [1, 3], "target": 4}]
    scoring = task_named("gym:basic_arithmetic").scoring_module()  # evaluate's examples of a gym task
    answered = [(where, {**row, "response": "<answer>1</answer>"}) for where, row in read_rows("gym.jsonl")]
    assert write_rows(map(scoring.sample_record, scoring.samples_from_rows(answered)), "gym.parquet") == 3


@pytest.mark.parametrize(("script", "env"), [
    ("countdown_1gpu.sh", {}), ("countdown_3gpu.sh", {}), ("gsm8k_1gpu.sh", {}),
    ("countdown_multinode.sh", {"ROLE": "rollout"}),
])  # fmt: skip
def test_a_dry_run_refuses_an_output_folder_the_run_could_not_make(sandbox, script, env):
    (sandbox.tmp / "afile").write_text("")
    for out, why in ((sandbox.tmp / "afile", "a file, not a folder"),
                     (sandbox.tmp / "afile" / "run", f"{sandbox.tmp / 'afile'} is a file, not a folder"),
                     (sandbox.tmp / LONG, "a name of 300 bytes")):  # fmt: skip
        assert_refused(sandbox.launch(script, DRY_RUN=1, OUTPUT_DIR=out, **env), script,
                       f"OUTPUT_DIR={out}: cannot write it ({why}")  # fmt: skip


def test_a_dry_run_refuses_a_selection_that_would_write_over_its_candidates(sandbox):
    candidates = sandbox.out / "selected.jsonl"  # where the selection writes
    sandbox.out.mkdir()
    candidates.write_text('{"nums": [1, 2], "target": 3}\n')
    result = sandbox.launch("countdown_1gpu.sh", DRY_RUN=1, DATASET=candidates, SELECT_SAMPLES=8)
    assert_refused(result, "countdown_1gpu.sh", f"the selected rows, {candidates}: cannot write them (an input of this "
                                                "command: write it elsewhere); point DATASET or OUTPUT_DIR elsewhere")


def test_the_demos_dry_run_refuses_an_output_folder_it_could_not_make(tmp_path):
    (tmp_path / "afile").write_text("")
    out = tmp_path / "afile" / "demo"
    result = subprocess.run([sys.executable, "-m", "swift_plugins.demo"], capture_output=True, text=True, timeout=120,
                            env={**os.environ, "DRY_RUN": "1", "OUTPUT_DIR": str(out)})  # fmt: skip
    assert_refused(result, "countdown_demo.sh", f"OUTPUT_DIR={out}: cannot write it ({tmp_path / 'afile'} is a file")
