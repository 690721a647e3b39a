"""The README's (and docs/gpu.md's) evaluation steps paste as printed, into the folders the recipes really write.

Each shell block of the README marked ``<!-- readme-test: NAME -->`` runs in bash (``set -euo pipefail``) in a
temporary "clone" holding what a user has after a GPU run: ``output/<recipe>-<time>/v0-<time>/checkpoint-<N>``, the
run folder named by the recipe itself (its DRY_RUN output) and ms-swift's version and checkpoint folders inside.
``python`` on PATH is tests/stand_ins/python: it parses each command line with the package's own parsers, checks
that the model and data it names exist, writes what the command writes and records the call; no model runs.
"""

import json
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from swift_plugins.cli import build_parser
from swift_plugins.countdown.generator import CountdownConfig, generate

from ..helpers import REPO, TESTS, flag, make_checkpoint, parse_dry_run, unknown_to_swift

README = REPO / "README.md"
USER_PATH = (README, REPO / "docs" / "gpu.md")  # the README and the GPU path in full: what a user pastes
STAND_IN = TESTS / "stand_ins" / "python"
GSM8K_TEST_ROWS = "data/gsm8k.test.jsonl"  # what the README's GSM8K download step writes
MARKED_BLOCK = re.compile(r"<!-- readme-test: ([\w-]+) -->\s*\n```bash\n(.*?)```", re.S)


def marked_block(name):
    blocks = [code for path in USER_PATH for mark, code in MARKED_BLOCK.findall(path.read_text()) if mark == name]
    assert len(blocks) == 1, f"README.md and docs/gpu.md need one ```bash block after <!-- readme-test: {name} -->"
    return blocks[0]


def python_wrappers(folder, script=None):
    """``python``/``python3`` in folder: this environment's interpreter, running ``script`` if given."""
    folder.mkdir(exist_ok=True)
    command = shlex.join([sys.executable, *([str(script)] if script else [])])
    for name in ("python", "python3"):
        (folder / name).write_text(f'#!/bin/sh\nexec {command} "$@"\n')
        (folder / name).chmod(0o755)
    return folder


def trainer_flags(script, tmp_path, **env):
    """The `swift rlhf` argv a recipe would run, from its DRY_RUN output (no GPU, nothing started)."""
    bin_dir = python_wrappers(tmp_path / "launcher-bin")
    result = subprocess.run(
        ["bash", str(REPO / "shell" / script)],
        env={"PATH": f"{bin_dir}:/usr/bin:/bin", "HOME": str(tmp_path), "LANG": "C.UTF-8",
             "PYTHONPATH": str(REPO), "PYTHONDONTWRITEBYTECODE": "1", "DRY_RUN": "1", **env},
        cwd=tmp_path, capture_output=True, text=True, timeout=60,
    )
    assert result.returncode == 0, result.stderr
    return parse_dry_run(result.stdout)["rlhf"][1]


def make_run(clone, output_dir, steps):
    """A finished run as ms-swift leaves it under the recipe's OUTPUT_DIR; returns its last checkpoint."""
    relative = Path(output_dir).relative_to(REPO)  # the recipes write under <repo>/output
    when = relative.name[-len("YYYYmmdd-HHMMSS") :]
    version = clone / relative / f"v0-{when}"
    for step in steps:
        make_checkpoint(version, step)
    (version / "last-checkpoint").symlink_to(f"checkpoint-{steps[-1]}")  # ms-swift 4.6 keeps this link
    return (version / f"checkpoint-{steps[-1]}").resolve()


def older(output_dir):
    """The same recipe's folder for a run started long before."""
    return output_dir[: -len("YYYYmmdd-HHMMSS")] + "20000101-000000"


