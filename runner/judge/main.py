"""The judge process: evaluates one job against a launcher and writes NDJSON events to a dedicated pipe.

Started as `main()` of this module (`runner.host.executor.judge_argv`) with `--request FILE --workdir DIR
--events-fd N --channel-fd M`. The judge runs
only the runner's code and the problem's: it generates inputs from the job's secret seed, keeps the expected
outputs, verifies and computes the statistics (runner.judge.evaluate). The submission runs in the launcher at the
other end of the channel (runner.launcher.main), in its own sandbox, and never sees the request file.
Results travel only on the events pipe, never on stdout, so nothing printed can forge them.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from pathlib import Path

from contract.precision import SassAudit
from contract.wire import JobEvent, JobRequest, MeasuredPeaks


class Gate:
    """The runner's signals on the wait socket (`runner.host.executor.WarmWorker`): `go`, then `built`, then, where
    a precision audit follows, `audited` (the compiled code's SASS read, `runner.host.sass_audit`). For a Python
    run on a GPU the judge first answers `tested`: the cubins Triton compiled exist only once the tests ran."""

    def __init__(self, fd: int | None) -> None:
        self._pipe = os.fdopen(fd, "rb") if fd is not None else None

    def tell(self, signal: bytes) -> bool:
        """Send `signal` to the runner; False when the gate is closed (no audit follows, or the job is ending)."""
        if self._pipe is None:
            return False
        try:
            os.write(self._pipe.fileno(), signal + b"\n")
        except OSError:
            self._pipe.close()  # the runner closed its end: nothing more comes
            self._pipe = None
            return False
        return True

    def passed(self, signal: bytes, *, last: bool = False) -> bool:
        """Block until the runner sends `signal`; False when it closed the gate instead (the job ended). `last`:
        no signal follows, so the pipe is closed."""
        if self._pipe is None:
            return True  # started for a job whose submission is ready
        passed = self._pipe.readline().strip() == signal
        if last or not passed:
            self._pipe.close()
            self._pipe = None
        return passed


def _wait_for_job(gate: Gate) -> bool:
    """Do the slow start-up now (torch, the problems), then block until the runner sends `go`: the request
    file is in place by then. False when the runner dropped this judge instead. No CUDA context is made
    before `go`: a judge started ahead may wait while another job is being timed on the same GPU."""
    import torch  # noqa: F401

    import runner.judge.evaluate  # noqa: F401
    from problems.registry import builtin_problems

    builtin_problems()
    return gate.passed(b"go")


def _read_peaks(path: Path | None) -> MeasuredPeaks | None:
    """The runner writes the file beside the request when it has measured this GPU; without it the physical
    floor uses the datasheet alone."""
    if path is None or not path.is_file():
        return None
    return MeasuredPeaks.model_validate_json(path.read_text(encoding="utf-8"))


class GateAudit:
    """The precision audit through the gate (`runner.judge.evaluate.AuditSource`): `ask` tells the runner that the
    tests passed (a Python run, whose cubins the runner reads only then; a CUDA build's audit needs no asking),
    `read` waits until the runner says the audit is written. None when the gate closed first (the job is ending),
    or no file came (no Triton cubin to read, or a judge run by hand)."""

    def __init__(self, gate: Gate, path: Path | None, *, tested: bool) -> None:
        self.gate, self.path, self.tested = gate, path, tested
        self.asked = not tested

    def ask(self) -> None:
        if self.tested:
            self.asked = self.gate.tell(b"tested")

    def read(self) -> SassAudit | None:
        if not self.asked or not self.gate.passed(b"audited", last=True):
            return None
        if self.path is None or not self.path.is_file():
            return None
        return SassAudit.model_validate_json(self.path.read_text(encoding="utf-8"))


def audits(request: JobRequest) -> bool:
    """Whether a precision audit may follow `built` on the gate: a CUDA build's, and that of the cubins Triton
    compiles for a Python run that may get a GPU. A runner with no GPU to give closes the gate after `built`, and
    the judge, on the CPU then, asks nothing more (`runner.judge.evaluate._audit_precision`)."""
    return request.language == "cuda" or request.device_kind != "cpu"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="runner.judge")
    parser.add_argument("--request", type=Path, required=True)
    parser.add_argument("--workdir", type=Path, required=True)
    parser.add_argument("--events-fd", type=int, required=True)
    parser.add_argument("--channel-fd", type=int, required=True, help="the judge's end of the launcher channel")
    parser.add_argument("--peaks", type=Path, help="the rates measured on this GPU (MeasuredPeaks JSON), if any")
    parser.add_argument("--sass-audit", type=Path, help="where the runner writes the CUDA build's precision audit")
    parser.add_argument("--wait-fd", type=int, help="started ahead: prepare, then wait for `go` on this fd")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    gate = Gate(args.wait_fd)
    if not _wait_for_job(gate):
        return 0

    request = JobRequest.model_validate_json(args.request.read_text(encoding="utf-8"))
    peaks = _read_peaks(args.peaks)
    pipe = os.fdopen(args.events_fd, "w", buffering=1, encoding="utf-8")

    def send(event: JobEvent) -> None:
        pipe.write(event.model_dump_json() + "\n")
        pipe.flush()

    from runner.ipc.channel import Channel
    from runner.judge.evaluate import evaluate
    from runner.judge.launcher_link import LauncherLink

    link = LauncherLink(Channel.from_fd(args.channel_fd))
    try:
        audited = audits(request)
        tested = request.language != "cuda"
        evaluate(
            request,
            args.workdir,
            send,
            link,
            peaks,
            ready=lambda: gate.passed(b"built", last=not audited),
            audit=GateAudit(gate, args.sass_audit, tested=tested) if audited else None,
        )
    finally:
        link.close()
        pipe.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
