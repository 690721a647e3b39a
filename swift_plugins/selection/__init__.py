"""Difficulty-targeted training rows: keep the rows a model solves sometimes, not never and not always.

A GRPO group whose answers are all right or all wrong has no reward spread: zero advantage, no gradient, compute
spent on nothing. :func:`.select.select_rows` asks the model ``N`` times for each candidate row
(:func:`swift_plugins.tools.evaluate.evaluate` with sampling), counts the right answers and writes the rows whose
count lies in a band (:class:`.band.Band`) as the task's ordinary training rows: ``python -m swift_plugins select``
(:mod:`.cli`), and ``SELECT_SAMPLES`` in the recipes.
"""

__all__: list[str] = []
