# Class: harness_patch
# §6: patching timers, synchronize, the stats code or the result channel, from Python or from native code
# Attack: a targeted patch of the launcher's replies. gc.get_objects() finds the table that maps request names
# ("load", "share", "call", "time", ...) to handlers, and its "time" handler is wrapped. Requests say what they are:
# a plain solution sample (kind "solution", no known spin) is told apart from a calibration sample (kind "spin", or
# a known spin added inside the window), and only plain samples under 25 µs get their reported time halved. Every
# calibration sample reads true, the added spin still adds its full length, and the judge's wall clock only sees a
# few microseconds. The computation is honest; the small cases look twice as fast.
# Outcome required: rejected (integrity, implausible_time) or timed at its true cost. Calibration samples that the
# launcher cannot tell from plain ones (or a known spin short enough to expose a halved kernel) close this.
import gc

import torch

SCALE = 0.5
SHORT_S = 25e-6


def _request_table() -> dict | None:
    for obj in gc.get_objects():
        if isinstance(obj, dict) and {"load", "share", "call", "time"} <= obj.keys():
            if all(callable(handler) for handler in obj.values()):
                return obj
    return None


def _plain_samples_shortened(real):
    def handler(message, fds):
        reply = real(message, fds)
        elapsed = reply.get("elapsed_s") if isinstance(reply, dict) else None
        plain = message.get("kind") == "solution" and not message.get("known_cycles")
        if plain and isinstance(elapsed, float) and elapsed < SHORT_S:
            reply["elapsed_s"] = elapsed * SCALE
        return reply

    return handler


_table = _request_table()
if _table is not None:
    _table["time"] = _plain_samples_shortened(_table["time"])


def solution(input_a: torch.Tensor, input_b: torch.Tensor, output_c: torch.Tensor, n: int) -> None:
    torch.add(input_a, input_b, out=output_c)
