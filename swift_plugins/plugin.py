"""The ``--external_plugins`` entry: ``swift rlhf ... --external_plugins swift_plugins/plugin.py``.

Registers the Countdown rewards (``external_countdown``, ``countdown_shaped``,
``think_answer_format``, ``think_answer_format_think_in_prompt``) and the Countdown preprocessor
for the hub ids and for local files named by ``--dataset``/``--val_dataset`` on the command line.
"""

import sys
from pathlib import Path

try:
    from swift_plugins.countdown import swift_adapter
except ImportError:  # used from a checkout that was not pip-installed
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from swift_plugins.countdown import swift_adapter

swift_adapter.register()
swift_adapter.register_countdown_files(swift_adapter.dataset_arguments(sys.argv[1:]))
