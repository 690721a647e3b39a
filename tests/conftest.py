"""Shared fixtures: the repository root and small Countdown data files made by the package itself."""

import json
from pathlib import Path

import pytest

from swift_plugins.countdown.generator import CountdownConfig, generate

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def repo() -> Path:
    return REPO


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
