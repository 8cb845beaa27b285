"""One line for each step of a run as a server's events tell it, for the front ends that follow one on a line at a
time: the CLI's batch progress and the MCP server's progress notifications."""

from __future__ import annotations

from api.submission_models import SubmissionEventView
from arena.submission_phases import case_line
from core.progress import describe_place
from core.views.result import format_rate


def describe_event(event: SubmissionEventView, name: str = "") -> str | None:
    """One line for a step of a run (None for an event that says nothing new), prefixed with the variant's name
    in a batch."""
    prefix = f"{name}: " if name else ""
    on = f" on runner {event.runner}" if event.runner else ""
    if event.type in ("submitted", "queue") and event.position:
        return f"{prefix}queued at place {describe_place(event.position)}"
    if event.type in ("dispatched", "running"):
        return f"{prefix}{event.type}{on} (attempt {event.attempt})"
    if event.type == "requeued":
        return f"{prefix}requeued at the head of the queue: its runner was lost (attempt {event.attempt})"
    if event.type == "case" and event.case is not None:
        line = case_line(event.case)
        return f"{prefix}{line.strip()}" if line else None
    if event.type == "result" and event.result is not None:
        result = event.result
        unit = "GB/s" if result.score_metric == "gbps" else "GFLOPS"
        score = f" · {format_rate(result.score)} {unit}" if result.score is not None else ""
        why = f" · {result.error.code}: {result.error.message.splitlines()[0][:200]}" if result.error else ""
        return f"{prefix}{result.status}{score}{why}"
    return None
