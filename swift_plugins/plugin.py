"""The ``--external_plugins`` entry: ``swift rlhf ... --external_plugins swift_plugins/plugin.py``.

Registers the shared think/answer format rewards and every task and task family of :mod:`swift_plugins.tasks`
(its rewards in ``orms``, its dataset preprocessor for the hub ids and for the local files named by
``--dataset``/``--val_dataset`` on the command line), leaves ms-swift's own vLLM plugin out of ``VLLM_PLUGINS``
where it would break vLLM's engine (vLLM 0.11 lacks the module it imports; :mod:`swift_plugins.doctor.plugins`),
adapts ms-swift to vLLM's CPU build where that is the vLLM installed
(:mod:`swift_plugins.integration.vllm_cpu`), and spares GRPO the old policy's forward pass where the old policy is
the current one (:mod:`swift_plugins.integration.old_policy`). swift imports it while parsing its arguments, before
vLLM starts an engine.
"""

import sys
from pathlib import Path

try:
    from swift_plugins.integration import swift_adapter
except ImportError:  # used from a checkout that was not pip-installed
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from swift_plugins.integration import swift_adapter

from swift_plugins.doctor.plugins import leave_out_swift_plugin
from swift_plugins.integration import old_policy, vllm_cpu
from swift_plugins.tasks import registered

leave_out_swift_plugin()
vllm_cpu.install()
old_policy.install()
swift_adapter.register_shared()
for spec in registered():  # a family last: its file registrations win over a task's
    swift_adapter.register_spec(spec)
    swift_adapter.register_spec_files(spec, swift_adapter.dataset_arguments(sys.argv[1:]))
