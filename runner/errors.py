"""Typed failures of a submission. Each carries a code, a message that says what to fix, and a tool log."""

from __future__ import annotations

from contract.errors import ErrorCode
from contract.wire import ErrorInfo

MAX_LOG_CHARS = 8000


def trim_log(text: str, limit: int = MAX_LOG_CHARS) -> str:
    """Keep the head and the tail of a long log, where compilers and tracebacks put what matters."""
    text = text.strip()
    if len(text) <= limit:
        return text
    head = limit * 2 // 3
    tail = limit - head
    return f"{text[:head]}\n… [{len(text) - limit} characters cut] …\n{text[-tail:]}"


class SubmissionError(Exception):
    """A submission failed in a way the competitor can act on."""

    code: ErrorCode = "runtime_error"

    def __init__(self, message: str, log: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.log = trim_log(log) if log else None

    def info(self) -> ErrorInfo:
        return ErrorInfo(code=self.code, message=self.message, log=self.log)


class CompileError(SubmissionError):
    code = "compile_error"


class SourceSyntaxError(SubmissionError):
    code = "syntax_error"


class SubmissionImportError(SubmissionError):
    code = "import_error"


class MissingSolutionError(SubmissionError):
    code = "missing_solution"


class SignatureMismatchError(SubmissionError):
    """A Python solution's parameters cannot take the problem's arguments in their order
    (runner/launcher/signature.py)."""

    code = "signature_mismatch"


class WrongAnswerError(SubmissionError):
    """An output did not match the reference: the submission failed, rather than erred."""

    code = "wrong_answer"


class PrecisionError(WrongAnswerError):
    """A ranked run whose compiled code does matrix math in a type below its board's precision policy
    (docs/precision.md): right within the tolerance, and still not ranked beside code that computes in full."""

    code = "precision"


class NoGpuError(SubmissionError):
    code = "no_gpu"


class SolutionRuntimeError(SubmissionError):
    code = "runtime_error"


class UnsupportedDtypeError(SubmissionError):
    code = "unsupported_dtype"


class UnknownProblemCodeError(SubmissionError):
    code = "unknown_problem"


class ImplausibleTimeError(SubmissionError):
    """A measured time that cannot be real: not positive, not finite, or under the physical floor."""

    code = "implausible_time"


class IntegrityError(SubmissionError):
    """The run broke a rule of the measurement: work after the stop event, an output that changed after it,
    a thread left running, or a timer that disagrees with the judge's calibration or its own clock."""

    code = "integrity"


class LauncherLostError(SubmissionError):
    """The process running the solution died or stopped answering; the runner refines this from its exit."""

    code = "crashed"


class CallTimeoutError(SubmissionError):
    """A call of the solution during the benchmark took far longer than its earlier calls: a hang, or a kernel
    that never ends. The job stops at once instead of holding the GPU until the phase deadline."""

    code = "timeout"


class HostTooNoisyError(SubmissionError):
    """The runner's host was too busy to rank a run: its samples stayed disturbed when measured again. Never a
    verdict on the submission: the run can simply be tried again (runner/judge/case_protocol.py)."""

    code = "host_busy"


class BadRequestError(SubmissionError):
    """The job asks for something its problem does not have (a test case past the last one)."""

    code = "bad_request"


class ProfilerUnavailableError(SubmissionError):
    """Mode `profile` on a runner that cannot profile: no GPU, no ncu, or counters restricted to admins."""

    code = "profiler_unavailable"
