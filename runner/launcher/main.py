"""The launcher: the one process that loads and runs a submission. Untrusted by design.

Started as `main()` of this module (`runner.host.executor.launcher_argv`) with `--channel-fd N --workdir DIR
--prebuilt-dir DIR` inside the job's sandbox.
It never sees the seed, the expected outputs or a verdict: the judge (runner/judge/main.py) sends it the
submission, shares input and output buffers it allocated (runner/ipc/shared_buffers.py), and asks for calls one
at a time. Each answer is raw: event times, host times, thread counts, or an error the call raised.

The requests and replies are the typed messages of `runner.ipc.messages` (prepare, load, share, call, time,
threads, warmup, exit).
"""

from __future__ import annotations

import argparse
import logging
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

from contract.wire import OUTPUT_KEEP_BYTES
from runner.ipc import messages
from runner.ipc.channel import Channel, ChannelClosedError
from runner.launcher.capture import OutputCapture


class Launcher:
    """Serves the judge's requests until `exit` or the end of the channel."""

    def __init__(self, channel: Channel, workdir: Path, device: str) -> None:
        self.channel = channel
        self.workdir = workdir
        self.device = device
        self.harness: Any = None
        self._send = channel.send
        self._receive = channel.receive
        self.solution: Any = None
        self.language = "python"
        self.problem: Any = None
        self.dtype = "float32"
        self.arena: Any = None
        self.sets: list[Any] = []
        self.capture: OutputCapture | None = None

    def serve(self) -> None:
        handlers: dict[type, Callable[[Any, list[int]], messages.Reply | tuple[messages.Reply, tuple[int, ...]]]] = {
            messages.Prepare: self.prepare,
            messages.Load: self.load,
            messages.Share: self.share,
            messages.Call: self.call,
            messages.Time: self.time,
            messages.Warmup: self.warmup,
            messages.Threads: self.threads,
            messages.TakeOutput: self.take_output,
            messages.OutputFiles: self.output_files,
        }
        while True:
            try:
                raw, fds = self._receive()
            except ChannelClosedError:
                return
            try:
                request = messages.decode_request(raw)
            except messages.MalformedMessageError as exc:
                self._send(messages.encode_reply(messages.Failed({"code": "internal", "message": str(exc)})))
                continue
            if isinstance(request, messages.Exit):
                return
            passed: tuple[int, ...] = ()
            try:
                answer = handlers[type(request)](request, fds)
                reply, passed = answer if isinstance(answer, tuple) else (answer, ())
            except Exception as exc:
                reply = messages.Failed(self._describe(exc))
            self._send(messages.encode_reply(reply), passed)

    def _describe(self, exc: Exception) -> dict[str, Any]:
        from runner.errors import SubmissionError

        if isinstance(exc, SubmissionError):
            return exc.info().model_dump()
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        if self.language != "cuda" and self.problem is not None:
            from runner.launcher.signature import expected_signature, submission_frames, type_error_message

            explained = type_error_message(exc, expected_signature(self.problem, self.dtype))
            if explained is not None:
                return {"code": "runtime_error", "message": explained, "log": submission_frames(exc, "submission.py")}
        log = traceback.format_exc() if self.language != "cuda" else None
        return {"code": "runtime_error", "message": first, "log": log}

    def prepare(self, _request: messages.Prepare | messages.Load, _fds: list[int]) -> messages.Done:
        """Build the harness: the CUDA context, the flush buffer, the events and their kernels. Asked for once
        the job holds the GPU (a launcher started ahead makes no context while another job is being timed), and
        before the submission is imported (see runner.launcher.harness)."""
        from runner.launcher.harness import Harness

        if self.harness is None:
            self.harness = Harness(self.device)
            self.harness.warm()
        return messages.Done()

    def load(self, request: messages.Load, fds: list[int]) -> messages.Done:
        from contract.wire import JobRequest
        from runner.launcher.loader import load_solution
        from runner.problem_lookup import resolve_problem

        self.prepare(request, fds)
        self.start_capture()
        job = JobRequest.model_validate(request.request)
        self.language = job.language
        self.problem = resolve_problem(job)
        self.dtype = job.dtype
        self.solution = load_solution(job, self.problem, self.workdir, "gpu" if self.device == "cuda" else "cpu")
        return messages.Done()

    def start_capture(self) -> None:
        """From here on the solution's descriptors 1 and 2 are capture files (runner.launcher.capture); the
        launcher's own log goes on to the process's original stderr."""
        if self.capture is not None:
            return
        self.capture = OutputCapture(self.workdir / "output", OUTPUT_KEEP_BYTES)
        for handler in logging.getLogger().handlers:
            if isinstance(handler, logging.StreamHandler):
                handler.setStream(self.capture.log_stream)

    def take_output(self, _request: messages.TakeOutput, _fds: list[int]) -> messages.Printed:
        if self.capture is None:
            return messages.Printed("", "", 0, 0)
        stdout, stderr = self.capture.take()
        return messages.Printed(stdout.text, stderr.text, stdout.cut_bytes, stderr.cut_bytes)

    def output_files(self, _request: messages.OutputFiles, _fds: list[int]) -> tuple[messages.Done, tuple[int, ...]]:
        self.start_capture()
        assert self.capture is not None
        return messages.Done(), self.capture.files

    def share(self, request: messages.Share, fds: list[int]) -> messages.Done:
        import torch

        from runner.ipc.shared_buffers import SharedArena
        from runner.launcher.harness import CallSet

        if len(fds) != 1:
            raise ValueError("a share request must carry one descriptor")
        self.sets = []
        if self.arena is not None:
            self.arena.close()
        self.arena = SharedArena.open(fds[0], request.size, self.device)

        def views(specs: list[list[Any]]) -> list[torch.Tensor]:
            return [self.arena.view(offset, shape, getattr(torch, dtype)) for offset, shape, dtype in specs]

        for spec in request.sets:
            inputs, outputs, snapshots = views(spec["inputs"]), views(spec["outputs"]), views(spec["snapshots"])
            call = self.solution.bind(self.problem, inputs, outputs, request.extras, self.device)
            self.sets.append(CallSet.of(call, outputs, snapshots))
        if self.device == "cuda" and request.reset_l2:
            from runner.timing.gpu import reset_persisting_l2

            reset_persisting_l2()
        return messages.Done()

    def call(self, request: messages.Call, _fds: list[int]) -> messages.Called:
        outcome = self.harness.call(self.sets[request.set])
        return messages.Called(tuple(outcome["threads"]), outcome["returned_tensor"])

    def time(self, request: messages.Time, _fds: list[int]) -> messages.Timed:
        """A batch: one sample per listed set, back to back, each the same as a lone sample would be."""
        run = request.kind == "solution"
        readings = []
        # Threads are counted around the whole batch: a thread started by a call and still alive at its end is
        # caught, and the samples stay free of the counting's own cost.
        before = self.harness.threads()
        for index in request.sets:
            target = self.sets[index]
            if self.device == "cuda":
                raw = self.harness.time_gpu(target, run, request.spin_cycles, request.known_cycles, request.protocol)
            else:
                raw = self.harness.time_cpu(target, run, request.known_cycles)
            readings.append(messages.Reading(**raw))
        return messages.Timed(readings, (before, self.harness.threads()))

    def threads(self, _request: messages.Threads, _fds: list[int]) -> messages.ThreadCount:
        count = self.harness.threads()
        return messages.ThreadCount((count, count))

    def warmup(self, _request: messages.Warmup, _fds: list[int]) -> messages.Done:
        from runner.timing.timers import seed_warmup

        if self.device == "cuda":
            seed_warmup()
        return messages.Done()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="runner.launcher")
    parser.add_argument("--channel-fd", type=int, required=True)
    parser.add_argument("--workdir", type=Path, required=True)
    parser.add_argument("--prebuilt-dir", type=Path, help="compiled libraries from the runner's own nvcc step")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)

    # The slow imports happen before the first request, so a launcher started ahead has done them when its
    # job comes. `is_available` asks the driver without making a context.
    import torch

    import runner.launcher.harness
    import runner.launcher.loader  # noqa: F401
    from problems.registry import builtin_problems
    from runner.host.compile import nvcc_version, use_prebuilt

    # What loading a submission asks for first, found now: the problems (about 0.1 s to import) and nvcc's
    # version (part of a library's cache key; a subprocess).
    builtin_problems()
    nvcc_version()

    device = "cuda" if torch.cuda.is_available() else "cpu"
    use_prebuilt(args.prebuilt_dir)
    channel = Channel.from_fd(args.channel_fd)
    Launcher(channel, args.workdir, device).serve()
    return 0


if __name__ == "__main__":
    sys.exit(main())
