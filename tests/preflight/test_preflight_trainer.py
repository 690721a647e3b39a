"""Unit tests of swift_plugins.preflight.trainer; its batch arithmetic is checked against ms-swift itself in
tests/launch/test_launchers.py::test_flags_parse_with_installed_ms_swift, in the one swift import."""

import pytest

from swift_plugins.core.errors import SettingError
from swift_plugins.core.flags import Flags
from swift_plugins.preflight.trainer import check_batches, check_lengths, check_report_to


def origin(flag, value, setting):
    return f"{setting}={value}"


def test_eval_batch_is_free_when_nothing_is_evaluated():
    flags = Flags(["--per_device_train_batch_size", "8", "--gradient_accumulation_steps", "8",
                   "--per_device_eval_batch_size", "3", "--eval_strategy", "no"])  # fmt: skip
    check_batches(flags, 2)
    flags.update(["--eval_strategy", "steps", "--split_dataset_ratio", "0.01"])
    with pytest.raises(SettingError, match="global eval batch 2 x --per_device_eval_batch_size 3 = 6"):
        check_batches(flags, 2)


def test_a_length_is_named_as_the_setting_or_the_flag_that_set_it():
    flags = Flags(["--max_length", "1000", "--max_completion_length", "500"])
    check_lengths(flags, Flags(["--vllm_max_model_len", "1500"]), 1500)
    with pytest.raises(SettingError, match=r"^VLLM_MAX_MODEL_LEN=1499 is shorter .* \(1500 tokens\)"):
        check_lengths(flags, Flags(["--vllm_max_model_len", "1499"]), 1499)
    with pytest.raises(SettingError, match=r"^--vllm_max_model_len 1024 is shorter"):
        check_lengths(flags, Flags(["--vllm_max_model_len", "1024"]), 4096)


def test_every_logger_is_one_transformers_knows():
    check_report_to(Flags(["--report_to", "wandb", "swanlab"]), origin)
    with pytest.raises(SettingError, match=r"^REPORT_TO=foo is not a logger"):
        check_report_to(Flags(["--report_to", "tensorboard", "foo"]), origin)
