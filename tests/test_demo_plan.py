"""The plan `make demo` prints (DRY_RUN=1) at each scale, checked against ms-swift's own argument classes.

No GPU is needed: DEMO_SCALE=gpu plans the GPU run on any machine, and a `python` that answers only the
hardware probe (swift_plugins.tools.demo_scale) as a CUDA machine with vLLM would, delegating every other
call to this interpreter, shows the vLLM colocate plan.
"""

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEMO = REPO / "shell" / "countdown_demo.sh"
SWIFT_CLASSES = {"sft": "SftArguments", "rlhf": "RLHFArguments", "infer": "InferArguments"}


def run_demo(tmp_path, python=sys.executable, **env):
    settings = {"PYTHON": str(python), "OUTPUT_DIR": str(tmp_path / "out"), "PYTHONPATH": str(REPO), **env}
    return subprocess.run(
        ["bash", str(DEMO)], env={**os.environ, **settings}, capture_output=True, text=True, timeout=120
    )


def plan(tmp_path, **env):
    """{'sft': argv, 'rlhf': argv, 'evaluate': [argv, ...], ...} of a DRY_RUN's printed commands."""
    result = run_demo(tmp_path, DRY_RUN="1", **env)
    assert result.returncode == 0, result.stderr
    commands = {"evaluate": [], "header": result.stdout.splitlines()[:2]}
    for words in map(shlex.split, result.stdout.splitlines()[2:]):
        if words[0] == "swift":
            commands[words[1]] = words[2:]
        elif words[1:3] == ["-m", "swift_plugins"]:
            commands["evaluate" if words[3] == "evaluate" else words[3]] = (
                [*commands["evaluate"], words[4:]] if words[3] == "evaluate" else words[4:]
            )
        elif words[1:3] == ["-m", "swift_plugins.countdown"]:
            commands[words[3]] = words[4:]
    return commands


def value(argv, flag):
    """The value after the last ``flag`` (argparse: the last one wins)."""
    return [argv[i + 1] for i, word in enumerate(argv[:-1]) if word == flag][-1]


