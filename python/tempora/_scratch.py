"""The temporary directories tempora.explain writes the program's input
into (often on /dev/shm, a memory file system): named tempora-PID-* after
the process that made them, so that those of a process that was killed
(SIGKILL leaves no time to remove them) are recognised and removed by the
next call of any process of the same user."""

import os
import re
import shutil
import stat
import tempfile
from typing import Optional

_NAME = re.compile(r"tempora-(\d+)-")


def directory(where: Optional[str]) -> "tempfile.TemporaryDirectory[str]":
    """A new temporary directory in where (None: the default temporary
    directory), named after this process, once the stale ones there are
    removed (remove_stale)."""
    remove_stale(where)
    return tempfile.TemporaryDirectory(prefix="tempora-%d-" % os.getpid(), dir=where)


def remove_stale(where: Optional[str]) -> int:
    """Remove the directories tempora-PID-* of where (None: the default
    temporary directory) that belong to this user and whose process PID
    no longer runs; return how many. A PID in use again by another process
    keeps its directory until that process ends."""
    d = tempfile.gettempdir() if where is None else where
    removed = 0
    try:
        names = os.listdir(d)
    except OSError:
        return 0
    uid = os.getuid() if hasattr(os, "getuid") else None
    for name in names:
        m = _NAME.match(name)
        if m is None or _alive(int(m.group(1))):
            continue
        path = os.path.join(d, name)
        try:
            st = os.lstat(path)
        except OSError:
            continue
        if not stat.S_ISDIR(st.st_mode) or (uid is not None and st.st_uid != uid):
            continue
        shutil.rmtree(path, ignore_errors=True)
        removed += 1
    return removed


def _alive(pid: int) -> bool:
    """Whether process pid exists (a process of another user counts)."""
    if pid <= 0:
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True
    return True
