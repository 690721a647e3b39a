"""Unit tests of swift_plugins.preflight.advice; its warnings on a recipe's plan: tests/launch/test_launch_runs.py."""

from swift_plugins.core.flags import Flags
from swift_plugins.preflight.advice import model_billions, total_steps


def test_schedule_figures_of_the_readme():
    flags = Flags(["--dataset", "d#50000", "--split_dataset_ratio", "0.01", "--per_device_train_batch_size", "8"])
    flags.update(["--gradient_accumulation_steps", "8", "--num_generations", "8", "--num_train_epochs", "1"])
    assert (total_steps(flags, 2), total_steps(flags, 16), total_steps(flags, 4)) == (3093, 386, 1546)
    flags.update(["--dataset", "hub/id"])
    assert total_steps(flags, 2) is None
    flags.update(["--max_steps", "50"])
    assert total_steps(flags, 2) == 50


def test_billions_come_from_the_models_name_alone():
    assert [model_billions(name) for name in ("Qwen/Qwen2.5-3B-Instruct", "org/m-0.5b", "runs/b3", "x-3Bit")] == [
        3.0, 0.5, None, None,
    ]  # fmt: skip
