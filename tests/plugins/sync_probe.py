"""A test-only ms-swift plugin: what vLLM answers after every weight sync, and two probe rewards.

Loaded with ``--external_plugins``: after each sync of the trainer's weights into vLLM (the colocated engine, or
the ``swift rollout`` server, asked by the main process), vLLM's greedy answers to :data:`PROMPTS` (each token
with its log-probability and the runner-up's) are appended to ``$SYNC_PROBE_OUT`` with the training step whose
weights they are. Run as a script, it prints the same answers of saved models through swift's transformers
engine, one JSON line per model::

    python tests/plugins/sync_probe.py MODEL [MODEL...]

Rewards: ``countdown_probe`` scores each row's own known solution with the package's accuracy reward (1.0 iff
swift hands the rewards each row's ``nums``/``target``); ``distinct_characters`` varies between the random
tiny model's completions, so that its updates are not zero.
"""

import json
import os
import sys

from swift.infer_engine import InferRequest, RequestConfig
from swift.infer_engine.protocol import RolloutInferRequest
from swift.rewards import ORM, orms
from swift.rlhf_trainers.rollout_mixin import RolloutTrainerMixin

from swift_plugins.core.think_answer import SYSTEM_PROMPT
from swift_plugins.countdown.data import prompt_for
from swift_plugins.countdown.rewards import countdown_accuracy_reward

PROMPTS = (prompt_for([1, 2, 3], 6), "Hello", "What is 7 + 5?")


def greedy(engine, request=InferRequest) -> list[list[tuple[str, float, float]]]:
    """Each prompt's 8 greedy tokens as (token, log-probability, the runner-up's log-probability).

    The system message is explicit, so that the trainer's template and a fresh one build the same prompt.
    ``request``: the request class ``engine`` takes (a rollout server's client: ``RolloutInferRequest``).
    """
    config = RequestConfig(max_tokens=8, temperature=0, logprobs=True, top_logprobs=2)
    system = {"role": "system", "content": SYSTEM_PROMPT}
    requests = [request(messages=[system, {"role": "user", "content": prompt}]) for prompt in PROMPTS]
    answers = []
    for response in engine.infer(requests, config, use_tqdm=False):
        tokens = getattr(response, "response", response).choices[0].logprobs["content"]
        answers.append([(t["token"], t["logprob"], t["top_logprobs"][-1]["logprob"]) for t in tokens])
    return answers


_sync = RolloutTrainerMixin._move_model_to_vllm


def _move_model_to_vllm_and_record(self, *args, **kwargs):
    _sync(self, *args, **kwargs)  # every process takes part (ZeRO-3 gathers the weights); the main one sends them
    if self.vllm_mode == "server":
        if not self.accelerator.is_main_process:
            return
        answers = greedy(self.vllm_client, RolloutInferRequest)
    else:
        answers = greedy(self.engine)
    with open(os.environ["SYNC_PROBE_OUT"], "a") as out:
        out.write(json.dumps({"step": self.state.global_step, "answers": answers}) + "\n")


RolloutTrainerMixin._move_model_to_vllm = _move_model_to_vllm_and_record


class CountdownProbe(ORM):
    def __call__(self, completions, nums, target, solution, **kwargs):
        answers = [f"<answer>{s} = {t}</answer>" for s, t in zip(solution, target, strict=True)]
        return countdown_accuracy_reward(answers, nums, target)


class DistinctCharacters(ORM):
    def __call__(self, completions, **kwargs):
        return [len(set(text)) / max(len(text), 1) for text in completions]


orms["countdown_probe"] = CountdownProbe
orms["distinct_characters"] = DistinctCharacters

if __name__ == "__main__":
    from swift.infer_engine import TransformersEngine

    for model in sys.argv[1:]:
        engine = TransformersEngine(model, model_type="qwen2", template_type="qwen2_5", torch_dtype="float32")
        print(json.dumps({"model": model, "answers": greedy(engine)}), flush=True)
