"""Stand-in Weights & Biases for tests/launch/test_launchers.py; FAKE_WANDB=missing raises what a missing install
raises."""
import os

if os.environ.get('FAKE_WANDB') == 'missing':
    raise ModuleNotFoundError("No module named 'wandb'", name='wandb')

__version__ = '0.21.0'
