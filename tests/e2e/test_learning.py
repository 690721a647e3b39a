"""A real model learns through the package: a short cold-start SFT, then TRL's GRPOTrainer with its rewards.

The learning test cannot pass on a model that did not learn: SmolLM2-135M-Instruct answers the
Countdown prompt in prose (format rate about 0), and after a few SFT steps on the package's worked
rows its held-out format rate must reach 0.5, with the paired 95% interval of the change above 0.
Every number comes from real ``swift sft``, ``swift infer`` and ``score`` runs on CPU; ``evaluate`` goes through
vLLM's CPU build (its default where vLLM is installed), whose float32 answers must be transformers' own.
"""

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

from swift_plugins.core.intervals import paired_change
from swift_plugins.tools.compare import compare

from ..helpers import REPO, run_real

# Not rerun in the GPU stacks' venvs. The SFT is the demo's cold start, which runs on the CPU stack; the GPU stacks'
# recipes train with GRPO, which every stack's smoke and server-path runs exercise. vLLM's answers against
# transformers': each stack's smoke run checks vLLM's greedy answers against transformers' from the same weights after
# every sync (tests/e2e/test_e2e_grpo.py), and selects its rows through that stack's swift infer and vLLM. The sampled
# evaluation's arithmetic and the selection are the package's own.
pytestmark = pytest.mark.e2e

SFT_STEPS = 12
HELD_OUT = 40
OFFLINE = {"HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}


def _run(module: str, *args: str) -> str:
    run = run_real([sys.executable, "-m", module, *args], env={**os.environ, **OFFLINE})
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-3000:]
    return run.stdout


