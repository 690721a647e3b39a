"""What every task uses: held-out evaluation, comparison tables, training curves, the demo models.

Run as ``python -m swift_plugins <command>`` (see :mod:`swift_plugins.cli`).
"""

__all__: list[str] = []
