"""Where a bench's CPU goes: CPU seconds of process trees and of the whole machine, read from /proc.

A process's seconds are its user and system time and those of its children it has reaped, so that work done in a
process that ended during the window (a PostgreSQL backend that closed, a job's subprocess) stays counted, in its
parent's total."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path


def processes() -> dict[int, tuple[int, float]]:
    """{pid: (parent pid, CPU seconds)} of every process now; {} where /proc is missing."""
    tick = os.sysconf("SC_CLK_TCK")
    table = {}
    proc = Path("/proc")
    if not proc.is_dir():
        return table
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            raw = (entry / "stat").read_text()
        except OSError:
            continue  # it ended meanwhile
        fields = raw[raw.rindex(")") + 2 :].split()  # after the command name, which may hold spaces
        table[int(entry.name)] = (int(fields[1]), sum(int(f) for f in fields[11:15]) / tick)
    return table


def tree_cpu_s(roots: Iterable[int], table: dict[int, tuple[int, float]] | None = None) -> float:
    """CPU seconds used so far by the processes `roots` and all their descendants."""
    table = processes() if table is None else table
    children: dict[int, list[int]] = {}
    for pid, (parent, _) in table.items():
        children.setdefault(parent, []).append(pid)
    seen: set[int] = set()
    stack = [r for r in roots if r in table]
    while stack:
        pid = stack.pop()
        if pid not in seen:
            seen.add(pid)
            stack += children.get(pid, [])
    return sum(table[pid][1] for pid in seen)


def machine_busy_s() -> float:
    """CPU seconds the whole machine spent busy (all but idle and iowait) since boot."""
    values = [int(v) for v in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    return (sum(values) - values[3] - values[4]) / os.sysconf("SC_CLK_TCK")