@pytest.fixture(scope="module")
def puzzles(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("learning")
    _run("swift_plugins.countdown", "generate", "--size", "200", "--test-size", str(HELD_OUT), "--seed", "11",
         "--count", "3", "--numbers", "1-10", "--targets", "1-30", "--out", str(folder / "puzzles.jsonl"),
         "--quiet")  # fmt: skip
    _run("swift_plugins.countdown", "sft-data", str(folder / "puzzles.jsonl"), "--out", str(folder / "sft.jsonl"))
    return folder


@pytest.fixture(scope="module")
def sft_checkpoint(smol_model, puzzles) -> Path:
    """A short real ``swift sft`` of SmolLM2 on the worked rows; returns its checkpoint."""
    out = puzzles / "sft"
    swift = Path(sys.executable).with_name("swift")
    flags = {
        "model": smol_model, "model_type": "llama", "template": "chatml", "check_model": "false",
        "torch_dtype": "float32", "fp16": "false", "bf16": "false", "tuner_type": "full",
        "dataset": puzzles / "sft.jsonl", "split_dataset_ratio": 0, "max_steps": SFT_STEPS,
        "per_device_train_batch_size": 8, "gradient_accumulation_steps": 1, "learning_rate": 1e-4,
        "warmup_ratio": 0.05, "max_length": 256, "save_steps": SFT_STEPS, "save_only_model": "true",
        "gradient_checkpointing": "false", "dataloader_num_workers": 0, "report_to": "none", "output_dir": out,
    }  # fmt: skip
    run = run_real([str(swift), "sft", *(item for key, value in flags.items() for item in (f"--{key}", str(value)))],
                   env={**os.environ, **OFFLINE})
    assert run.returncode == 0, run.stderr[-3000:]
    (checkpoint,) = out.glob(f"v*/checkpoint-{SFT_STEPS}")
    return checkpoint


def _evaluate(model: Path, puzzles: Path, name: str, *backend: str, data: str = "puzzles.test.jsonl") -> Path:
    out = puzzles / "eval" / name
    _run("swift_plugins", "evaluate", str(model), "--task", "countdown", "--data", str(puzzles / data),
         "--out", str(out), "--max-new-tokens", "64", "--batch-size", str(HELD_OUT), "--quiet", *backend,
         "--", "--model_type", "llama", "--template", "chatml", "--torch_dtype", "float32")  # fmt: skip
    return out


def _answers(evaluation: Path) -> dict[str, str]:
    rows = [json.loads(line) for line in (evaluation / "results.jsonl").read_text().splitlines()]
    # keyed by the prompt: swift writes the answer into messages too, and the base model's answers repeat
    return {next(m["content"] for m in row["messages"] if m["role"] == "user"): row["response"] for row in rows}


@pytest.fixture(scope="module")
def base_evaluation(smol_model, puzzles) -> Path:
    """The base model evaluated with evaluate's default backend."""
    return _evaluate(smol_model, puzzles, "base")


@pytest.fixture(scope="module")
def evaluations(base_evaluation, sft_checkpoint, puzzles) -> dict[str, Path]:
    """The base model and the SFT checkpoint evaluated with evaluate's default backend."""
    return {"base": base_evaluation, "sft": _evaluate(sft_checkpoint, puzzles, "sft")}


def test_a_short_sft_teaches_the_format_on_held_out_puzzles(evaluations):
    table = compare(evaluations)
    assert table["prompts"] == HELD_OUT
    assert table["stages"]["base"]["format_rate"] <= 0.1  # the base model answers in prose
    assert table["stages"]["sft"]["format_rate"] >= 0.5
    assert table["changes"]["sft - base"]["format_rate"]["ci95"][0] > 0  # the gain is beyond noise


def test_evaluate_through_vllm_gives_transformers_answers(base_evaluation, smol_model, puzzles):
    # the base model's answers (64 tokens of prose each): as exacting a check of the two backends as a trained
    # model's; transformers, the slower engine, answers the first 16 of the same prompts
    (puzzles / "first.test.jsonl").write_text(
        "".join((puzzles / "puzzles.test.jsonl").read_text().splitlines(keepends=True)[:16])
    )
    vllm = base_evaluation
    transformers = _evaluate(smol_model, puzzles, "base-transformers", "--backend", "transformers",
                             data="first.test.jsonl")  # fmt: skip
    backends = [json.loads((folder / "score.json").read_text())["backend"] for folder in (vllm, transformers)]
    assert backends == ["vllm", "transformers"]
    answers, first = _answers(vllm), _answers(transformers)
    assert len(answers) == HELD_OUT and len(first) == 16
    assert first == {prompt: answers[prompt] for prompt in first}


# Not rerun in the GPU stacks: ms-swift's GRPO trainer there is TRL's, subclassed, and runs the package's rewards in
# every smoke and server-path run; this is TRL's own entry point for a TRL user, whose rewards are plain functions.
def test_trl_grpo_trainer_runs_the_package_rewards_on_the_sft_checkpoint(sft_checkpoint, puzzles, tmp_path):
    """TRL's own GRPOTrainer (the TRL that ms-swift installs), the rewards passed as plain functions: the TRL row of
    ``benchmarks/bench_grpo_cpu.py``, which runs it in a process of its own, as a TRL user's would (importing
    ms-swift, which other tests do, replaces transformers' default trainer callbacks with ones that need its
    arguments)."""
    rows = tmp_path / "rows.jsonl"
    rows.write_text("".join((puzzles / "puzzles.jsonl").read_text().splitlines(keepends=True)[:8]))
    run = run_real([sys.executable, str(REPO / "benchmarks" / "trl_grpo.py"), str(sft_checkpoint), str(rows),
                    str(tmp_path / "trl"), "--completions", "4", "--generations", "4", "--max-completion-length",
                    "64", "--max-steps", "2"], env={**os.environ, **OFFLINE})  # fmt: skip
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-3000:]
    logs = [json.loads(line) for line in (tmp_path / "trl" / "logging.jsonl").read_text().splitlines()]
    assert [entry["global_step/max_steps"] for entry in logs] == ["1/2", "2/2"]  # as ms-swift logs its steps
    assert all("rewards/countdown_accuracy_reward/mean" in entry for entry in logs)
    assert max(entry["rewards/think_answer_format_reward/mean"] for entry in logs) > 0  # completions earn reward


CANDIDATES = 12
SAMPLING = ("--samples", "4", "--top-k", "50", "--seed", "5", "--max-new-tokens", "64")
SWIFT = ("--", "--model_type", "llama", "--template", "chatml", "--torch_dtype", "float32")


@pytest.fixture(scope="module")
def candidates(puzzles) -> Path:
    """The first training rows: the selection's candidates, and the rows of the sampled evaluation."""
    path = puzzles / "candidates.jsonl"
    path.write_text("".join((puzzles / "puzzles.jsonl").read_text().splitlines(keepends=True)[:CANDIDATES]))
    return path


@pytest.fixture(scope="module")
def sampled(sft_checkpoint, candidates, puzzles) -> Path:
    """4 answers to each candidate at temperature 1 from ``evaluate``: the answers the selection must draw too."""
    out = puzzles / "eval" / "sampled"
    _run("swift_plugins", "evaluate", str(sft_checkpoint), "--task", "countdown", "--data", str(candidates),
         "--out", str(out), *SAMPLING, "--quiet", *SWIFT)  # fmt: skip
    return out


