"""Does GRPO's colocated engine sample in the dtype of ``--vllm_engine_kwargs``, and do syncs still reach it?

Run in a process of its own (vLLM sets up torch.distributed for good), with the package's CPU adaptations
installed as the plugin installs them::

    .venv/bin/python tests/e2e/rollout_dtype_check.py MODEL

Builds ms-swift's ``GRPOVllmEngine`` (the engine class of colocate GRPO) for a float32 model (``torch_dtype=float32``)
with ``engine_kwargs={"dtype": "bfloat16"}``, answers a prompt greedily, then syncs an all-zero copy of the model's
weights through the trainer's (patched) ``_load_state_dict_to_vllm`` and answers again. Prints one JSON line: the
engine's dtype, the vocabulary size, and each answer's token log-probabilities. All-zero weights give every token
the logit 0, so the second answer's log-probabilities are ``-log(vocabulary)`` only if the sync reached the engine.
"""

import json
import sys
from types import SimpleNamespace


def main(model: str) -> None:
    from swift_plugins.doctor.plugins import leave_out_swift_plugin
    from swift_plugins.integration import vllm_cpu

    leave_out_swift_plugin()  # as swift_plugins/plugin.py does
    assert vllm_cpu.install(), "not vLLM's CPU build"
    import torch
    from swift.infer_engine import GRPOVllmEngine, InferRequest, RequestConfig
    from swift.rlhf_trainers.rollout_mixin import RolloutTrainerMixin
    from transformers import AutoConfig, AutoModelForCausalLM

    engine = GRPOVllmEngine(model, torch_dtype=torch.float32, model_type="qwen2", template_type="qwen2_5",
                            enforce_eager=True, max_model_len=256,
                            engine_kwargs={"dtype": "bfloat16"})  # fmt: skip
    request, config = InferRequest(messages=[{"role": "user", "content": "What is 7 + 5?"}]), RequestConfig(
        max_tokens=4, temperature=0, logprobs=True)  # fmt: skip

    def answer() -> list[float]:
        response = engine.infer([request], config, use_tqdm=False)[0]
        return [token["logprob"] for token in getattr(response, "response", response).choices[0].logprobs["content"]]

    before = answer()
    zeros = {name: torch.zeros_like(t) for name, t in AutoModelForCausalLM.from_pretrained(model).state_dict().items()}
    trainer = SimpleNamespace(vllm_mode="colocate", rollout_enable_lora=False, engine=engine)
    RolloutTrainerMixin._load_state_dict_to_vllm(trainer, zeros)
    print(json.dumps({"dtype": str(engine.engine.model_config.dtype), "before": before, "after": answer(),
                      "vocabulary": AutoConfig.from_pretrained(model).vocab_size}))  # fmt: skip


if __name__ == "__main__":
    main(sys.argv[1])
