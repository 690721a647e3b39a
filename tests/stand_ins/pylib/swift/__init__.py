"""Stand-in ms-swift package for tests/launch/test_launchers.py.

The launcher reads the version with `import swift; swift.__version__` using the
python beside the `swift` executable; the tests put this directory first
on PYTHONPATH so FAKE_SWIFT_VERSION decides what they see.
"""
import os

if os.environ.get('FAKE_SWIFT_VERSION') == 'broken':
    raise ImportError('stand-in: broken ms-swift install')

__version__ = os.environ.get('FAKE_SWIFT_VERSION', '4.6.0')
