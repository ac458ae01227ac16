"""Who holds something this product made (a heartbeat, a lock file), and whether they are gone.

An owner record is a small JSON object: host, boot id, pid and the pid's start time (plus the
caller's fields). An owner that ran on this machine since its last boot and whose process is gone
(or whose pid now names another process) is dead: what it held may be taken at once. Owners
elsewhere, and records this product did not write (Java's), are never judged dead here.
"""

from __future__ import annotations

import json
import os
import socket


def _boot_id() -> str:
    try:
        with open("/proc/sys/kernel/random/boot_id") as f:
            return f.read().strip()
    except OSError:
        return ""


def _start_time(pid: int) -> str:
    """The process's start time in clock ticks since boot (Linux), "" when unknown."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            stat = f.read()
        return stat.rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return ""


def owner_fields() -> dict:
    pid = os.getpid()
    return {"host": socket.gethostname(), "boot": _boot_id(), "pid": pid, "start": _start_time(pid)}


def owner_record(**extra) -> bytes:
    """This process as an owner record (compact JSON), with ``extra`` fields."""
    return json.dumps({**owner_fields(), **extra}, separators=(",", ":")).encode()


def owner_dead_here(data: bytes | str) -> bool:
    """Whether the owner a record names ran on this machine (since its last boot) and is gone.
    Unknown owners (an empty Java file, another machine) are not judged."""
    try:
        rec = json.loads((data.decode() if isinstance(data, bytes) else data) or "{}")
        pid = int(rec["pid"])
    except (ValueError, KeyError, TypeError, UnicodeDecodeError, AttributeError):
        return False
    boot = _boot_id()
    if not boot or rec.get("host") != socket.gethostname() or rec.get("boot") != boot:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        pass  # alive, another user's
    start = _start_time(pid)
    return bool(start and rec.get("start") and start != rec.get("start"))  # the pid was reused


__all__ = ["owner_record", "owner_fields", "owner_dead_here"]
