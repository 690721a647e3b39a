"""GRPO's colocated engine on vLLM's CPU build samples in ``--vllm_engine_kwargs``' dtype, and syncs reach it.

The CPU demo's GRPO trains float32 weights in bfloat16 autocast and samples with ``--vllm_engine_kwargs '{"dtype":
"bfloat16"}'``, which ms-swift 4.6 alone ignores in colocate mode (it builds the engine in the trainer's dtype).
``tests/e2e/rollout_dtype_check.py`` builds swift's own engine class for a float32 model, with the real vLLM, and
syncs all-zero weights into it through the package's weight sync.

Not rerun in the GPU stacks' venvs: the adaptation is for vLLM's CPU build, which only this venv's demo trains
with; on a GPU the engine's dtype is the model's (``--torch_dtype``).
"""

import json
import math
import sys

import pytest

from ..helpers import TESTS, run_real

pytestmark = pytest.mark.e2e


def test_the_engine_samples_in_bfloat16_and_each_sync_reaches_it(tiny_model):
    run = run_real([sys.executable, str(TESTS / "e2e" / "rollout_dtype_check.py"), str(tiny_model)])
    assert run.returncode == 0, run.stderr[-3000:]
    found = json.loads(run.stdout.splitlines()[-1])
    uniform = -math.log(found["vocabulary"])
    assert found["dtype"] == "torch.bfloat16"
    assert len(found["after"]) == 4 and all(abs(logprob - uniform) < 1e-2 for logprob in found["after"]), found
    assert not all(abs(logprob - uniform) < 1e-2 for logprob in found["before"]), found  # the random model's own
