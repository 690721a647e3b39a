"""What the gym tests share: a scoring pool of their own, closed after the test."""

import pytest

from swift_plugins.gym import rewards


@pytest.fixture
def fresh_pool(monkeypatch):
    """The reward's shared pool started afresh for the test and closed after it."""
    monkeypatch.setattr(rewards, "_POOL", None)
    yield
    rewards.shared_pool().close()
    monkeypatch.setattr(rewards, "_POOL", None)
