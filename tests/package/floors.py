"""The import floors of docs/layout.md, the task floor read from the registry (``lint-imports``, ``make lint``).

In pyproject.toml's layers contract of type ``registry_layers``, the layer ``{tasks}`` stands for every task and
family of :mod:`swift_plugins.tasks`, siblings that import none of each other: a task added as docs/layout.md says
(its subpackage and its line in the registry) is held to the floors without a contract to edit.
"""

from importlinter.contracts.layers import LayersContract

from swift_plugins.tasks import FAMILIES, NAMES

TASKS = "{tasks}"


class RegistryLayers(LayersContract):
    """import-linter's layers contract, with :data:`TASKS` replaced by the registry's task packages."""

    def __init__(self, name, session_options, contract_options):
        tasks = " | ".join((*NAMES, *FAMILIES))
        layers = [tasks if layer.strip() == TASKS else layer for layer in contract_options["layers"]]
        super().__init__(name, session_options, {**contract_options, "layers": layers})
