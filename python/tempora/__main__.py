"""python -m tempora: run the tempora program (the one tempora.find_binary
finds) with this command line, and exit with its status."""

import os
import subprocess
import sys

from ._binary import TemporaError, find_binary


def main() -> int:
    try:
        exe = find_binary()
    except TemporaError as exc:
        print("tempora: %s" % exc, file=sys.stderr)
        return 2
    if os.name == "posix":
        os.execv(exe, [exe] + sys.argv[1:])  # the program takes over this process (signals, exit status)
    return subprocess.call([exe] + sys.argv[1:])


if __name__ == "__main__":
    sys.exit(main())
