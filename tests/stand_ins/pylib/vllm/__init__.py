"""Stand-in vLLM for tests/launch/test_launchers.py: the launchers import it with swift's interpreter.

FAKE_VLLM=missing raises what a missing install raises; FAKE_VLLM=broken what a CUDA mismatch raises.
"""
import os

if os.environ.get('FAKE_VLLM') == 'missing':
    raise ModuleNotFoundError("No module named 'vllm'", name='vllm')
if os.environ.get('FAKE_VLLM') == 'broken':
    raise RuntimeError('stand-in: libcudart.so.12: cannot open shared object file\nmore detail')

__version__ = '0.11.0'