def run_block(block, clone, tmp_path, hub_ids):
    """Runs a README block in the clone with the stand-in python; returns the calls it recorded."""
    bin_dir = python_wrappers(tmp_path / "bin", STAND_IN)
    calls = tmp_path / "calls.jsonl"
    result = subprocess.run(
        ["bash", "-c", "set -euo pipefail\n" + block],
        env={"PATH": f"{bin_dir}:/usr/bin:/bin", "HOME": str(tmp_path), "LANG": "C.UTF-8",
             "PYTHONPATH": str(REPO), "PYTHONDONTWRITEBYTECODE": "1",
             "README_TEST_CALLS": str(calls), "README_TEST_HUB_IDS": ",".join(hub_ids)},
        cwd=clone, capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 0, f"the README block failed:\n{block}\n{result.stderr}"
    return [json.loads(line) for line in calls.read_text().splitlines()] if calls.exists() else []


def evaluations_of(calls, model):
    return [call for call in calls if call["command"] == "evaluate" and call["model"] == str(model)]


def test_first_screen_shows_the_three_commands_and_the_demo_table():
    top = "\n".join(README.read_text().splitlines()[:45])
    demo_table = "| `SEED` | after 36 SFT steps |"  # the demo's runs on the test puzzles, one row a seed
    for text in ("make demo", "make smoke", "make test", demo_table, "500 test puzzles", "| mean (sd) |", "resources/"):
        assert text in top


def test_readme_names_no_document_a_reader_cannot_open():
    assert "seed doc" not in README.read_text().lower()


def checked_evaluations(calls, final, base_model, run, task):
    """The evaluate calls of ``final`` and of ``base_model``: each with the run's task, system prompt and
    completion length, and the two compared."""
    trained, base = evaluations_of(calls, final), evaluations_of(calls, base_model)
    assert trained and base, f"expected evaluations of {final} and {base_model}, got {calls}"
    for call in trained + base:
        assert call["task"] == task
        assert call["system"] == flag(run, "--system")  # the prompt the recipe trains with (None: in the rows)
        assert call["max_new_tokens"] == int(flag(run, "--max_completion_length"))
    compared = [set(call["stages"].values()) for call in calls if call["command"] == "compare"]
    assert any({trained[-1]["out"], base[-1]["out"]} <= stages for stages in compared)
    return trained, base


def test_countdown_evaluation_pastes_as_printed(tmp_path):
    run = trainer_flags("countdown_3gpu.sh", tmp_path)
    smoke = trainer_flags("countdown_3gpu.sh", tmp_path, SMOKE="1")
    clone = tmp_path / "clone"
    # 3093: the default run's last step (49,500 rows, 16 prompts a step; ms-swift drops the incomplete last batch).
    final = make_run(clone, flag(run, "--output_dir"), (100, 900, 1000, 3093))
    make_run(clone, older(flag(run, "--output_dir")), (100, 200))
    make_run(clone, flag(smoke, "--output_dir"), (4,))  # a later SMOKE=1 run is not the one to evaluate
    base_model = flag(run, "--model")

    calls = run_block(marked_block("evaluate-countdown"), clone, tmp_path, hub_ids=[base_model])

    trained, base = checked_evaluations(calls, final, base_model, run, "countdown")
    assert all(call["data"] == trained[0]["data"] for call in trained + base)


def test_gsm8k_evaluation_pastes_as_printed(tmp_path):
    assert GSM8K_TEST_ROWS in marked_block("gsm8k-data")
    run = trainer_flags("gsm8k_3gpu.sh", tmp_path)
    clone = tmp_path / "clone"
    final = make_run(clone, flag(run, "--output_dir"), (100, 200, 300, 400, 500))
    (clone / GSM8K_TEST_ROWS).parent.mkdir(parents=True)
    shutil.copy(TESTS / "fixtures" / "gsm8k" / "test.jsonl", clone / GSM8K_TEST_ROWS)
    base_model = flag(run, "--model")

    calls = run_block(marked_block("evaluate-gsm8k"), clone, tmp_path, hub_ids=[base_model])

    trained, base = checked_evaluations(calls, final, base_model, run, "gsm8k")
    assert all(call["data"] == str((clone / GSM8K_TEST_ROWS).resolve()) for call in trained + base)


@pytest.mark.parametrize("line", ["-m swift_plugins evaluate", "-c 'print(1)'", "-m swift_plugins plot run"])
def test_stand_in_refuses_what_the_readme_steps_do_not_run(tmp_path, line):
    bin_dir = python_wrappers(tmp_path / "bin", STAND_IN)
    result = subprocess.run(
        f"python {line}", shell=True, capture_output=True, text=True, timeout=60, cwd=tmp_path,
        env={"PATH": f"{bin_dir}:/usr/bin:/bin", "PYTHONPATH": str(REPO), "README_TEST_CALLS": str(tmp_path / "c")},
    )
    assert result.returncode == 2 and not (tmp_path / "c").exists()


FENCED_BASH = re.compile(r"(<!-- readme-test: [\w-]+ -->\s*\n)?```bash\n(.*?)```", re.S)
SWIFT_CLASSES = {"rlhf": "RLHFArguments", "rollout": "RolloutArguments"}
PACKAGE_PARSERS = {"swift_plugins": [], "swift_plugins.countdown": ["countdown"], "swift_plugins.gsm8k": ["gsm8k"]}


def unmarked_commands():
    """Each command line (continuations joined, comments dropped) of the README's bash blocks that no
    ``readme-test`` block runs, with its words; assignments of a shell variable only are left out."""
    lines = []
    for mark, block in (found for path in USER_PATH for found in FENCED_BASH.findall(path.read_text())):
        if mark:
            continue
        for line in block.replace("\\\n", " ").splitlines():
            words = shlex.split(line, comments=True)
            if words and not re.fullmatch(r"[A-Z_]+=\$\(.*", line.split("#")[0].strip()):
                lines.append((line, words))
    return lines


@pytest.mark.stack  # the installed ms-swift's arguments
def test_every_other_readme_command_names_what_exists_and_parses(tmp_path):
    """make targets exist; pip's extras are declared; each recipe line runs as DRY_RUN (its settings and flags
    accepted, nothing started); each package command parses with the package's own parser."""
    makefile, pyproject = (REPO / "Makefile").read_text(), (REPO / "pyproject.toml").read_text()
    targets = re.search(r"^\.PHONY: (.*)$", makefile, re.M).group(1).split()
    run = tmp_path / "run"
    make_checkpoint(run / "v0-20260101-000000", 100)  # $RUN of the README: a run with a checkpoint
    # The recipe lines run in a folder of their own ($PWD) holding the data the README's generate line writes.
    here = tmp_path / "here"
    (here / "data").mkdir(parents=True)
    (here / "shell").symlink_to(REPO / "shell")
    rows = generate(CountdownConfig(), count=8, seed=0)
    (here / "data" / "train.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    bin_dir = python_wrappers(tmp_path / "bin")
    kinds, swift_commands = set(), []
    for line, words in unmarked_commands():
        program = next(word for word in words if not re.fullmatch(r"[A-Z_]+=.*", word))
        rest = words[words.index(program) + 1 :]
        if program == "make":
            assert set(rest) <= set(targets), line
        elif program == "pip":
            for extras in re.findall(r"\.\[([\w,]+)\]", line):
                assert all(f"\n{extra} = [" in pyproject for extra in extras.split(",")), line
            for requirements in re.findall(r"-r (\S+)", line):
                assert (REPO / requirements).is_file(), line
        elif program == "bash" and rest[0].startswith("shell/"):
            result = subprocess.run(
                ["bash", "-c", line], cwd=here, capture_output=True, text=True, timeout=60,
                env={"PATH": f"{bin_dir}:/usr/bin:/bin", "HOME": str(tmp_path), "LANG": "C.UTF-8",
                     "PYTHONPATH": str(REPO), "PYTHONDONTWRITEBYTECODE": "1", "DRY_RUN": "1", "RUN": str(run)},
            )  # fmt: skip
            assert result.returncode == 0, f"{line}\n{result.stderr}"
            swift_commands += [(SWIFT_CLASSES[name], argv) for name, (_, argv) in parse_dry_run(result.stdout).items()]
        elif program == "python" and rest[:1] == ["-m"] and rest[1] in PACKAGE_PARSERS:
            build_parser().parse_args([*PACKAGE_PARSERS[rest[1]], *rest[2:]])  # argparse exits 2 on a bad line
        elif (program in ("python3", "python3.12") and rest[:2] == ["-m", "venv"]) or program == ".":
            pass
        elif program == ".venv/bin/pytest":
            markers = [word for word in re.findall(r"\w+", rest[1]) if word != "not"] if rest[:1] == ["-m"] else []
            assert all(f'"{marker}:' in pyproject for marker in markers), line
        else:
            raise AssertionError(f"teach this test the README command: {line}")
        kinds.add(program)
    assert {"make", "pip", "bash", "python"} <= kinds
    assert swift_commands and unknown_to_swift(swift_commands) == []  # ms-swift knows every flag


def anchors(markdown: str) -> set[str]:
    """GitHub's anchors of a document's headings: lower case, punctuation dropped, spaces to hyphens."""
    headings = re.findall(r"^#+ (.*)$", markdown, re.M)
    return {re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-") for heading in headings}


@pytest.mark.parametrize("document", ["README.md", "docs", "benchmarks/README.md"])
def test_every_relative_link_reaches_a_file_and_heading(document):
    paths = sorted((REPO / document).glob("*.md")) if (REPO / document).is_dir() else [REPO / document]
    for path in paths:
        for target in re.findall(r"\]\(([^)\s]+)\)", path.read_text()):
            if re.match(r"\w+://", target):
                continue
            file, _, anchor = target.partition("#")
            linked = (path.parent / file).resolve() if file else path
            assert linked.exists(), f"{path.name}: {target}"
            if anchor:
                assert anchor in anchors(linked.read_text()), f"{path.name}: {target}"