def test_a_sampled_evaluation_reports_pass_at_k_as_its_answers_say(sampled):
    # pass@k from the real answers, by exact enumeration of every k of each puzzle's 4; each result row carries its
    # puzzle's solve count; compare pairs by puzzle. (The short SFT solves few of them: the arithmetic on mixed
    # counts is tests/core/test_scoring.py's.)
    import itertools

    report = json.loads((sampled / "score.json").read_text())
    examples = [json.loads(line) for line in (sampled / "examples.jsonl").read_text().splitlines()]
    results = [json.loads(line) for line in (sampled / "results.jsonl").read_text().splitlines()]
    assert report["samples"] == len(examples) == len(results) == 4 * CANDIDATES and report["samples_per_puzzle"] == 4
    by_puzzle: dict[str, list[bool]] = {}
    for example in examples:
        by_puzzle.setdefault(json.dumps(example["key"]), []).append(example["verdict"] == "correct")
    assert len(by_puzzle) == CANDIDATES
    for k in range(1, 5):
        exact = (
            sum(
                sum(any(subset) for subset in itertools.combinations(right, k)) / math.comb(4, k)
                for right in by_puzzle.values()
            )
            / CANDIDATES
        )
        assert report["pass_at_k"][str(k)] == pytest.approx(exact, abs=1e-4)
        low, high = report["pass_at_k_ci95"][str(k)]
        assert low <= report["pass_at_k"][str(k)] <= high
    counts = [sum(right) for right in by_puzzle.values()]
    assert report["solve_counts"] == {str(c): counts.count(c) for c in sorted(set(counts))}
    assert [row["solved"] for row in results] == [c for c in counts for _ in range(4)]  # rows in the data's order
    assert report["sampling"] == {"samples": 4, "temperature": 1.0, "top_k": 50, "seed": 5, "top_p": 1.0}
    table = compare({"first": sampled, "again": sampled})
    assert table["samples_per_prompt"] == 4 and table["stages"]["first"]["accuracy"] == report["pass_at_k"]["1"]
    rates = [sum(right) / 4 for right in by_puzzle.values()]  # compare pairs the stages puzzle by puzzle
    difference, interval = paired_change(rates, rates)
    assert difference == 0.0 and table["changes"]["again - first"]["accuracy"] == {"difference": 0.0, "ci95": interval}


def test_selection_draws_the_answers_of_its_seed_and_never_touches_the_held_out_rows(
    sft_checkpoint, candidates, sampled, puzzles, tmp_path
):
    held_out = puzzles / "puzzles.test.jsonl"
    before = held_out.read_bytes()
    out = tmp_path / "kept.jsonl"
    _run("swift_plugins", "select", str(sft_checkpoint), "--task", "countdown", "--candidates", str(candidates),
         "--out", str(out), "--band", "0-3", "--held-out", str(held_out), *SAMPLING, *SWIFT)  # fmt: skip
    answers = [json.loads(line) for line in (tmp_path / "kept.jsonl.selection" / "results.jsonl").open()]
    # the same model, rows and seed in another process: the sampled evaluation's answers, so the same selection
    assert [a["response"] for a in answers] == [
        json.loads(line)["response"] for line in (sampled / "results.jsonl").open()
    ]
    assert held_out.read_bytes() == before
    rows = [json.loads(line) for line in candidates.open()]
    kept = [row for row, answer in zip(rows, answers[::4], strict=True) if answer["solved"] <= 3]
    assert [json.loads(line) for line in out.open()] == kept  # the rows the band keeps, unchanged, in order
    report = json.loads((tmp_path / "kept.jsonl.selection.json").read_text())
    assert (report["candidates"], report["kept"], report["completions"]) == (CANDIDATES, len(kept), 4 * CANDIDATES)
    # candidates that share a prompt with the held-out rows are refused before any answer is drawn
    leaky = tmp_path / "leaky.jsonl"
    leaky.write_text(candidates.read_text() + held_out.read_text().splitlines(keepends=True)[0])
    refused = subprocess.run(
        [sys.executable, "-m", "swift_plugins", "select", str(sft_checkpoint), "--task", "countdown",
         "--candidates", str(leaky), "--out", str(tmp_path / "leak.jsonl"), "--held-out", str(held_out), *SWIFT],
        capture_output=True, text=True,
    )  # fmt: skip
    assert refused.returncode == 2 and "of its prompts are prompts of" in refused.stderr
    assert not (tmp_path / "leak.jsonl.selection").exists()
