"""Stand-in DeepSpeed for tests/launch/test_launchers.py; FAKE_DEEPSPEED=missing raises what a missing install
raises."""
import os

if os.environ.get('FAKE_DEEPSPEED') == 'missing':
    raise ModuleNotFoundError("No module named 'deepspeed'", name='deepspeed')

__version__ = '0.18.9'


class DeepSpeedEngine:
    """Never made: where a real DeepSpeed's metadata is installed, accelerate imports this name from the stand-in
    (saving a model asks whether it is wrapped in one; it is not)."""
