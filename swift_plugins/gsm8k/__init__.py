"""GSM8K: grade-school math word problems with exact final-number rewards, with no ms-swift import.

The ms-swift adapters live in :mod:`swift_plugins.gsm8k.swift_adapter`; the reference data is
``openai/gsm8k`` (``modelscope/gsm8k``), config ``main``.
"""

from .data import GSM8K, SYSTEM_PROMPT, plain_number

__all__ = ["GSM8K", "SYSTEM_PROMPT", "plain_number"]
