"""The ``--external_plugins`` entry: ``swift rlhf ... --external_plugins swift_plugins/plugin.py``.

Registers every task's rewards and dataset preprocessor: Countdown (``external_countdown``,
``countdown_shaped``, ``think_answer_format``, ``think_answer_format_think_in_prompt``) and GSM8K
(``gsm8k_accuracy``, ``reasoning_answer_format``, ``answer_tag``, ``answer_tag_strict``), for the hub
ids and for the local files named by ``--dataset``/``--val_dataset`` on the command line.
"""

import sys
from pathlib import Path

try:
    from swift_plugins.core.swift_adapter import dataset_arguments
except ImportError:  # used from a checkout that was not pip-installed
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from swift_plugins.core.swift_adapter import dataset_arguments

from swift_plugins.countdown import swift_adapter as countdown
from swift_plugins.gsm8k import swift_adapter as gsm8k

for task in (countdown, gsm8k):
    task.register()
    task.register_files(dataset_arguments(sys.argv[1:]))
