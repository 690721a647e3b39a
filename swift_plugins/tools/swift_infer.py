"""``swift infer`` whose result rows also say why each response stopped and how many tokens it took.

ms-swift 4.6's ``swift infer`` writes each response's text but neither its ``finish_reason`` nor its
token count, though its engines know both; re-encoding the text cannot recover the count (16
generated newlines re-encode as one Qwen2.5 token). This runs swift's own infer pipeline and adds,
to each row it writes, ``finish_reason`` (``"length"`` when the response hit ``--max_new_tokens``,
``"stop"`` otherwise) and ``completion_tokens``, as swift's engine reported them. Everything else
is ``swift infer``'s, arguments included::

    python -m swift_plugins.tools.swift_infer --model MODEL --val_dataset eval.jsonl --result_path out.jsonl

>>> RESULT_COLUMNS
('finish_reason', 'completion_tokens')
"""

from __future__ import annotations

from typing import Any

from swift.pipelines.infer.infer import SwiftInfer

__all__ = ["RESULT_COLUMNS", "CountingInfer"]

RESULT_COLUMNS = ("finish_reason", "completion_tokens")


class CountingInfer(SwiftInfer):
    """swift's infer pipeline, keeping each batch's engine responses to annotate the rows it writes."""

    def infer(self, *args: Any, **kwargs: Any) -> list[Any]:
        self._responses = self.infer_engine.infer(*args, **kwargs)
        return self._responses

    def _batch_infer(self, val_dataset: Any, request_config: Any) -> list[dict[str, Any]]:
        rows = super()._batch_infer(val_dataset, request_config)
        if rows:  # a rank that writes nothing gets no rows
            for row, response in zip(rows, self._responses, strict=True):
                row["finish_reason"] = response.choices[0].finish_reason
                row["completion_tokens"] = response.usage.completion_tokens
        return rows


if __name__ == "__main__":
    CountingInfer().main()
