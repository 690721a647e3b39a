"""The metrics an offline wandb run recorded, read from its ``.wandb`` file.

wandb (declared in the ``gpu`` and ``test`` extras) writes an offline run as a ``.wandb`` file: protobuf
``Record`` messages (``wandb.proto.wandb_internal_pb2``) framed in LevelDB-log-style 32 KiB blocks. wandb
0.31 ships no Python reader for it (its Go core writes and syncs it), so the test reads the frames itself.
"""

import json
import struct
from collections.abc import Iterator
from pathlib import Path

from wandb.proto import wandb_internal_pb2

BLOCK = 32 * 1024
HEADER = struct.Struct("<4sHB")  # ":W&B", magic, version
FRAME = struct.Struct("<IHB")  # checksum, length, kind
FULL, FIRST, MIDDLE, LAST = 1, 2, 3, 4


def wandb_records(path: Path) -> Iterator:
    """The protobuf records of a ``.wandb`` file, reassembled from their frames."""
    data = path.read_bytes()
    assert HEADER.unpack_from(data)[0] == b":W&B"
    position, pending = HEADER.size, b""
    while position + FRAME.size <= len(data):
        left = BLOCK - position % BLOCK
        _, length, kind = FRAME.unpack_from(data, position) if left >= FRAME.size else (0, 0, 0)
        if kind == 0:  # the zero padding at the end of a block
            position += left
            continue
        pending += data[position + FRAME.size : position + FRAME.size + length]
        position += FRAME.size + length
        if kind in (FULL, LAST):
            record = wandb_internal_pb2.Record()
            record.ParseFromString(pending)
            pending = b""
            yield record


def history(path: Path) -> list[dict[str, float]]:
    """Each ``wandb.log`` call of the run: metric name -> value."""
    steps = []
    for record in wandb_records(path):
        if record.WhichOneof("record_type") == "history":
            items = record.history.item
            steps.append({"/".join(item.nested_key) or item.key: json.loads(item.value_json) for item in items})
    return steps
