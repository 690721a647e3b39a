"""ms-swift plugins for GRPO training on Countdown and every task of the registry: rewards, data tools, launchers."""
