"""ms-swift plugins for GRPO training on the Countdown task."""
