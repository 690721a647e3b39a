"""What every task shares: errors, files, the task contract, the score report, the command line, tags.

Nothing here imports ms-swift except :mod:`swift_plugins.integration.swift_adapter`.
"""

from .errors import DataError, OutputError, PluginError
from .files import atomic_path, check_output, read_rows, write_jsonl, write_rows, write_text
from .tags import answer_tag_reward, answer_tag_strict_reward, completion_text, is_two_block, last_answer
from .task import Task

__all__ = [
    "DataError",
    "OutputError",
    "PluginError",
    "Task",
    "answer_tag_reward",
    "answer_tag_strict_reward",
    "atomic_path",
    "check_output",
    "completion_text",
    "is_two_block",
    "last_answer",
    "read_rows",
    "write_jsonl",
    "write_rows",
    "write_text",
]
