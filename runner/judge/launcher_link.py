"""The judge's handle on the launcher: typed requests over the channel, replies checked, round trips timed.

A reply is untrusted input like any other: a field of the wrong type is a protocol error, an error reply
becomes the SubmissionError it names, and the end of the channel means the launcher died.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from typing import Any

from runner.api import ErrorInfo, JobRequest
from runner.errors import CallTimeoutError, LauncherLostError, SolutionRuntimeError, SubmissionError
from runner.ipc.channel import Channel, ChannelClosedError, ChannelProtocolError

# The daemon's phase deadlines stop a launcher that hangs; this bound only keeps the judge from waiting on a
# launcher that has stopped answering altogether.
REPLY_TIMEOUT_S = 3600.0


@dataclass(frozen=True)
class Reading:
    """One timed sample as the launcher reported it."""

    elapsed_s: float
    covered_s: float | None
    host_span_s: float
    modes: int
    # The host's time inside the call, and whether the GPU had passed START when the call returned (GPU only).
    call_s: float = 0.0
    start_passed: bool | None = None


@dataclass(frozen=True)
class Batch:
    """One batch: its samples, the launcher's thread counts around it, and its time on the judge's clock."""

    readings: list[Reading]
    threads_before: int
    threads_after: int
    wall_s: float


class LauncherLink:
    def __init__(self, channel: Channel) -> None:
        self.channel = channel

    def request(
        self, message: dict[str, Any], fds: tuple[int, ...] = (), timeout_s: float = REPLY_TIMEOUT_S
    ) -> dict[str, Any]:
        try:
            self.channel.send(message, fds)
            reply, extra_fds = self.channel.receive(timeout_s)
        except TimeoutError as exc:
            if timeout_s >= REPLY_TIMEOUT_S:
                raise LauncherLostError("The process running your solution stopped answering.") from exc
            raise CallTimeoutError(
                f"A batch of timed calls did not finish within {timeout_s:.0f} s, far longer than the same calls "
                "took before: the solution hung (a kernel or loop that never ends?). The job was stopped."
            ) from exc
        except (ChannelClosedError, ChannelProtocolError) as exc:
            raise LauncherLostError(
                "The process running your solution ended or stopped answering during a call."
            ) from exc
        for fd in extra_fds:  # nothing should come back this way
            os.close(fd)
        if reply.get("ok") is True:
            return reply
        error = reply.get("error")
        try:
            info = ErrorInfo.model_validate(error)
        except Exception:
            raise SolutionRuntimeError("The solution's process sent an unreadable reply.") from None
        raise _error_for(info)

    def prepare(self) -> None:
        """Have the launcher make its CUDA context and timing harness, before there is a submission to load."""
        self.request({"op": "prepare"})

    def load(self, request: JobRequest) -> None:
        """Hand over the submission without the secrets: no seed, no mode, default measuring."""
        public = request.model_copy(update={"seed": None, "mode": "benchmark", "measure": type(request.measure)()})
        self.request({"op": "load", "request": public.model_dump(mode="json")})

    def share(self, message: dict[str, Any], fd: int, *, reset_l2: bool) -> None:
        self.request({"op": "share", **message, "reset_l2": reset_l2}, (fd,))

    def call(self, set_index: int) -> bool:
        """One untimed call; whether the solution returned a tensor (whose value is never used)."""
        reply = self.request({"op": "call", "set": set_index})
        _threads(reply.get("threads"))
        return reply.get("returned_tensor") is True

    def time(
        self,
        sets: list[int],
        kind: str,
        spin_cycles: int,
        known_cycles: int,
        protocol: str,
        timeout_s: float = REPLY_TIMEOUT_S,
    ) -> Batch:
        """Time one sample per listed set, back to back; CallTimeoutError past `timeout_s`."""
        message = {
            "op": "time",
            "sets": sets,
            "kind": kind,
            "spin_cycles": spin_cycles,
            "known_cycles": known_cycles,
            "protocol": protocol,
        }
        start = time.perf_counter()
        reply = self.request(message, timeout_s=timeout_s)
        wall = time.perf_counter() - start
        raw = reply.get("readings")
        if not isinstance(raw, list) or len(raw) != len(sets) or not all(isinstance(r, dict) for r in raw):
            raise SolutionRuntimeError("The solution's process sent an unreadable reply.")
        before, after = _threads(reply.get("threads"))
        return Batch([_reading(r) for r in raw], before, after, wall)

    def threads(self) -> int:
        """The launcher's thread count now."""
        return _threads(self.request({"op": "threads"}).get("threads"))[1]

    def warmup(self) -> None:
        self.request({"op": "warmup"})

    def close(self) -> None:
        try:
            self.channel.send({"op": "exit"})
        except (ChannelClosedError, OSError):
            pass
        self.channel.close()


def _reading(raw: dict[str, Any]) -> Reading:
    covered = raw.get("covered_s")
    modes = raw.get("modes")
    passed = raw.get("start_passed")
    return Reading(
        elapsed_s=_number(raw.get("elapsed_s")),
        covered_s=None if covered is None else _number(covered),
        host_span_s=_number(raw.get("host_span_s")),
        modes=modes if type(modes) is int else 1,
        call_s=_number(raw.get("call_s", 0.0)),
        start_passed=passed if type(passed) is bool else None,
    )


def _number(value: Any) -> float:
    """A float from the launcher. NaN and infinities pass through: the measurement rejects them by name."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise SolutionRuntimeError("The solution's process reported a time that is not a number.")
    return float(value)


def _threads(value: Any) -> tuple[int, int]:
    if not (isinstance(value, list) and len(value) == 2 and all(type(v) is int for v in value)):
        raise SolutionRuntimeError("The solution's process sent an unreadable reply.")
    return value[0], value[1]


def _error_for(info: ErrorInfo) -> SubmissionError:
    from runner import errors

    for cls in vars(errors).values():
        leaf = isinstance(cls, type) and issubclass(cls, SubmissionError) and cls is not SubmissionError
        if leaf and cls.code == info.code:
            return cls(info.message, log=info.log)
    return SolutionRuntimeError(info.message, log=info.log)
