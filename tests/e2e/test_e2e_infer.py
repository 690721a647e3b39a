"""`swift infer` with the tiny model on generated puzzles, then `score` on its real result files."""

import json
import os
import subprocess
import sys

import pytest

from swift_plugins.countdown.scoring import load_samples, score_samples

from ..helpers import run_real

# Not rerun in the GPU stacks: swift infer runs there in test_evaluate's evaluations and the smoke run's selection;
# what is left here is score on swift's own result files.
pytestmark = pytest.mark.e2e

PUZZLES = 4


@pytest.fixture(scope="module")
def results(tmp_path_factory, tiny_model, repo):
    """Two sampled result files (seeds 1 and 2) over the same four held-out puzzles."""
    folder = tmp_path_factory.mktemp("infer")
    data = folder / "eval.jsonl"  # --size 0: the held-out rows are the only ones, in the file named
    subprocess.run(
        [
            sys.executable,
            "-m",
            "swift_plugins.countdown",
            "generate",
            "--size",
            "0",
            "--test-size",
            str(PUZZLES),
            "--seed",
            "5",
            "--out",
            str(data),
            "--quiet",
        ],
        check=True,
    )
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "MODELSCOPE_OFFLINE": "1"}
    paths = []
    for seed in (1, 2):
        path = folder / f"sample{seed}.jsonl"
        command = [
            "swift",
            "infer",
            "--model",
            str(tiny_model),
            "--model_type",
            "qwen2",
            "--template",
            "qwen2_5",
            "--torch_dtype",
            "float32",
            "--external_plugins",
            str(repo / "swift_plugins" / "plugin.py"),
            "--val_dataset",
            str(data),
            "--infer_backend",
            "transformers",
            "--max_new_tokens",
            "16",
            "--temperature",
            "1.0",
            "--seed",
            str(seed),
            "--result_path",
            str(path),
        ]
        run = run_real([os.path.join(os.path.dirname(sys.executable), "swift"), *command[1:]], env=env, cwd=folder)
        assert run.returncode == 0, run.stderr[-3000:]
        paths.append(path)
    puzzles = [json.loads(line) for line in data.read_text().splitlines()]
    return paths, puzzles


def test_real_results_are_scored_from_their_prompts(results):
    paths, puzzles = results
    samples = load_samples(paths)
    assert sorted({s.key for s in samples}) == sorted((tuple(sorted(p["nums"])), p["target"]) for p in puzzles)
    report = score_samples(samples)
    assert report["samples"] == 2 * PUZZLES and report["puzzles"] == PUZZLES and report["samples_per_puzzle"] == 2
    assert report["accuracy"] == 0.0  # a random model
    assert sum(report["failures"].values()) == 2 * PUZZLES
    assert sum(row["samples"] for row in report["accuracy_by_count"].values()) == 2 * PUZZLES
    assert set(report["pass_at_k"]) == {"1", "2"}


def test_a_correct_answer_in_a_real_result_file_counts(results, tmp_path):
    paths, puzzles = results
    rows = [json.loads(line) for line in paths[0].read_text().splitlines()]
    first = rows[0]["messages"][0]["content"]
    solution = next(p for p in puzzles if f"Using the numbers {p['nums']}," in first)["solution"]
    rows[0]["response"] = f"<think>worked it out</think>\n<answer>{solution}</answer>"
    edited = tmp_path / "edited.jsonl"
    edited.write_text("".join(json.dumps(row) + "\n" for row in rows))
    report = score_samples(load_samples([edited, paths[1]]))
    assert report["accuracy"] == round(1 / (2 * PUZZLES), 4)
    assert report["format_rate"] >= report["accuracy"]
    assert report["pass_at_k"]["2"] == round(1 / PUZZLES, 4)
