# Class: stream_or_thread
# §6: work on another stream or host thread, finishing after the stop event
# Attack: hides the work after STOP and forges the evidence. When the call stack says the call is timed, the matmul
# runs on a non-blocking side stream that starts only once the timed window has ended, and afterwards copies its
# output into the launcher's snapshot buffer of that output as well (found once through gc.get_objects(): the
# harness keeps outputs and snapshots side by side), after the harness's own snapshot copy. "Snapshot == output"
# then holds bit for bit. Inside the window there is only a sleep kernel of 90 % of the physical floor, so the
# reported time stays plausible; cases whose real cost would show on the judge's wall clock (over ~1 ms) are
# computed honestly, as are untimed (checked) calls.
# Outcome required: rejected (integrity, implausible_time, wrong_answer). The snapshot must be out of the
# submission's reach, or the hidden work must show on the judge's own clock.
import dataclasses
import gc
import sys

import torch

CEILING_FLOPS = 494.7e12  # float32 ceiling of an H100 as the runner's floor uses it (TF32 tensor cores)
BANDWIDTH_BYTES_PER_S = 3.35e12
FLOOR_SHARE = 0.9  # the runner rejects only times under 80 % of its floor
SLEEP_CYCLES_PER_S = 2.0e9
SETTLE_CYCLES = 60_000  # ~30 µs on the side stream: the harness's own snapshot copy lands first
HIDE_AT_MOST_FLOPS = 2 * 2048**3  # hiding more would exceed the judge's wall-clock allowance

_side: torch.cuda.Stream | None = None
_snapshots: dict[int, torch.Tensor | None] = {}


def _being_timed() -> bool:
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_name.startswith("time"):
            return True
        frame = frame.f_back
    return False


def _snapshot_of(output: torch.Tensor) -> torch.Tensor | None:
    key = output.data_ptr()
    if key not in _snapshots:
        _snapshots[key] = None
        for obj in gc.get_objects():
            if not dataclasses.is_dataclass(obj) or isinstance(obj, type):
                continue
            outputs, snapshots = getattr(obj, "outputs", None), getattr(obj, "snapshots", None)
            if not isinstance(outputs, list | tuple) or not isinstance(snapshots, list | tuple):
                continue
            for candidate, snapshot in zip(outputs, snapshots, strict=False):
                if isinstance(candidate, torch.Tensor) and candidate.data_ptr() == key:
                    _snapshots[key] = snapshot
    return _snapshots[key]


def solution(input_a: torch.Tensor, input_b: torch.Tensor, output_c: torch.Tensor, m: int, n: int, k: int) -> None:
    global _side
    flops = 2 * m * n * k
    snapshot = _snapshot_of(output_c) if _being_timed() and flops <= HIDE_AT_MOST_FLOPS else None
    if snapshot is None:
        torch.matmul(input_a, input_b, out=output_c)
        return
    if _side is None:
        _side = torch.cuda.Stream()
    floor_s = max(flops / CEILING_FLOPS, 4 * (m * k + k * n + m * n) / BANDWIDTH_BYTES_PER_S)
    torch.cuda._sleep(int(FLOOR_SHARE * floor_s * SLEEP_CYCLES_PER_S))  # the whole timed window
    window_over = torch.cuda.Event()
    window_over.record(torch.cuda.current_stream())
    with torch.cuda.stream(_side):
        _side.wait_event(window_over)
        torch.cuda._sleep(SETTLE_CYCLES)
        torch.matmul(input_a, input_b, out=output_c)
        snapshot.copy_(output_c)
