"""End a mini YARN cluster's processes when the JVM that started them is gone.

The NodeManagers start each container JVM in a session of its own (``setsid``), so
killing the cluster's process group leaves them running.  :func:`spawn` starts this
module as a separate process (its own session, so a signal to the caller's group
does not reach it) that waits for the cluster's JVM to end, then kills every process
whose command line names the cluster's work directory (the containers name it in
their ``java.io.tmpdir`` and log directories) and removes that directory.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

_POLL_S = 0.5


def spawn(pid: int, work: Path) -> subprocess.Popen[bytes]:
    """Start a reaper for the cluster JVM ``pid`` and its work directory ``work``."""
    return subprocess.Popen(
        [sys.executable, "-m", "platform_model.engine.reaper", str(pid), str(work)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )


def marked_pids(marker: str) -> list[int]:
    """Processes (not this one) whose command line contains ``marker``."""
    found = []
    needle = marker.encode()
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            cmdline = Path("/proc", entry, "cmdline").read_bytes()
        except OSError:
            continue
        if needle in cmdline and b"platform_model.engine.reaper" not in cmdline:
            found.append(int(entry))
    return found


def kill_marked(marker: str) -> list[int]:
    """SIGKILL every process whose command line names ``marker``; the pids killed."""
    pids = marked_pids(marker)
    for pid in pids:
        with contextlib.suppress(OSError):  # gone since we looked
            os.kill(pid, signal.SIGKILL)
    return pids


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # a zombie (exited, not yet waited for by its parent) is gone for our purpose
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def main(argv: list[str]) -> int:
    pid, work = int(argv[0]), argv[1]
    while _alive(pid):
        time.sleep(_POLL_S)
    for _ in range(3):  # containers being launched while we look
        if not kill_marked(work):
            break
        time.sleep(_POLL_S)
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
