"""Shared fixtures: the repository root, small Countdown data files made by the package itself, the launcher's
stand-in sandbox (tests/helpers.py)."""

import json
import signal
import sys
from pathlib import Path

import pytest

from swift_plugins.countdown.generator import CountdownConfig, generate

from .helpers import REPO, Sandbox

# A suite started in the background of a non-interactive shell (`nohup make test &`) inherits SIGINT ignored, and so
# would every process it starts: the tests of Ctrl-C need what a terminal's foreground job has. With Python's own
# handler here, the processes the tests start get SIGINT's default at exec.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(scope="session")
def repo() -> Path:
    return REPO


@pytest.fixture(scope="module")
def plugin(repo):
    """The plugin imported the way `--external_plugins swift_plugins/plugin.py` imports it (with the real swift)."""
    from swift.utils import import_external_file

    argv = sys.argv
    sys.argv = ["swift", "rlhf"]
    try:
        return import_external_file(str(repo / "swift_plugins" / "plugin.py"))
    finally:
        sys.argv = argv


@pytest.fixture(scope="session")
def countdown_rows() -> list[dict]:
    return list(generate(CountdownConfig(), count=40, seed=7))


@pytest.fixture
def countdown_jsonl(tmp_path, countdown_rows) -> Path:
    path = tmp_path / "countdown.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in countdown_rows))
    return path


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory) -> Path:
    """The demo's tiny random Qwen2.5-shaped model, built once per test session."""
    from swift_plugins.tools.tiny_model import build_tiny_model

    return build_tiny_model(tmp_path_factory.mktemp("tiny") / "model")


@pytest.fixture(scope="session")
def smol_model(tmp_path_factory) -> Path:
    """SmolLM2-135M-Instruct as a normal model folder, built once per test session (about 20 s)."""
    from swift_plugins.tools.smol_model import build_smol_model

    return build_smol_model(tmp_path_factory.mktemp("smol") / "model")


@pytest.fixture
def sandbox(tmp_path) -> Sandbox:
    """The stand-ins on PATH, free ports, an output folder; every stand-in it started is gone afterwards."""
    box = Sandbox(tmp_path)
    yield box
    box.cleanup()
