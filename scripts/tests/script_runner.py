"""What the offline script tests share: where the scripts are (put on the import path) and how
one is run as a user runs it, in a process of its own."""
import os
import subprocess
import sys

SCRIPTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if SCRIPTS not in sys.path:
    sys.path.insert(0, SCRIPTS)


def run_script(name, *args):
    """`python3 scripts/NAME ARGS...`: its exit status, stdout and stderr."""
    return subprocess.run([sys.executable, os.path.join(SCRIPTS, name), *map(str, args)],
                          capture_output=True, text=True)
