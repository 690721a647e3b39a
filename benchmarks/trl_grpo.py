"""TRL's own ``GRPOTrainer`` on Countdown rows, for ``bench_grpo_cpu.py``'s ``trl`` setting.

TRL's defaults (its learning rate, schedule, loss, KL weight, sampling, reward weights), except what the benchmark
holds equal with the package's GRPO: the model (a demo's SFT checkpoint), the training rows, the package's
rewards (as plain functions: TRL's reward signature), the completions a step and per prompt, the answer length and
the precision (``--bf16``: bfloat16 autocast over the float32 weights, as the demo's GRPO on a CPU with AVX-512).
Generation is transformers' (TRL's vLLM modes need a GPU). The prompts are the text ms-swift's ``chatml`` template
makes of the package's Countdown prompt, so the checkpoint sees what its SFT saw. It runs in a process of its own:
importing ms-swift replaces transformers' trainer callbacks with ones that need ms-swift's arguments.

Each logged step is written to ``<out>/logging.jsonl`` as ms-swift writes its own (``global_step/max_steps``), and
a checkpoint every ``--save-steps``; the benchmark stops the run at its CPU budget.

    python benchmarks/trl_grpo.py output/cpu_demo/sft/checkpoint-36 rows.jsonl out/ --seed 0
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from swift_plugins.core.think_answer import think_answer_format_reward
from swift_plugins.countdown.data import prompt_for
from swift_plugins.countdown.rewards import countdown_accuracy_reward

CHATML = "<|im_start|>user\n{}<|im_end|>\n<|im_start|>assistant\n"  # ms-swift's chatml template, no system turn


def build_parser() -> argparse.ArgumentParser:
    """The script's arguments (``bench_grpo_cpu.py`` builds its ``trl`` row's command line from them)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("checkpoint", type=Path)
    parser.add_argument("rows", type=Path, help="Countdown rows (nums, target) to train on")
    parser.add_argument("out", type=Path)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--completions", type=int, default=32, help="completions a step")
    parser.add_argument("--generations", type=int, default=8, help="completions per prompt")
    parser.add_argument("--max-completion-length", type=int, default=76)
    parser.add_argument("--max-steps", type=int, default=1000)
    parser.add_argument("--save-steps", type=int, default=4)
    parser.add_argument("--learning-rate", type=float, help="default: TRL's")
    parser.add_argument("--bf16", action="store_true", help="bfloat16 autocast over the float32 weights")
    return parser


def main() -> None:
    args = build_parser().parse_args()

    from datasets import Dataset
    from transformers import AutoTokenizer, TrainerCallback
    from trl import GRPOConfig, GRPOTrainer

    rows = [json.loads(line) for line in args.rows.read_text().splitlines() if line.strip()]
    dataset = Dataset.from_list([{"prompt": CHATML.format(prompt_for(row["nums"], row["target"])),
                                  "nums": row["nums"], "target": row["target"]} for row in rows])  # fmt: skip
    args.out.mkdir(parents=True, exist_ok=True)
    log = args.out / "logging.jsonl"

    class SwiftStyleLog(TrainerCallback):
        def on_log(self, _args, state, _control, logs=None, **_kwargs):
            if logs and "loss" in logs:
                record = {**logs, "global_step/max_steps": f"{state.global_step}/{state.max_steps}"}
                with log.open("a") as file:
                    file.write(json.dumps(record) + "\n")

    config = GRPOConfig(
        output_dir=str(args.out), use_cpu=True, bf16=args.bf16, seed=args.seed,
        per_device_train_batch_size=args.completions, num_generations=args.generations,
        max_completion_length=args.max_completion_length, max_steps=args.max_steps, logging_steps=1,
        save_steps=args.save_steps, save_total_limit=2, save_only_model=True, report_to="none",
        dataloader_num_workers=0, dataloader_pin_memory=False,
        **({"learning_rate": args.learning_rate} if args.learning_rate else {}),
    )  # fmt: skip
    trainer = GRPOTrainer(model=str(args.checkpoint), reward_funcs=[countdown_accuracy_reward,
                          think_answer_format_reward], args=config, train_dataset=dataset,
                          processing_class=AutoTokenizer.from_pretrained(args.checkpoint),
                          callbacks=[SwiftStyleLog()])  # fmt: skip
    trainer.train()


if __name__ == "__main__":
    main()
