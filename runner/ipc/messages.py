"""The judge↔launcher messages, typed: one class per request, one per reply, and their JSON forms.

The judge sends requests and the launcher answers each with one reply. A reply comes from the process that runs
a stranger's code, so `decode_*` check every field's type and raise MalformedMessageError on anything else; the
judge turns that into a runtime error of the submission. Requests are checked the same way on the launcher's
side, which keeps both ends honest about the protocol.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Any, ClassVar, Literal


class MalformedMessageError(ValueError):
    """A message that is not one of this protocol's, or has a field of the wrong type."""


# --- requests (judge → launcher) ---


@dataclass(frozen=True)
class Prepare:
    """Make the CUDA context and the timing harness, before there is a submission to load."""

    op: ClassVar[str] = "prepare"


@dataclass(frozen=True)
class Load:
    """Load the submission: the job's request without its secrets (no seed, default measuring)."""

    op: ClassVar[str] = "load"
    request: dict[str, Any]


@dataclass(frozen=True)
class Share:
    """Map the shared buffers (the descriptor rides with the message) and bind one call per input set."""

    op: ClassVar[str] = "share"
    size: int
    sets: list[dict[str, list[Any]]]
    extras: list[Any]
    reset_l2: bool


@dataclass(frozen=True)
class Call:
    """One untimed call on an input set (the test phase)."""

    op: ClassVar[str] = "call"
    set: int


@dataclass(frozen=True)
class Time:
    """A batch: one timed sample per listed set, back to back. `kind` "spin" puts the known spin (or, at 0
    cycles, the empty kernel) in the solution's place; `protocol` names the timing method."""

    op: ClassVar[str] = "time"
    sets: list[int]
    kind: Literal["solution", "spin"]
    spin_cycles: int
    known_cycles: int
    protocol: str


@dataclass(frozen=True)
class Threads:
    """The launcher's thread count now."""

    op: ClassVar[str] = "threads"


@dataclass(frozen=True)
class Warmup:
    """The seed method's warm-up (ten large matmuls on the GPU)."""

    op: ClassVar[str] = "warmup"


@dataclass(frozen=True)
class TakeOutput:
    """What the solution printed since the last such request (a phase's end): its first bytes per stream."""

    op: ClassVar[str] = "output"


@dataclass(frozen=True)
class OutputFiles:
    """The capture files' descriptors, sent with the reply: the judge reads what is left in them itself when the
    launcher dies, since a dead launcher reports nothing."""

    op: ClassVar[str] = "output_files"


@dataclass(frozen=True)
class Exit:
    """The job is over: the launcher returns."""

    op: ClassVar[str] = "exit"


Request = Prepare | Load | Share | Call | Time | Threads | Warmup | TakeOutput | OutputFiles | Exit
REQUESTS: dict[str, type[Request]] = {
    cls.op: cls for cls in (Prepare, Load, Share, Call, Time, Threads, Warmup, TakeOutput, OutputFiles, Exit)
}


# --- replies (launcher → judge) ---


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
class Done:
    """A request that needs no answer but success (prepare, load, share, warmup)."""


@dataclass(frozen=True)
class Called:
    threads: tuple[int, int]
    returned_tensor: bool


@dataclass(frozen=True)
class Timed:
    readings: list[Reading]
    threads: tuple[int, int]


@dataclass(frozen=True)
class ThreadCount:
    threads: tuple[int, int]


@dataclass(frozen=True)
class Printed:
    """The answer to TakeOutput: each stream's first bytes (decoded) and the count of bytes cut after them."""

    stdout: str
    stderr: str
    stdout_cut: int
    stderr_cut: int


@dataclass(frozen=True)
class Failed:
    """The request failed; `error` is an ErrorInfo's fields (code, message, log)."""

    error: dict[str, Any] = field(default_factory=dict)


Reply = Done | Called | Timed | ThreadCount | Printed | Failed


# --- JSON forms ---


