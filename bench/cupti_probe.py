"""Probe: do CUPTI kernel timestamps (through torch.profiler) match ncu where CUDA events read +1 µs?

    python bench/cupti_probe.py

Runs the arena protocol (read-flush, spin, events) inside one profiler session per kernel and prints, per
kernel, the median event time and the median CUPTI span of the timed kernel(s).
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch
from torch.profiler import ProfilerActivity, profile

from bench.timing_fidelity import KERNELS
from runner.timing.gpu import ArenaEventTimer

SAMPLES = 50


def probe(index: int) -> None:
    kernel = KERNELS[index]
    calls = kernel.setup(4)
    timer = ArenaEventTimer()
    timer.calibrate(calls[0])
    for c in calls:
        timer(c)
    times: list[float] = []
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for i in range(SAMPLES):
            t = timer(calls[i % len(calls)])
            if t is not None:
                times.append(t * 1e6)
    kernels = sorted(
        (e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA),
        key=lambda e: e.time_range.start,
    )
    spans: list[float] = []
    current: list = []
    for e in kernels:
        name = e.name.lower()
        if "sleep" in name or "spin" in name:
            current = []
            continue
        # The flush is a memset of its output followed by the reduce: both end the sample before them.
        if ("reduce" in name or "memset" in name) and current:
            spans.append(current[-1].time_range.end - current[0].time_range.start)
            current = []
            continue
        if "reduce" in name or "memset" in name:
            continue
        current.append(e)
    if current:
        spans.append(current[-1].time_range.end - current[0].time_range.start)
    durations = [
        e.time_range.end - e.time_range.start
        for e in kernels
        if not any(k in e.name.lower() for k in ("spin", "reduce", "memset"))
    ]
    names = sorted({e.name[:60] for e in kernels})
    print(
        f"{kernel.name}: events median {statistics.median(times):.2f} us, CUPTI span median "
        f"{statistics.median(spans) if spans else float('nan'):.2f} us over {len(spans)} spans; "
        f"median single-kernel duration {statistics.median(durations):.2f} us; kernels: {names}",
        flush=True,
    )


if __name__ == "__main__":
    for i in range(len(KERNELS)):
        probe(i)
