"""GRPO's objective as settings (LOSS_TYPE, EPSILON_HIGH, IMPORTANCE_SAMPLING_LEVEL, SCALE_REWARDS, OVERLONG_FILTER,
ROLLOUT_CORRECTION): in every recipe's and the demo's ``swift rlhf`` command, read by ms-swift's own argument
parser as set, in every ``--help``, and refused in one line where ms-swift would refuse (or silently undo) them
only after loading the model."""

import pytest

from swift_plugins.core.errors import SettingError
from swift_plugins.core.fields import help_rows, read_settings
from swift_plugins.core.objective import LOSS_TYPES, Objective
from swift_plugins.demo.plan import DemoPlan, grpo_command
from swift_plugins.demo.settings import DEMO_OBJECTIVE

from ..helpers import REPO, assert_refused, parse_dry_run, with_swift

FIELD_SETTINGS = {
    "LOSS_TYPE": "dapo", "EPSILON_HIGH": "0.28", "IMPORTANCE_SAMPLING_LEVEL": "sequence", "SCALE_REWARDS": "none",
    "OVERLONG_FILTER": "1", "ROLLOUT_CORRECTION": "sequence_mask", "ROLLOUT_CORRECTION_THRESHOLD": "3",
}  # fmt: skip
# ms-swift's parse of a trainer's argv (argparse only: no __post_init__, which would load the model's config)
PARSED = """
import swift.arguments
from swift.utils.utils import _patch_get_type_hints
from transformers import HfArgumentParser
with _patch_get_type_hints():
    parser = HfArgumentParser([swift.arguments.RLHFArguments])
names = ["loss_type", "epsilon_high", "importance_sampling_level", "scale_rewards", "overlong_filter",
         "rollout_importance_sampling_mode", "rollout_importance_sampling_threshold", "log_rollout_offpolicy_metrics"]
print(json.dumps([{name: getattr(parser.parse_known_args(argv)[0], name) for name in names} for argv in payload]))
"""


def trainer_argv(sandbox, script, **env):
    result = sandbox.launch(script, DRY_RUN=1, **env)
    assert result.returncode == 0, result.stderr
    return parse_dry_run(result.stdout)["rlhf"][1]


def demo_plan(vllm_version="0.32.0", extra=(), **env) -> DemoPlan:
    return DemoPlan.for_hardware({"OUTPUT_DIR": "/demo", **env}, REPO, cuda_device=None, vllm_version=vllm_version,
                                 extra=extra)  # fmt: skip


@pytest.mark.stack
def test_the_settings_reach_every_trainer_as_ms_swift_reads_them(sandbox):
    """Every recipe's trainer and the demo's GRPO stage, with the settings and without: the recipes' default is the
    card's loss, vLLM's sampling uncorrected and its gap logged; the demo's is its own measured choice."""
    scripts = ("countdown_3gpu.sh", "countdown_1gpu.sh", "gsm8k_3gpu.sh", "countdown_cpu_smoke.sh")
    argvs = [trainer_argv(sandbox, script) for script in scripts]
    argvs += [trainer_argv(sandbox, "countdown_3gpu.sh", **FIELD_SETTINGS)]
    argvs += [list(grpo_command(demo_plan()).argv[2:]), list(grpo_command(demo_plan(**FIELD_SETTINGS)).argv[2:])]
    parsed = with_swift(PARSED, argvs)
    defaults = {"loss_type": ["grpo"], "epsilon_high": None, "importance_sampling_level": "token",
                "scale_rewards": "group", "overlong_filter": False, "rollout_importance_sampling_mode": None,
                "rollout_importance_sampling_threshold": 2.0, "log_rollout_offpolicy_metrics": True}  # fmt: skip
    assert parsed[: len(scripts)] == [defaults] * len(scripts)
    demo = {**defaults, "importance_sampling_level": "sequence", "rollout_importance_sampling_mode": "token_truncate",
            "log_rollout_offpolicy_metrics": False}  # GSPO, corrected: the demo's measured choice
    assert parsed[-2] == demo and demo_plan().objective == Objective(**DEMO_OBJECTIVE)
    chosen = {"loss_type": ["dapo"], "epsilon_high": 0.28, "importance_sampling_level": "sequence",
              "scale_rewards": "none", "overlong_filter": True, "rollout_importance_sampling_mode": "sequence_mask",
              "rollout_importance_sampling_threshold": 3.0, "log_rollout_offpolicy_metrics": False}  # fmt: skip
    assert parsed[len(scripts)] == parsed[-1] == chosen


