"""``make demo``: SmolLM2-135M-Instruct learns Countdown, offline, at the scale the hardware affords.

An experiment, not a launcher concern: :mod:`.plan` says what runs (the scale, the stages and every command, which
DRY_RUN prints), :mod:`.run` runs it; ``python -m swift_plugins.demo`` (``shell/countdown_demo.sh``) is the entry.
"""

__all__: list[str] = []
