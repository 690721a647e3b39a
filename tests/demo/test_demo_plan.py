"""The plan `make demo` runs at each scale (in-process, any hardware), checked against ms-swift's own argument
classes, and the entry script's DRY_RUN and refusals (one process each)."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from swift_plugins.cli import build_parser
from swift_plugins.core.errors import SettingError
from swift_plugins.core.flags import Flags
from swift_plugins.demo.plan import OWNED_FLAGS, DemoPlan, grpo_command, stages

from ..helpers import REPO, shell_commands, unknown_to_swift

pytestmark = pytest.mark.stack  # swift, transformers or vLLM of this venv

H100 = "NVIDIA H100 80GB HBM3"
# The one-H100 run of the README (docs/measurements.md): its GRPO flags are what the GPU scale replays.
MEASURED_H100 = {"num_generations": "8", "per_device_train_batch_size": "64", "gradient_accumulation_steps": "1",
                 "max_completion_length": "76", "temperature": "1.0", "beta": "0", "learning_rate": "5e-6",
                 "max_steps": "150", "save_steps": "50", "torch_dtype": "float32", "bf16": "false"}  # fmt: skip


def plan(cuda_device=None, vllm_version=None, **env) -> DemoPlan:
    return DemoPlan.for_hardware({"OUTPUT_DIR": "/demo", **env}, REPO, cuda_device=cuda_device,
                                 vllm_version=vllm_version)  # fmt: skip


def commands(demo: DemoPlan) -> dict:
    """{'sft': Flags, 'rlhf': Flags, 'evaluate': [argv...], 'generate': Flags, 'compare': argv} of every stage."""
    found = {"evaluate": []}
    for stage in stages(demo):
        for command in stage.commands:
            argv = list(command.argv)
            if argv[0] == "swift":
                found[argv[1]] = Flags(argv[2:])
            elif argv[3] == "evaluate":
                found["evaluate"].append(argv[4:])
            elif argv[3] in ("countdown", "gym"):  # python -m swift_plugins countdown|gym generate|sft-data ...
                found[argv[4]] = argv[5:]
            else:
                found[argv[3]] = argv[4:]
    return found


def swift_flags(argv: list) -> list:
    """The flags a package command passes on to swift: those after its `--`."""
    return argv[argv.index("--") + 1 :]


def swift_pairs(found: dict) -> list:
    """(argument class, argv) of every swift command of the plan, the evaluations' and selection's `-- ...` flags
    included."""
    infer = [swift_flags(argv) for argv in [*found["evaluate"], *([found["select"]] if "select" in found else [])]]
    return [["SftArguments", found["sft"].argv()], ["RLHFArguments", found["rlhf"].argv()],
            *(["InferArguments", argv] for argv in infer)]  # fmt: skip


def test_gpu_plan_replays_the_measured_h100_run_and_parses_with_swift():
    demo = plan(cuda_device=H100)
    assert (demo.scale.name, demo.vllm) == ("gpu", False) and "CUDA device visible" in demo.reason
    found = commands(demo)
    assert {name: found["rlhf"].value(name) for name in MEASURED_H100} == MEASURED_H100
    assert found["rlhf"].value("use_vllm") == "false"
    assert Flags(found["generate"]).value("test-size") == "500"
    evaluated = [Path(argv[argv.index("--out") + 1]).name for argv in found["evaluate"]]
    assert evaluated == ["base", "sft", "grpo-50", "grpo-100", "grpo-150"]
    assert all(argv[argv.index("--data") + 1] == str(demo.held_out) for argv in found["evaluate"])
    assert found["evaluate"][-1][0] == "/demo/grpo/checkpoint-150"  # swift writes no version folder
    assert not any("--limit" in argv for argv in found["evaluate"])  # a GPU evaluates the base model on all 500
    assert [stage.split("=")[0] for stage in found["compare"][:3]] == ["base", "sft", "grpo-150"]
    assert unknown_to_swift(swift_pairs(found)) == []


def test_gpu_plan_with_vllm_colocates_it_beside_the_trainer():
    found = commands(plan(cuda_device=H100, vllm_version="0.11.0"))
    rlhf = found["rlhf"]
    assert (rlhf.value("use_vllm"), rlhf.value("vllm_mode")) == ("true", "colocate")
    assert float(rlhf.value("vllm_gpu_memory_utilization")) <= 0.5  # the trainer shares the GPU
    assert rlhf.value("vllm_enforce_eager") is None  # CUDA graphs stay on a GPU
    assert unknown_to_swift([["RLHFArguments", rlhf.argv()]]) == []


def test_cpu_plan_generates_with_vllms_cpu_build_in_eager_mode():
    demo = plan(vllm_version="0.32.0")
    assert demo.scale.name == "cpu" and demo.reason.startswith("torch sees no CUDA device")
    found = commands(demo)
    rlhf = found["rlhf"]
    assert (rlhf.value("use_vllm"), rlhf.value("vllm_mode"), rlhf.value("vllm_enforce_eager")) == (
        "true", "colocate", "true")  # fmt: skip
    # bfloat16 autocast on CPU needs transformers told it trains there, in GRPO and in SFT
    assert (rlhf.value("bf16"), rlhf.value("use_cpu")) == ("true", "true")
    assert (found["sft"].value("bf16"), found["sft"].value("use_cpu")) == ("true", "true")
    assert Path(found["evaluate"][-1][found["evaluate"][-1].index("--out") + 1]).name == f"grpo-{demo.grpo_steps}"
    # the base model, which answers in prose, on the first 100 of the 500 held-out puzzles; the others on all
    base = build_parser().parse_args(["evaluate", *found["evaluate"][0][: found["evaluate"][0].index("--")]])
    assert (base.limit, base.data, Flags(found["generate"]).value("test-size")) == (100, demo.held_out, "500")
    assert ["--limit" in argv for argv in found["evaluate"]] == [True, False, False]
    assert (demo.held_out.name, Flags(found["generate"]).value("dev-size")) == ("puzzles.test.jsonl", "500")
    assert unknown_to_swift(swift_pairs(found)) == []


def test_every_seed_is_measured_on_the_same_held_out_rows_and_eval_split_dev_chooses():
    seeds = [Flags(commands(plan(SEED=seed))["generate"]) for seed in ("0", "3")]
    assert [flags.value("split-seed") for flags in seeds] == ["0", "0"]
    assert [flags.value("seed") for flags in seeds] == ["0", "3"]  # the order of the training rows
    dev = plan(EVAL_SPLIT="dev", EVAL_PUZZLES="200")
    assert all(argv[argv.index("--data") + 1] == str(demo_dev := dev.held_out) for argv in commands(dev)["evaluate"])
    assert demo_dev.name == "puzzles.dev.jsonl"
    assert ["--limit" in argv for argv in commands(dev)["evaluate"]] == [True, True, True]
    for setting, message in (({"EVAL_SPLIT": "train"}, "EVAL_SPLIT='train' is not one of test, dev"),
                             ({"EVAL_PUZZLES": "501"}, "EVAL_PUZZLES must be a positive integer up to 500, got .501.")):
        with pytest.raises(SettingError, match=message):
            plan(**setting)


def test_without_vllm_grpo_generates_with_transformers():
    demo = plan(DEMO_SCALE="cpu")
    assert not demo.vllm and "transformers generation" in demo.reason
    rlhf = commands(demo)["rlhf"]
    assert rlhf.value("use_vllm") == "false" and rlhf.value("vllm_mode") is None


def test_grpo_evals_spaces_the_evaluated_checkpoints_evenly():
    demo = plan(DEMO_SCALE="cpu", GRPO_STEPS="8", GRPO_EVALS="3")
    found = commands(demo)
    assert found["rlhf"].value("save_steps") == "3"
    evaluated = [Path(argv[argv.index("--out") + 1]).name for argv in found["evaluate"]]
    assert evaluated == ["base", "sft", "grpo-3", "grpo-6", "grpo-8"]


def selection_args(demo: DemoPlan):
    """The selection stage's ``python -m swift_plugins select`` arguments, parsed by the package's own parser."""
    (select,) = stages(demo)[5].commands
    return build_parser().parse_args(list(select.argv[3 : select.argv.index("--")]))


def test_a_selection_stage_chooses_grpos_puzzles_with_the_sft_checkpoint():
    demo = plan(SELECT_SAMPLES="4")
    titles = [stage.title for stage in stages(demo)]
    assert len(titles) == 9 and titles[5].startswith("the training puzzles the SFT checkpoint solves sometimes")
    args = selection_args(demo)
    assert (args.model, args.candidates, args.out, args.samples) == (
        str(demo.sft_checkpoint), demo.data / "puzzles.jsonl", demo.selected, 4)
    assert args.held_out == [demo.data / "puzzles.dev.jsonl", demo.held_out] and args.max_new_tokens == 76
    assert args.top_k == 50
    assert Flags(grpo_command(demo).argv[2:]).value("dataset") == str(demo.data / "selected.jsonl")
    unselected = plan(SELECT_SAMPLES="0")
    assert len(stages(unselected)) == 8
    assert Flags(grpo_command(unselected).argv[2:]).value("dataset") == str(demo.data / "puzzles.jsonl")


def test_select_candidates_is_how_many_training_rows_the_selection_answers():
    assert selection_args(plan()).limit == 160 and selection_args(plan(SELECT_CANDIDATES="240")).limit == 240
    assert selection_args(plan(SELECT_CANDIDATES="0")).limit == selection_args(plan(DEMO_SCALE="gpu")).limit == 1000


def test_extra_flags_replace_the_plans_own():
    rlhf = Flags(grpo_command(plan(), extra=["--learning_rate", "2e-5"]).argv[2:])
    assert rlhf.value("learning_rate") == "2e-5" and rlhf.names().count("learning_rate") == 1


def test_the_scripts_arguments_replace_the_grpo_stages_flags_and_no_other_stages():
    demo = DemoPlan.for_hardware({"OUTPUT_DIR": "/demo"}, REPO, cuda_device=None, vllm_version=None,
                                 extra=["--learning_rate", "2e-5", "--beta=0.04"])  # fmt: skip
    found, own = commands(demo), commands(plan())
    assert (found["rlhf"].value("learning_rate"), found["rlhf"].value("beta")) == ("2e-5", "0.04")
    changed = {name for name in found["rlhf"].names() if found["rlhf"].value(name) != own["rlhf"].value(name)}
    assert changed == {"learning_rate", "beta"} and found["rlhf"].names() == own["rlhf"].names()
    assert found["sft"].argv() == own["sft"].argv() and found["select"] == own["select"]


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--num_generations", "7"], "--num_generations 7 does not divide the 32 completions of a generation batch"),
        (["--reward_weights", "1"], "--reward_weights 1 gives 1 weight(s) to the 2 rewards of --reward_funcs"),
        (["--report_to", "wandbx"], "--report_to wandbx is not a logger ms-swift accepts"),
    ],
)
def test_what_ms_swift_checks_only_after_loading_the_model_is_refused_first(extra, message):
    with pytest.raises(SettingError, match=f"^{re.escape(message)}"):
        DemoPlan.for_hardware({"OUTPUT_DIR": "/demo"}, REPO, cuda_device=None, vllm_version=None, extra=extra)


@pytest.mark.parametrize("name", sorted(OWNED_FLAGS))
def test_an_argument_that_a_setting_or_another_stage_decides_is_refused(name):
    with pytest.raises(SettingError, match=f"^--{name} in the arguments: "):
        DemoPlan.for_hardware({"OUTPUT_DIR": "/demo"}, REPO, cuda_device=None, vllm_version=None,
                              extra=["--learning_rate", "2e-5", f"--{name}", "1"])  # fmt: skip


@pytest.mark.parametrize(
    "env, message",
    [
        ({"GRPO_EVALS": "0"}, "GRPO_EVALS must be a positive integer, got '0'"),
        ({"DEMO_SCALE": "fast"}, "DEMO_SCALE=.fast. is not one of cpu, gpu"),
        ({"SEED": "-1"}, "SEED must be a non-negative integer, got '-1'"),
        ({"SELECT_SAMPLES": "1"}, "SELECT_SAMPLES=1: a solve rate needs at least 2 answers a puzzle (0: no selection)"),
        ({"SELECT_CANDIDATES": "2000"}, "SELECT_CANDIDATES=2000: there are 1000 training rows (0: every one)"),
    ],
)
def test_bad_settings_are_refused(env, message):
    with pytest.raises(SettingError, match=message.replace("(", r"\(").replace(")", r"\)")):
        plan(**env)


def run_script(tmp_path, *args, **env) -> subprocess.CompletedProcess:
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"
    return subprocess.run(
        ["bash", str(REPO / "shell" / "countdown_demo.sh"), *args],
        env={**os.environ, "OUTPUT_DIR": str(tmp_path / "out"), "PATH": path, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_script_prints_every_stage_and_runs_nothing(tmp_path):
    result = run_script(tmp_path, DRY_RUN="1")
    assert result.returncode == 0, result.stderr
    assert result.stderr.startswith("countdown_demo.sh: DRY_RUN: cpu scale: torch sees no CUDA device")
    titles = [line for line in result.stdout.splitlines() if line.startswith("# ") and "/9 " in line]
    assert [title.split()[1] for title in titles] == [f"{n}/9" for n in range(1, 10)]  # the selection is the 6th
    swift = [words for words in shell_commands(result.stdout) if "swift" in words]
    assert [words[words.index("swift") + 1] for words in swift] == ["sft", "rlhf"]
    assert not (tmp_path / "out").exists()


def test_the_script_refuses_a_bad_setting_before_anything_runs(tmp_path):
    result = run_script(tmp_path, GRPO_EVALS="0")
    assert result.returncode == 1
    assert result.stderr.strip() == "countdown_demo.sh: error: GRPO_EVALS must be a positive integer, got '0'"
    assert not (tmp_path / "out").exists()


def test_the_scripts_arguments_are_parsed_by_ms_swift_before_anything_runs(tmp_path):
    result = run_script(tmp_path, "--learning_rate", "2e-5", DRY_RUN="1")
    assert result.returncode == 0, result.stderr
    assert "parsed every flag of swift sft and swift rlhf" in result.stderr.splitlines()[0]
    rlhf = next(words for words in shell_commands(result.stdout) if "rlhf" in words)
    assert Flags(rlhf[rlhf.index("rlhf") + 1 :]).value("learning_rate") == "2e-5"
    for refused, message in [(["--learning_rat", "2e-5"], "swift rlhf has no flag --learning_rat; the closest is "
                               "--learning_rate (ms-swift"), (["--seed", "1"], "--seed in the arguments: set SEED")]:
        result = run_script(tmp_path, *refused)  # a run, refused before its first stage
        assert result.returncode == 1 and message in result.stderr.strip().splitlines()[-1], result.stderr
    assert not (tmp_path / "out").exists()


def test_gpu_scale_without_a_cuda_device_is_refused_before_anything_runs(tmp_path):
    result = run_script(tmp_path, DEMO_SCALE="gpu")
    assert result.returncode == 1
    assert "DEMO_SCALE=gpu, but torch sees no CUDA device" in result.stderr
    assert not (tmp_path / "out").exists()


def torch_build(tmp_path, cuda: str | None) -> dict:
    """The environment of a script run whose torch reports ``torch.version.cuda == cuda`` (None: a CPU build).

    The premise is made, not assumed: the installed torch may be a CPU build (make install) or a CUDA one (the GPU
    stacks' locks, on a machine without a GPU); either way torch sees no device here. A ``sitecustomize`` sets what
    ``torch.version.cuda`` reports once torch is imported.
    """
    site = tmp_path / f"torch-cuda-{cuda}"
    site.mkdir()
    (site / "sitecustomize.py").write_text(
        "import importlib.machinery, sys\n"
        "class TorchBuild:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name != 'torch.version':\n"
        "            return None\n"
        "        spec = importlib.machinery.PathFinder.find_spec(name, path)\n"
        "        run = spec.loader.exec_module\n"
        "        def exec_module(module):\n"
        "            run(module)\n"
        f"            module.cuda = {cuda!r}\n"
        "        spec.loader.exec_module = exec_module\n"
        "        return spec\n"
        "sys.meta_path.insert(0, TorchBuild())\n"
    )
    return {"PYTHONPATH": os.pathsep.join(filter(None, [str(site), os.environ.get("PYTHONPATH")]))}


def test_a_cpu_torch_on_a_gpu_box_is_named_with_the_fix(tmp_path):
    """nvidia-smi on PATH, but torch is a CPU build (what `make install` makes): the plan says how to get GPU scale."""
    driver = tmp_path / "driver"
    driver.mkdir()
    (driver / "nvidia-smi").symlink_to(REPO / "tests" / "stand_ins" / "nvidia-smi")
    with_driver = f"{driver}{os.pathsep}{Path(sys.executable).parent}:/usr/bin:/bin"
    without_driver = f"{Path(sys.executable).parent}:/usr/bin:/bin"
    cpu_build, cuda_build = torch_build(tmp_path, None), torch_build(tmp_path, "12.8")
    result = run_script(tmp_path, DRY_RUN="1", PATH=with_driver, **cpu_build)
    assert result.returncode == 0, result.stderr
    assert "nvidia-smi is on PATH but torch" in result.stderr and "make clean && make demo TORCH_SPEC=" in result.stderr
    for path, build in ((without_driver, cpu_build), (with_driver, cuda_build)):
        # no driver, or a CUDA torch that sees no device (a GPU stack's lock without a GPU): no CPU-build hint
        result = run_script(tmp_path, DRY_RUN="1", PATH=path, **build)
        assert result.returncode == 0, result.stderr
        assert "torch sees no CUDA device" in result.stderr and "CPU build" not in result.stderr


def test_without_torch_a_dry_run_prints_the_plan_and_a_run_is_one_line(tmp_path):
    """A laptop without torch: DRY_RUN says so and prints the CPU plan; a run is refused in one line."""
    site = tmp_path / "no-torch"
    site.mkdir()
    (site / "sitecustomize.py").write_text(
        "import sys\n"
        "class NoTorch:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] == 'torch':\n"
        "            raise ModuleNotFoundError(\"No module named 'torch'\")\n"
        "sys.meta_path.insert(0, NoTorch())\n"
    )
    no_torch = {"PYTHONPATH": os.pathsep.join(filter(None, [str(site), os.environ.get("PYTHONPATH")]))}
    result = run_script(tmp_path, DRY_RUN="1", **no_torch)
    assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr
    assert result.stderr.startswith("countdown_demo.sh: DRY_RUN: cpu scale: torch sees no CUDA device; ")
    assert "torch does not import with" in result.stderr and "No module named 'torch'" in result.stderr
    assert [words[words.index("swift") + 1] for words in shell_commands(result.stdout) if "swift" in words] == [
        "sft", "rlhf"]  # fmt: skip
    result = run_script(tmp_path, **no_torch)
    assert result.returncode == 1 and len(result.stderr.splitlines()) == 1, result.stderr
    assert result.stderr.startswith("countdown_demo.sh: error: torch does not import with ")
    assert not (tmp_path / "out").exists()


def test_a_cpu_without_avx512_trains_in_float32():
    # measured on an AVX2 CPU: bfloat16 autocast made a GRPO step of the demo over 500 s, float32 40 s
    def rlhf(capability):
        demo = DemoPlan.for_hardware({"OUTPUT_DIR": "/demo"}, REPO, cuda_device=None, vllm_version="0.32.0",
                                     cpu_capability=capability)  # fmt: skip
        return demo, Flags(grpo_command(demo).argv[2:])

    avx2, avx512 = rlhf("AVX2"), rlhf("AVX512")
    assert avx2[1].value("bf16") == "false" and "AVX2, not AVX-512: GRPO in float32" in avx2[0].reason
    assert avx512[1].value("bf16") == "true" and "float32" not in avx512[0].reason
    assert unknown_to_swift([("RLHFArguments", avx2[1].argv())]) == []


@pytest.mark.parametrize(("capability", "sampled_in"), [("AVX2", "float32"), ("AVX512", "bfloat16")])
def test_every_model_the_demo_runs_answers_in_the_precision_it_trains_in(capability, sampled_in):
    # the selection, GRPO's rollouts and the evaluations in bfloat16 where SFT and GRPO train in bfloat16 autocast
    # (benchmarks/bench_select_cpu.py: the selection keeps rows of the same difficulty; bench_evaluate_cpu.py
    # --trained: the evaluations measure the same GRPO - SFT change; tests/e2e/test_e2e_rollout_dtype.py: vLLM's
    # engine takes the dtype); the weights stay float32 everywhere
    demo = DemoPlan.for_hardware({"OUTPUT_DIR": "/demo"}, REPO, cuda_device=None, vllm_version="0.32.0",
                                 cpu_capability=capability)  # fmt: skip
    found = commands(demo)
    assert Flags(swift_flags(found["select"])).value("torch_dtype") == sampled_in
    grpo = Flags(grpo_command(demo).argv[2:])
    rollout = json.loads(grpo.value("vllm_engine_kwargs") or "{}").get("dtype", grpo.value("torch_dtype"))
    assert (rollout, grpo.value("torch_dtype")) == (sampled_in, "float32")
    assert unknown_to_swift([("RLHFArguments", grpo.argv())]) == []
    assert {Flags(swift_flags(argv)).value("torch_dtype") for argv in found["evaluate"]} == {sampled_in}
    sft = found["sft"]
    assert (sft.value("torch_dtype"), sft.value("bf16")) == ("float32", str(sampled_in == "bfloat16").lower())
    assert unknown_to_swift([("SftArguments", sft.argv())]) == []
