"""What a ``swift rollout`` server's log says of the trainer's weight updates (pure, standard library only).

ms-swift 4.6 sends the trainer's weights to the server without waiting for the server to load them: the server's
worker runs ``update_flattened_params`` (or ``update_named_param``, ``update_adapter_*``,
``process_weights_after_loading``) as a fire-and-forget call, and when the load raises it only logs
``[ERROR:swift] Method execution failed: collective_rpc`` and the traceback. The trainer goes on, and the server
generates with the weights it had: a run trains against a stale policy and exits 0. :func:`failed_loads` finds
those tracebacks, so that the watch's ``stale-server`` rule stops the run at the first one.

>>> lines = '''INFO: "POST /update_flattened_params/ HTTP/1.1" 200 OK
... [ERROR:swift] Method execution failed: collective_rpc
... Traceback (most recent call last):
...   File "/x/swift/pipelines/infer/rollout.py", line 293, in update_flattened_params
...     self.model_runner.model.load_weights(weights=list(named_params.items()))
...   File "/x/vllm/model_executor/layers/linear.py", line 1341, in load_weights
...     param.weight_loader(param, loaded_weight, shard_id)
... AttributeError: 'Parameter' object has no attribute 'weight_loader'
... INFO: "POST /process_weights_after_loading/ HTTP/1.1" 200 OK'''.splitlines()
>>> failed_loads(lines)
["update_flattened_params: AttributeError: 'Parameter' object has no attribute 'weight_loader'"]
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from ..core.errors import DataError
from .log import GrowingFile

__all__ = ["WEIGHT_METHODS", "ServerLogReader", "failed_loads"]

FAILED = "Method execution failed:"  # swift's rollout worker, after any call from the trainer raised
# The server-side methods of the weight sync (swift/pipelines/infer/rollout.py, WeightSyncWorkerExtension).
WEIGHT_METHODS = (
    "update_flattened_params",
    "update_named_param",
    "update_adapter_flattened_param",
    "update_adapter_param",
    "process_weights_after_loading",
)
_FRAME = re.compile(r'^\s+File ".*", line \d+, in (\w+)')


def failed_loads(lines: Iterable[str]) -> list[str]:
    """``"<method>: <exception line>"`` for each failed weight update in a server's log ``lines``; a failure of any
    other call (a generation request: the trainer hears of those itself) is not one."""
    found, method, inside = [], None, False
    for line in lines:
        line = line.rstrip("\n")
        if FAILED in line:
            method, inside = None, True
            continue
        if not inside:
            continue
        frame = _FRAME.match(line)
        if frame:
            method = frame.group(1) if frame.group(1) in WEIGHT_METHODS else method
        elif line and not line[0].isspace() and not line.startswith(("Traceback", "[Previous line")):
            if method is not None:  # the exception's own line ends the traceback
                found.append(f"{method}: {line.strip()}")
            inside = False
    return found


class ServerLogReader:
    """The failed weight updates (:func:`failed_loads`) written to a server's log since the last :meth:`read`.

    What the log held when the reader was made is not judged: a server that outlives a training run (the multi-node
    recipe's rollout host) keeps the failures of earlier runs in its log. A log replaced since (a restarted server's,
    the old one kept as ``rollout.log.1``) is read from its start. Reads whole lines only (a half-written last line
    waits for the next call) and keeps a traceback that is still being written for the next call too.

    >>> import tempfile
    >>> from pathlib import Path
    >>> log = Path(tempfile.mkdtemp()) / "rollout.log"
    >>> reader = ServerLogReader(log)
    >>> reader.read()  # no log yet
    []
    >>> _ = log.write_text("[ERROR:swift] Method execution failed: collective_rpc\\nTraceback (most recent call:\\n")
    >>> reader.read()  # the traceback is not complete yet
    []
    >>> with log.open("a") as file:
    ...     _ = file.write('  File "r.py", line 1, in update_named_param\\nRuntimeError: boom\\nINFO: ok\\n')
    >>> reader.read()
    ['update_named_param: RuntimeError: boom']
    """

    def __init__(self, path) -> None:
        self.file = GrowingFile(path, skip_existing=True)

    def read(self) -> list[str]:
        try:
            lines = [line for block in self.file.blocks() for line in block]
        except DataError:  # a log that cannot be read says nothing of the weights
            return []
        texts = [line.decode("utf-8", errors="replace") for line in lines]
        last = max((i for i, text in enumerate(texts) if FAILED in text), default=None)
        judged = last if last is not None and _open(texts[last:]) else len(lines)
        self.file.give_back(lines[judged:])  # a traceback still being written: read again next time
        return failed_loads(texts[:judged])


def _open(lines: list[str]) -> bool:
    """Whether the traceback that starts ``lines`` has not reached its exception line yet."""
    return all(not line or line[0].isspace() or line.startswith(("Traceback", "[Previous line")) for line in lines[1:])
