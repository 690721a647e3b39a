"""What the gym tests share: a scoring pool of their own, closed after the module."""

import pytest

from swift_plugins.gym import rewards


@pytest.fixture(scope="module")
def fresh_pool():
    """The reward's shared pool started afresh for the module's tests and closed after them: its workers (each
    imports reasoning-gym, about a second) start once for the module, not for each test."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(rewards, "_POOL", None)
        yield
        rewards.shared_pool().close()