REFUSED = [
    ({"LOSS_TYPE": "dapoo"}, (),
     ["LOSS_TYPE='dapoo' is not one of grpo, bnpo, dr_grpo, dapo, cispo, sapo, real, fipo"]),
    ({"LOSS_TYPE": "cispo"}, (), ["LOSS_TYPE=cispo caps each token's weight", "unset (ms-swift's 0.2)",
                                  "EPSILON_HIGH=5"]),
    ({"LOSS_TYPE": "cispo", "EPSILON_HIGH": "0.28"}, (), ["EPSILON_HIGH=0.28: every weight would be that"]),
    ({}, ("--loss_type", "dapo_v2"), ["--loss_type dapo_v2 is not a loss of ms-swift 4.6", "at the first loss"]),
    ({"EPSILON_HIGH": "-0.2"}, (), ["EPSILON_HIGH='-0.2' is not a number above 0"]),
    ({"IMPORTANCE_SAMPLING_LEVEL": "seq"}, (), ["'seq' is not one of token, sequence, sequence_token"]),
    ({"ROLLOUT_CORRECTION": "token"}, (), ["ROLLOUT_CORRECTION='token' is not one of off, token_truncate"]),
    ({"ROLLOUT_CORRECTION_THRESHOLD": "0.5"}, (), ["ROLLOUT_CORRECTION_THRESHOLD='0.5' is not a number at least 1"]),
    ({"OVERLONG_FILTER": "maybe"}, (), ["OVERLONG_FILTER='maybe' is not a yes/no value"]),
]  # fmt: skip


@pytest.mark.parametrize(("env", "extra", "words"), REFUSED)
def test_what_ms_swift_would_refuse_late_is_refused_first_in_recipes_and_demo(sandbox, env, extra, words):
    for dry_run in ("", "1"):
        result = sandbox.launch("countdown_3gpu.sh", *extra, DRY_RUN=dry_run, **env)
        assert_refused(result, "countdown_3gpu.sh", *words)
    sandbox.assert_nothing_started()
    with pytest.raises(SettingError) as refused:
        demo_plan(extra=extra, **env)
    assert all(word in str(refused.value) for word in words), str(refused.value)


def test_a_correction_where_vllm_does_not_sample_is_refused():
    assert demo_plan(vllm_version=None).objective.rollout_correction == "off"  # transformers generates: nothing to fix
    with pytest.raises(SettingError, match="ROLLOUT_CORRECTION=token_truncate corrects vLLM's sampling, and vLLM does "
                                           "not sample for this trainer"):  # fmt: skip
        demo_plan(vllm_version=None, ROLLOUT_CORRECTION="token_truncate")
    with pytest.raises(SettingError, match="--rollout_importance_sampling_mode token_mask corrects"):
        demo_plan(vllm_version=None, extra=("--rollout_importance_sampling_mode", "token_mask"))


def test_every_help_lists_the_settings_from_their_fields(sandbox):
    for script in ("countdown_3gpu.sh", "gsm8k_1gpu.sh", "countdown_demo.sh"):
        shown = " ".join(sandbox.run(script, "--help").stdout.split())
        for row in help_rows(Objective):
            assert f"{row.name} {' '.join(row.meaning.split())}" in shown, (script, row.name)
    assert "cispo" in " ".join(sandbox.run("countdown_3gpu.sh", "--help").stdout.split())
    assert read_settings(Objective, {}) == Objective() and len(LOSS_TYPES) == 8
