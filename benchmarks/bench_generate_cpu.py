"""What one CPU GRPO generation call costs, and what would make it cheaper.

``swift rlhf --rlhf_type grpo --use_vllm false`` generates with transformers: one batched
``model.generate`` call with every prompt of the step repeated once per completion, sampling at
temperature 1 up to ``--max_completion_length`` (76 in the demo) new tokens. This script makes that
call on Countdown prompts as the demo writes them, forcing all 76 tokens (what a batch costs once one
of its completions runs to the limit, as happens in nearly every step), in each variant:

    float32        the demo's float32 weights, as GRPO generates with them
    bf16-autocast  bfloat16 autocast over the float32 weights (what ``--bf16 true`` gives the model)
    bf16-weights   bfloat16 weights: the most a lower precision could give; GRPO at lr 5e-6 cannot
                   train them (the updates are below bfloat16's resolution)
    no-system      float32 without the system prompt (about 30 tokens shorter)

at each batch size (completions per call). Rates are completions per CPU-second of this process
(all its threads) and per wall second; every ratio is against float32 at the first batch size,
measured in the same run, the variants interleaved round after round. ``prefill s`` is the same call
with one new token: the cost of reading the prompts.

    python benchmarks/bench_generate_cpu.py output/cpu_demo/model --batch-sizes 8 32 64 --rounds 2
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

from swift_plugins.core.think_answer import SYSTEM_PROMPT as COUNTDOWN_SYSTEM
from swift_plugins.countdown.data import COUNTDOWN
from swift_plugins.countdown.generator import CountdownConfig, generate

VARIANTS = ("float32", "bf16-autocast", "bf16-weights", "no-system")
NUM_GENERATIONS = 8  # completions per prompt, as the demo's GRPO
DEMO_PUZZLES = CountdownConfig(max_count=3, max_number=10, max_target=30)  # 3 numbers of 1-10, targets 1-30


def prompts(tokenizer, completions: int, *, system: bool, seed: int = 0) -> list[str]:
    """``completions`` chat prompts: ``completions / 8`` of the demo's puzzles, each repeated 8 times.

    >>> class Chat:
    ...     def apply_chat_template(self, messages, **_):
    ...         return " | ".join(message["role"] for message in messages)
    >>> prompts(Chat(), 16, system=True)[::8]
    ['system | user', 'system | user']
    """
    texts = []
    for row in generate(DEMO_PUZZLES, completions // NUM_GENERATIONS, seed):
        messages = COUNTDOWN.messages(row)  # the user message of the registered dataset
        if system:
            messages = [{"role": "system", "content": COUNTDOWN_SYSTEM}, *messages]
        chat = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
        texts += [chat] * NUM_GENERATIONS
    return texts


def generate_seconds(model, tokenizer, texts: list[str], new_tokens: int, *, autocast: bool) -> tuple[float, float]:
    """(CPU seconds, wall seconds) of one sampled ``generate`` call of exactly ``new_tokens`` tokens."""
    batch = tokenizer(texts, return_tensors="pt", padding=True)
    precision = torch.autocast("cpu", dtype=torch.bfloat16, enabled=autocast)
    cpu, wall = time.process_time(), time.perf_counter()
    with torch.no_grad(), precision:
        model.generate(**batch, do_sample=True, temperature=1.0, top_k=0, top_p=1.0, max_new_tokens=new_tokens,
                       min_new_tokens=new_tokens, pad_token_id=tokenizer.pad_token_id)  # fmt: skip
    return time.process_time() - cpu, time.perf_counter() - wall


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model", type=Path, help="a SmolLM2 folder (python -m swift_plugins smol-model DIR)")
    parser.add_argument("--batch-sizes", type=int, nargs="+", default=[8, 32, 64], help="completions per call")
    parser.add_argument("--variants", nargs="+", choices=VARIANTS, default=list(VARIANTS))
    parser.add_argument("--new-tokens", type=int, default=76, help="tokens generated per completion")
    parser.add_argument("--rounds", type=int, default=2, help="times each variant runs (the rates are means)")
    parser.add_argument("--out", type=Path, help="also write the results as JSON here")
    args = parser.parse_args(argv)
    if any(size <= 0 or size % NUM_GENERATIONS for size in args.batch_sizes):
        parser.error(f"--batch-sizes {args.batch_sizes}: each a positive multiple of {NUM_GENERATIONS}")
    torch.manual_seed(0)
    tokenizer = AutoTokenizer.from_pretrained(args.model, padding_side="left")
    models = {"float32": AutoModelForCausalLM.from_pretrained(args.model, dtype=torch.float32).eval()}
    if "bf16-weights" in args.variants:
        models["bfloat16"] = AutoModelForCausalLM.from_pretrained(args.model, dtype=torch.bfloat16).eval()

    variants = ["float32", *(variant for variant in args.variants if variant != "float32")]  # the baseline first
    runs = [(variant, size) for size in args.batch_sizes for variant in variants]
    totals = {run: [0.0, 0.0, 0.0] for run in runs}  # CPU s, wall s, prefill wall s
    for model in models.values():  # the first calls of a process are slow (allocations, kernel choice)
        generate_seconds(model, tokenizer, prompts(tokenizer, args.batch_sizes[0], system=True), 8, autocast=False)
    for _ in range(args.rounds):
        for variant, size in runs:
            model = models["bfloat16" if variant == "bf16-weights" else "float32"]
            texts = prompts(tokenizer, size, system=variant != "no-system")
            autocast = variant == "bf16-autocast"
            cpu, wall = generate_seconds(model, tokenizer, texts, args.new_tokens, autocast=autocast)
            prefill = generate_seconds(model, tokenizer, texts, 1, autocast=autocast)[1]
            for index, seconds in enumerate((cpu, wall, prefill)):
                totals[variant, size][index] += seconds / args.rounds
            print(f"  {variant} x{size}: {wall:.1f} s", flush=True)

    baseline = totals["float32", args.batch_sizes[0]]
    base_cpu, base_wall = args.batch_sizes[0] / baseline[0], args.batch_sizes[0] / baseline[1]
    lines = ["| variant | completions per call | completions per CPU-s | ratio | completions per wall s | ratio "
             "| wall s | prefill s |", "|---|---|---|---|---|---|---|---|"]  # fmt: skip
    results = []
    for (variant, size), (cpu, wall, prefill) in totals.items():
        per_cpu, per_wall = size / cpu, size / wall
        results.append({"variant": variant, "completions": size, "cpu_seconds": cpu, "wall_seconds": wall,
                        "prefill_wall_seconds": prefill, "completions_per_cpu_second": per_cpu})  # fmt: skip
        lines.append(f"| {variant} | {size} | {per_cpu:.3f} | {per_cpu / base_cpu:.2f}x | {per_wall:.3f} "
                     f"| {per_wall / base_wall:.2f}x | {wall:.1f} | {prefill:.1f} |")  # fmt: skip
    table = "\n".join(lines)
    print(f"{args.new_tokens} new tokens per completion, torch {torch.__version__}, {torch.get_num_threads()} threads")
    print(table)
    if args.out:
        args.out.write_text(json.dumps({"new_tokens": args.new_tokens, "results": results, "table": table}, indent=2))


if __name__ == "__main__":
    main()
