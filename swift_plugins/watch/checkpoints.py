"""A run's checkpoints: which are complete, and the newest one saved before the watch's verdict.

>>> import tempfile
>>> newest_checkpoint(Path(tempfile.mkdtemp())) is None
True
"""

from __future__ import annotations

from pathlib import Path

from .live import stopped_since

__all__ = ["is_complete", "newest_checkpoint"]

WEIGHTS = ("model.safetensors", "model.safetensors.index.json", "adapter_model.safetensors", "pytorch_model.bin",
           "pytorch_model.bin.index.json")  # fmt: skip


def is_complete(checkpoint: Path) -> bool:
    """Whether ``checkpoint`` holds weights and the trainer state (written last)."""
    # transformers' Trainer._save_checkpoint writes trainer_state.json after the weights (and optimizer states).
    return (checkpoint / "trainer_state.json").is_file() and any((checkpoint / w).is_file() for w in WEIGHTS)


def newest_checkpoint(folder: Path) -> Path | None:
    """The complete ``checkpoint-N`` with the highest N (the most recent on a tie) in ``folder``'s ms-swift version
    folders (``v*-*/``) or, where swift ran with ``--add_version false``, in ``folder`` itself; None if none.

    A run folder that the watch stopped (:func:`~swift_plugins.watch.live.stopped_since`) offers only the
    checkpoints saved before its failure began.
    """
    found = []
    for path in [*folder.glob("v*-*/checkpoint-*"), *folder.glob("checkpoint-*")]:
        step = path.name.rsplit("-", 1)[1]
        if not (step.isdigit() and path.is_dir() and is_complete(path)):
            continue
        since = stopped_since(path.parent)
        if since is None or int(step) < since:
            found.append((int(step), path.stat().st_mtime, path))
    return max(found, key=lambda item: item[:2])[2] if found else None
