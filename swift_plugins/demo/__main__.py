"""``python -m swift_plugins.demo``: the demo behind ``shell/countdown_demo.sh`` (``make demo``)."""

import sys

from ..launch.script import run_script
from .run import demo

sys.exit(run_script("countdown_demo", sys.argv[1:], demo))