def encode_request(request: Request) -> dict[str, Any]:
    return {"op": request.op, **asdict(request)}


def decode_request(message: dict[str, Any]) -> Request:
    cls = REQUESTS.get(str(message.get("op")))
    if cls is None:
        raise MalformedMessageError(f"unknown request {message.get('op')!r}")
    values = {f.name: message.get(f.name) for f in fields(cls)}
    checks: dict[str, type | tuple[type, ...]] = {
        "request": dict,
        "size": int,
        "sets": list,
        "extras": list,
        "reset_l2": bool,
        "set": int,
        "spin_cycles": int,
        "known_cycles": int,
        "protocol": str,
        "kind": str,
    }
    for name, value in values.items():
        wanted = checks.get(name)
        if wanted is not None and (not isinstance(value, wanted) or (wanted is int and isinstance(value, bool))):
            raise MalformedMessageError(f"field {name} of a {cls.op} request is {type(value).__name__}")
    request = cls(**values)
    if isinstance(request, Time) and (request.kind not in ("solution", "spin") or not _ints(request.sets)):
        raise MalformedMessageError("a time request needs a kind and a list of set indices")
    return request


def encode_reply(reply: Reply) -> dict[str, Any]:
    if isinstance(reply, Failed):
        return {"ok": False, "error": reply.error}
    body = asdict(reply)
    if "threads" in body:
        body["threads"] = list(body["threads"])
    return {"ok": True, **body}


def decode_called(raw: dict[str, Any]) -> Called:
    return Called(_threads(raw.get("threads")), raw.get("returned_tensor") is True)


def decode_timed(raw: dict[str, Any], samples: int) -> Timed:
    readings = raw.get("readings")
    if not isinstance(readings, list) or len(readings) != samples or not all(isinstance(r, dict) for r in readings):
        raise MalformedMessageError("a time reply needs one reading per sample")
    return Timed([_reading(r) for r in readings], _threads(raw.get("threads")))


def decode_thread_count(raw: dict[str, Any]) -> ThreadCount:
    return ThreadCount(_threads(raw.get("threads")))


def decode_printed(raw: dict[str, Any], keep: int) -> Printed:
    """The launcher's report of what the solution printed. Its process may be the solution's to command, so
    the texts are cut to `keep` characters here whatever it sent, and what was cut is counted as well."""
    texts: list[str] = []
    cuts: list[int] = []
    for stream in ("stdout", "stderr"):
        text, cut = raw.get(stream), raw.get(f"{stream}_cut")
        if not isinstance(text, str) or type(cut) is not int or cut < 0:
            raise MalformedMessageError(f"an output reply needs {stream} as text and a count of bytes cut")
        texts.append(text[:keep])
        cuts.append(cut + len(text[keep:].encode("utf-8", "replace")))
    return Printed(texts[0], texts[1], cuts[0], cuts[1])


def _ints(values: Any) -> bool:
    return isinstance(values, list) and all(type(v) is int for v in values)


def _threads(value: Any) -> tuple[int, int]:
    if not (isinstance(value, list) and len(value) == 2 and _ints(value)):
        raise MalformedMessageError("thread counts are two integers")
    return value[0], value[1]


def _number(value: Any) -> float:
    """A float from the launcher. NaN and infinities pass through: the measurement rejects them by name."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise MalformedMessageError("a reported time is not a number")
    return float(value)


def _reading(raw: dict[str, Any]) -> Reading:
    covered = raw.get("covered_s")
    modes = raw.get("modes")
    passed = raw.get("start_passed")
    return Reading(
        elapsed_s=_number(raw.get("elapsed_s")),
        covered_s=None if covered is None else _number(covered),
        host_span_s=_number(raw.get("host_span_s")),
        # A count that is not an integer is read as "a mode was left active": the judge rejects it by name.
        modes=modes if type(modes) is int else 1,
        call_s=_number(raw.get("call_s", 0.0)),
        start_passed=passed if type(passed) is bool else None,
    )
