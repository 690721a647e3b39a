"""The command lines of ``benchmarks/bench_grpo_cpu.py``'s field rows: what they hold equal with the demo's GRPO."""

import json

from swift_plugins.core.flags import Flags
from swift_plugins.demo.plan import DemoPlan, grpo_command

from ..helpers import REPO, load_script

bench = load_script(REPO / "benchmarks" / "bench_grpo_cpu.py")
trl_grpo = load_script(REPO / "benchmarks" / "trl_grpo.py")


def demo_plan(tmp_path, **env) -> DemoPlan:
    plan = DemoPlan.for_hardware({"OUTPUT_DIR": str(tmp_path / "demo"), **env}, REPO, cuda_device=None,
                                 vllm_version="0.32.0")  # fmt: skip
    plan.rows.parent.mkdir(parents=True)
    plan.rows.write_text("".join(json.dumps({"nums": [1, 2, n], "target": n + 3}) + "\n" for n in range(30)))
    return plan


def test_the_trl_row_trains_on_the_selections_candidates_with_what_the_demo_holds_equal(tmp_path):
    plan = demo_plan(tmp_path, SELECT_CANDIDATES="20")
    argv, env = bench._training(bench.SETTINGS["trl"], plan, tmp_path)
    assert argv[1] == str(REPO / "benchmarks" / "trl_grpo.py") and env["HF_HUB_OFFLINE"] == "1"
    args = trl_grpo.build_parser().parse_args(argv[2:])
    assert args.rows.read_text().splitlines() == plan.rows.read_text().splitlines()[:20]
    demo = Flags(grpo_command(plan).argv[2:])
    assert (args.checkpoint, args.seed, args.bf16) == (plan.sft_checkpoint, plan.seed, plan.bf16)
    assert args.completions == int(demo.value("per_device_train_batch_size")) == 32
    assert (args.generations, args.max_completion_length) == (8, 76)
    assert (str(args.generations), str(args.max_completion_length)) == (
        demo.value("num_generations"), demo.value("max_completion_length"))  # fmt: skip


def test_the_swift_example_row_changes_only_what_it_names(tmp_path):
    plan = demo_plan(tmp_path)
    setting = bench.SETTINGS["swift-example"]
    argv, _ = bench._training(setting, plan, tmp_path)
    row, demo = Flags(argv[2:]), Flags(grpo_command(plan).argv[2:])
    named = set(Flags(setting.flags).names()) | {"max_steps", "save_steps", "save_total_limit", "output_dir"}
    assert {name for name in row.names() if row.value(name) != demo.value(name)} <= named
    own = Flags(setting.flags)
    assert {name: row.value(name) for name in own.names()} == {name: own.value(name) for name in own.names()}
