"""GSM8K: grade-school math word problems with exact final-number rewards, with no ms-swift import.

The ms-swift adapters live in :mod:`swift_plugins.gsm8k.swift_adapter`; the reference data is
``openai/gsm8k`` (``modelscope/gsm8k``), config ``main``.
"""

from .answer import final_number, reference_number
from .data import GSM8K, SYSTEM_PROMPT, plain_number
from .rewards import Verdict, gsm8k_accuracy_reward, judge, reasoning_answer_format_reward

__all__ = [
    "GSM8K",
    "SYSTEM_PROMPT",
    "Verdict",
    "final_number",
    "gsm8k_accuracy_reward",
    "judge",
    "plain_number",
    "reasoning_answer_format_reward",
    "reference_number",
]
