"""Probe: do CUPTI kernel timestamps (through torch.profiler) match ncu where CUDA events read +1 µs?

    python bench/cupti_probe.py

Runs the launcher's own sample (runner/launcher/harness.py, the `arena` method: read-flush, spin, events) in this
process, inside one profiler session per kernel, and prints, per kernel, the median raw event time (before the
judge's event-overhead correction) and the median CUPTI span of the timed kernel(s).
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch
from torch.profiler import ProfilerActivity, profile

from bench.timing_fidelity import KERNELS
from runner.launcher.harness import CallSet, Harness
from runner.timing.gpu import MAX_SPIN_S, covering_spin_s

SAMPLES = 50
# The judge's bound on the SM clock before it measures the spin's rate: at any lower clock a spin only lasts longer.
SPIN_CYCLES_PER_S = 2.0e9


def probe(index: int) -> None:
    kernel = KERNELS[index]
    # No snapshot copies: the probe has no judge to compare them, and they would add copies to the trace.
    targets = [CallSet(call, []) for call in kernel.setup(4)]
    harness = Harness("cuda")
    harness.warm()
    # Sized as the judge sizes it: from the host's time for a sample, here without a spin.
    spans = [harness.time_gpu(t, True, 0, 0, "arena")["host_span_s"] for t in targets]
    spin_s = covering_spin_s(statistics.median(spans[1:]))
    times: list[float] = []
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for i in range(SAMPLES):
            reading = harness.time_gpu(targets[i % len(targets)], True, int(spin_s * SPIN_CYCLES_PER_S), 0, "arena")
            if reading["covered_s"] >= reading["host_span_s"]:
                times.append(reading["elapsed_s"] * 1e6)
            else:  # the judge drops such a sample and, when it recurs, doubles the spin
                spin_s = min(2 * spin_s, MAX_SPIN_S)
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
