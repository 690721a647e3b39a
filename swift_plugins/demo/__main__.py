"""``python -m swift_plugins.demo``: the demo behind ``shell/countdown_demo.sh`` (``make demo``)."""

import sys

from ..launch.script import run_script
from .run import demo, demo_help
from .settings import SCRIPT

sys.exit(run_script(SCRIPT, sys.argv[1:], demo, demo_help))