def unknown_to_swift(commands):
    """(subcommand, flag) pairs that ms-swift's argument dataclass for the subcommand does not know."""
    check = """
import json, sys
from transformers import HfArgumentParser
import swift.arguments
from swift.utils.utils import _patch_get_type_hints
bad = []
for cls, argv in json.loads(sys.argv[1]):
    with _patch_get_type_hints():  # as swift.utils.parse_args builds its parser
        parser = HfArgumentParser([getattr(swift.arguments, cls)])
    _, unknown = parser.parse_known_args(argv)
    bad += [(cls, u) for u in unknown]
print(json.dumps(bad))
"""
    result = subprocess.run(
        [sys.executable, "-c", check, json.dumps(commands)], capture_output=True, text=True, timeout=180
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


def swift_commands(commands):
    evaluations = [argv[argv.index("--") + 1 :] for argv in commands["evaluate"]]
    return [
        [SWIFT_CLASSES["sft"], commands["sft"]],
        [SWIFT_CLASSES["rlhf"], commands["rlhf"]],
        *([SWIFT_CLASSES["infer"], argv] for argv in evaluations),
    ]


def probe_answering(tmp_path, answer):
    """A `python` whose hardware probe prints ``answer``; every other call runs this interpreter."""
    stand_in = tmp_path / "python"
    stand_in.write_text(
        "#!/bin/sh\n"
        'if [ "$2" = swift_plugins.tools.demo_scale ]; then\n'
        f"    echo {shlex.quote(answer)}\n"
        "    exit 0\n"
        "fi\n"
        f'exec {shlex.quote(sys.executable)} "$@"\n'
    )
    stand_in.chmod(0o755)
    return stand_in


def test_gpu_plan_is_the_measured_h100_run_and_parses_with_swift(tmp_path):
    commands = plan(tmp_path, DEMO_SCALE="gpu")
    assert commands["header"][0].startswith("countdown_demo.sh: gpu scale: DEMO_SCALE=gpu")
    rlhf = commands["rlhf"]
    measured = {"--num_generations": "8", "--per_device_train_batch_size": "64", "--gradient_accumulation_steps": "1",
                "--max_completion_length": "76", "--temperature": "1.0", "--beta": "0", "--learning_rate": "5e-6",
                "--max_steps": "150", "--save_steps": "50", "--use_vllm": "false", "--torch_dtype": "float32",
                "--bf16": "false"}
    assert {flag: value(rlhf, flag) for flag in measured} == measured
    assert value(commands["generate"], "--test-size") == "500"
    test_file = str(tmp_path / "out" / "data" / "puzzles.test.jsonl")
    evaluated = [Path(value(argv, "--out")).name for argv in commands["evaluate"]]
    assert evaluated == ["base", "sft", "grpo-50", "grpo-100", "grpo-150"]
    assert all(value(argv, "--data") == test_file for argv in commands["evaluate"])
    assert commands["evaluate"][-1][0] == str(tmp_path / "out" / "grpo" / "v0-TIME" / "checkpoint-150")
    assert value(commands["compare"], "--out") == str(tmp_path / "out" / "comparison")
    assert [stage.split("=")[0] for stage in commands["compare"][:3]] == ["base", "sft", "grpo-150"]
    assert unknown_to_swift(swift_commands(commands)) == []


def test_vllm_colocate_plan_parses_with_swift(tmp_path):
    h100 = probe_answering(tmp_path, "gpu vllm yes CUDA device visible (NVIDIA H100); vLLM 0.11.0 installed: colocate")
    commands = plan(tmp_path, python=h100)
    assert "gpu scale: CUDA device visible (NVIDIA H100)" in commands["header"][0]
    rlhf = commands["rlhf"]
    assert (value(rlhf, "--use_vllm"), value(rlhf, "--vllm_mode")) == ("true", "colocate")
    assert float(value(rlhf, "--vllm_gpu_memory_utilization")) <= 0.5  # the trainer shares the GPU
    assert unknown_to_swift([[SWIFT_CLASSES["rlhf"], rlhf]]) == []


def test_cpu_plan_and_its_header(tmp_path):
    commands = plan(tmp_path, DEMO_SCALE="cpu")
    assert commands["header"][0].startswith("countdown_demo.sh: cpu scale: DEMO_SCALE=cpu")
    assert value(commands["generate"], "--test-size") == "200"
    assert value(commands["rlhf"], "--use_vllm") == "false"
    # bfloat16 autocast on CPU needs transformers told it trains there; SFT stays float32
    assert (value(commands["rlhf"], "--bf16"), value(commands["rlhf"], "--use_cpu")) == ("true", "true")
    assert value(commands["sft"], "--bf16") == "false"
    steps = value(commands["rlhf"], "--max_steps")
    assert Path(value(commands["evaluate"][-1], "--out")).name == f"grpo-{steps}"
    assert unknown_to_swift(swift_commands(commands)) == []


def test_grpo_evals_spaces_the_evaluated_checkpoints_evenly(tmp_path):
    commands = plan(tmp_path, DEMO_SCALE="cpu", GRPO_STEPS="8", GRPO_EVALS="3")
    assert value(commands["rlhf"], "--save_steps") == "3"
    evaluated = [Path(value(argv, "--out")).name for argv in commands["evaluate"]]
    assert evaluated == ["base", "sft", "grpo-3", "grpo-6", "grpo-8"]
    assert [stage.split("=")[0] for stage in commands["compare"][:3]] == ["base", "sft", "grpo-8"]


def test_a_bad_setting_is_refused_before_anything_runs(tmp_path):
    result = run_demo(tmp_path, DEMO_SCALE="cpu", GRPO_EVALS="0")
    assert result.returncode == 1
    assert "GRPO_EVALS must be a positive integer, got '0'" in result.stderr
    assert not (tmp_path / "out").exists()


def test_an_unknown_scale_is_refused_in_one_line(tmp_path):
    result = run_demo(tmp_path, DEMO_SCALE="fast")
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        "error: DEMO_SCALE=fast: expected cpu or gpu (or unset: chosen from the hardware)"
    ]
    assert not (tmp_path / "out").exists()


def test_gpu_scale_without_a_cuda_device_is_refused_before_anything_runs(tmp_path):
    no_gpu = probe_answering(tmp_path, "gpu transformers no DEMO_SCALE=gpu, but torch sees no CUDA device")
    result = run_demo(tmp_path, python=no_gpu, DEMO_SCALE="gpu")
    assert result.returncode == 1
    assert "DEMO_SCALE=gpu, but torch" in result.stderr and "sees no CUDA device" in result.stderr
    assert not (tmp_path / "out").exists()


def test_a_cpu_torch_on_a_gpu_box_is_named_with_the_fix(tmp_path):
    """nvidia-smi on PATH, but torch is a CPU build (what `make install` makes): the plan says how to get GPU scale."""
    probe = [sys.executable, "-m", "swift_plugins.tools.demo_scale"]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    without_driver = subprocess.run(probe, capture_output=True, text=True, env={**env, "PATH": str(tmp_path)})
    assert without_driver.stdout.split()[:3] == ["cpu", "transformers", "no"]
    assert "CPU build" not in without_driver.stdout
    driver = f"{REPO / 'tests' / 'stand_ins'}:{tmp_path}"
    with_driver = subprocess.run(probe, capture_output=True, text=True, env={**env, "PATH": driver})
    assert with_driver.stdout.split()[:3] == ["cpu", "transformers", "no"]
    assert "nvidia-smi is on PATH but torch" in with_driver.stdout
    assert "make clean && make demo TORCH_SPEC=" in with_driver.stdout
