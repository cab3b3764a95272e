"""Who holds a lease, named so that a process of the same host can tell whether the holder still runs.

A holder is ``HOST/PID/START`` (``/INSTANCE`` added for single-holder leases, so that two
workers of one process are told apart): HOST is the host name plus a tag of the kernel boot and
the pid namespace, PID the process id and START its start time (/proc/PID/stat, field 22, clock
ticks since boot). A process that finds a lease held by a holder of its own HOST can look at that
pid: when no such process runs, it is a zombie, or the pid now belongs to a process started at
another time (reused), the holder is gone and its lease is free at once (a restart after kill -9
takes over without waiting for the lease to expire). A holder of another host, or in a form this
code does not read (the ``pid:uuid`` of earlier versions), is never judged: its lease expires as
before. The boot and namespace tag keeps two containers that share a host name apart (each sees
only its own pids), and a reboot apart from the boot before it.
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import secrets
import socket
from pathlib import Path

PROC = Path("/proc")
UNKNOWN = "?"  # a part that could not be read: such a holder is never judged gone


@functools.cache
def _host(proc: Path = PROC) -> str:
    name = re.sub(r"[^A-Za-z0-9.-]", "-", socket.gethostname())[:64] or "host"
    try:
        boot = (proc / "sys/kernel/random/boot_id").read_text().strip()
        namespace = os.readlink(proc / "self/ns/pid")
    except OSError:
        return f"{name}~{UNKNOWN}"
    return f"{name}~{hashlib.sha256(f'{boot}/{namespace}'.encode()).hexdigest()[:8]}"


def start_time(pid: int, proc: Path = PROC) -> str | None:
    """Field 22 of /proc/PID/stat (the start time in clock ticks since boot); None when no such
    process runs, or it has exited and awaits its parent (a zombie: state Z or X)."""
    try:
        stat = (proc / str(pid) / "stat").read_text()
    except (OSError, ValueError):
        return None
    # The command name (field 2) is in parentheses and may hold spaces or parentheses itself.
    fields = stat[stat.rindex(")") + 2 :].split()
    state, start = fields[0], fields[19]  # fields 3 and 22
    return None if state in {"Z", "X"} else start


@functools.cache
def _process(pid: int) -> str:
    return f"{_host()}/{pid}/{start_time(pid) or UNKNOWN}"


def process_holder() -> str:
    """This process as a lease holder (a forked child is another holder)."""
    return _process(os.getpid())


def instance_holder() -> str:
    """One worker of this process as a single-holder lease's holder."""
    return f"{process_holder()}/{secrets.token_hex(4)}"


def host_prefix() -> str:
    """What every holder of this host begins with."""
    return f"{_host()}/"


def holder_gone(holder: str | None) -> bool:
    """True only when ``holder`` is a process of this host that no longer runs."""
    if not holder:
        return False
    parts = holder.split("/")
    if len(parts) < 3 or parts[0] != _host() or UNKNOWN in (parts[0][-1], parts[2]):
        return False
    if not parts[1].isdigit():
        return False
    return start_time(int(parts[1])) != parts[2]
