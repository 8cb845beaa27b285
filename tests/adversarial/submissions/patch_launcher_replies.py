# Class: harness_patch
# §6: patching timers, synchronize, the stats code or the result channel, from Python or from native code
# Attack: a targeted patch of the launcher's replies. gc.get_objects() finds the table that maps request types
# (Load, Share, Call, Time, ...) to the launcher's handlers, and its Time handler is wrapped. Requests say what they
# are: a plain solution sample (kind "solution", no known spin) is told apart from a calibration sample (kind "spin",
# or a known spin added inside the window), and only plain samples under 25 µs get their reported time halved. Every
# calibration sample reads true, the added spin still adds its full length, and the judge's wall clock only sees a
# few microseconds. The computation is honest; the small cases look twice as fast.
# Outcome required: rejected (integrity, implausible_time) or timed at its true cost. Calibration samples that the
# launcher cannot tell from plain ones (or a known spin short enough to expose a halved kernel) close this.
import dataclasses
import gc

import torch

SCALE = 0.5
SHORT_S = 25e-6


def _handler_table() -> dict | None:
    for obj in gc.get_objects():
        if isinstance(obj, dict) and obj and all(isinstance(key, type) for key in obj):
            if {"Load", "Share", "Call", "Time"} <= {key.__name__ for key in obj}:
                return obj
    return None


def _plain_samples_shortened(real):
    def handler(request, fds):
        reply = real(request, fds)
        plain = getattr(request, "kind", None) == "solution" and not getattr(request, "known_cycles", 0)
        readings = getattr(reply, "readings", None)
        if not plain or readings is None:
            return reply
        shortened = [
            dataclasses.replace(r, elapsed_s=r.elapsed_s * SCALE) if r.elapsed_s < SHORT_S else r for r in readings
        ]
        return dataclasses.replace(reply, readings=shortened)

    return handler


_table = _handler_table()
if _table is not None:
    (time_request,) = [key for key in _table if key.__name__ == "Time"]
    _table[time_request] = _plain_samples_shortened(_table[time_request])


def solution(input_a: torch.Tensor, input_b: torch.Tensor, output_c: torch.Tensor, n: int) -> None:
    torch.add(input_a, input_b, out=output_c)
