"""ms-swift plugins for GRPO training on Countdown and GSM8K: rewards, data tools, evaluation, launchers."""
