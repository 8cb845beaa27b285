"""The judge's handle on the launcher: typed requests over the channel, replies checked, round trips timed.

A reply is untrusted input like any other: a field of the wrong type is a protocol error, an error reply
becomes the SubmissionError it names, and the end of the channel means the launcher died.
"""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from contract.wire import OUTPUT_KEEP_BYTES, ErrorInfo, JobRequest
from runner.errors import CallTimeoutError, LauncherLostError, SolutionRuntimeError, SubmissionError
from runner.ipc import messages
from runner.ipc.channel import Channel, ChannelClosedError, ChannelProtocolError
from runner.ipc.messages import Reading

__all__ = ["Batch", "LauncherLink", "Reading"]

UNREADABLE = "The solution's process sent an unreadable reply."

# The daemon's phase deadlines stop a launcher that hangs; this bound only keeps the judge from waiting on a
# launcher that has stopped answering altogether.
REPLY_TIMEOUT_S = 3600.0


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
        self,
        request: messages.Request,
        fds: tuple[int, ...] = (),
        timeout_s: float = REPLY_TIMEOUT_S,
        received: list[int] | None = None,
    ) -> dict[str, Any]:
        """Send one request and return its successful reply's JSON; an error reply raises the SubmissionError it
        names. Descriptors that come back are closed, unless `received` is given to keep them."""
        try:
            self.channel.send(messages.encode_request(request), fds)
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
        for fd in extra_fds:
            if received is not None:
                received.append(fd)
            else:  # nothing should come back this way
                os.close(fd)
        if reply.get("ok") is True:
            return reply
        error = reply.get("error")
        try:
            info = ErrorInfo.model_validate(error)
        except Exception:
            raise SolutionRuntimeError(UNREADABLE) from None
        raise _error_for(info)

    def prepare(self) -> None:
        """Have the launcher make its CUDA context and timing harness, before there is a submission to load."""
        self.request(messages.Prepare())

    def load(self, request: JobRequest) -> None:
        """Hand over the submission without the secrets: no seed, no mode, default measuring."""
        public = request.model_copy(update={"seed": None, "mode": "benchmark", "measure": type(request.measure)()})
        self.request(messages.Load(public.model_dump(mode="json")))

    def share(self, message: dict[str, Any], fd: int, *, reset_l2: bool) -> None:
        share = messages.Share(message["size"], message["sets"], message["extras"], reset_l2)
        self.request(share, (fd,))

    def call(self, set_index: int) -> bool:
        """One untimed call; whether the solution returned a tensor (whose value is never used)."""
        with _readable():
            return messages.decode_called(self.request(messages.Call(set_index))).returned_tensor

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
        request = messages.Time(sets, kind, spin_cycles, known_cycles, protocol)  # type: ignore[arg-type]
        start = time.perf_counter()
        reply = self.request(request, timeout_s=timeout_s)
        wall = time.perf_counter() - start
        with _readable():
            timed = messages.decode_timed(reply, len(sets))
        return Batch(timed.readings, timed.threads[0], timed.threads[1], wall)

    def threads(self) -> int:
        """The launcher's thread count now."""
        with _readable():
            return messages.decode_thread_count(self.request(messages.Threads())).threads[1]

    def output(self, timeout_s: float) -> messages.Printed:
        """What the solution printed since the last call (the phase that just ended), cut to the kept bytes."""
        try:
            reply = self.request(messages.TakeOutput(), timeout_s=timeout_s)
        except CallTimeoutError:
            raise CallTimeoutError(
                f"The solution's process did not report what it printed within {timeout_s:.0f} s (a flush of its "
                "output that never ends?). The job was stopped."
            ) from None
        with _readable():
            return messages.decode_printed(reply, OUTPUT_KEEP_BYTES)

    def output_files(self) -> tuple[int, int] | None:
        """The launcher's capture files (stdout's, stderr's), opened here too: two regular files, or None (and
        nothing kept) when it sent anything else."""
        received: list[int] = []
        try:
            self.request(messages.OutputFiles(), received=received)
        finally:
            regular = len(received) == 2 and all(stat.S_ISREG(os.fstat(fd).st_mode) for fd in received)
            if not regular:
                for fd in received:
                    os.close(fd)
        return (received[0], received[1]) if regular else None

    def warmup(self) -> None:
        self.request(messages.Warmup())

    def close(self) -> None:
        try:
            self.channel.send(messages.encode_request(messages.Exit()))
        except (ChannelClosedError, OSError):
            pass
        self.channel.close()


@contextmanager
def _readable() -> Iterator[None]:
    """A reply that does not parse is the submission's process misbehaving, reported as such."""
    try:
        yield
    except messages.MalformedMessageError as exc:
        raise SolutionRuntimeError(f"{UNREADABLE} ({exc})") from None


def _error_for(info: ErrorInfo) -> SubmissionError:
    from runner import errors

    for cls in vars(errors).values():
        leaf = isinstance(cls, type) and issubclass(cls, SubmissionError) and cls is not SubmissionError
        if leaf and cls.code == info.code:
            return cls(info.message, log=info.log)
    return SolutionRuntimeError(info.message, log=info.log)
