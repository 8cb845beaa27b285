"""How `arena submit` says a stored submission's progress, one line per phase on stderr, whether it follows the
events from an arena server (`--server`) or from the store (`--fleet`): both are the same events
(`api.submission_models.SubmissionEventView`), said the same way, with each case said as a local run says it.
"""

from __future__ import annotations

import sys

from api.submission_models import CaseProgressView, SubmissionAccepted, SubmissionEventView
from arena.render import ProgressPrinter
from contract.wire import JobEvent, SubmissionResult, TestOutcome
from core.contests.entry import receipt_line
from core.progress import describe_place


class SubmissionPhases:
    """One line per phase on stderr, from the submission's events: the queue place, the runner that took each
    attempt, each case as it finishes (and, at the result, those the stream missed)."""

    def __init__(self, gpu_type: str = "") -> None:
        self.gpu_type = gpu_type
        self._said = ""
        self.cases_said: set[tuple[str, int]] = set()
        """The cases of the current attempt already said live, by (phase, index)."""

    def _say(self, line: str) -> None:
        if line != self._said:
            print(f"  {line}", file=sys.stderr, flush=True)
            self._said = line

    def accepted(self, accepted: SubmissionAccepted) -> None:
        self.gpu_type = accepted.gpu_type
        again = " (answered again: the same submission)" if accepted.duplicate else ""
        self._say(f"recorded as submission #{accepted.id}{again}")
        if (line := receipt_line(accepted.contests)) is not None:
            self._say(line)

    def event(self, event: SubmissionEventView) -> None:
        on = f" on runner {event.runner}" if event.runner else ""
        attempt = f" (attempt {event.attempt})"
        if event.type in ("submitted", "queue") and event.position:
            start = f", starts in ~{event.start_in_s:.0f} s" if event.start_in_s is not None else ""
            self._say(f"queued for pool {self.gpu_type} at place {describe_place(event.position)}{start}")
        elif event.type == "dispatched":
            self._say(f"dispatched{on}{attempt}")
        elif event.type == "running":
            self._say(f"running{on}{attempt}")
        elif event.type == "requeued":
            self.cases_said = set()  # the next attempt runs every case again
            self._say(f"requeued at the head of the queue: its runner was lost{attempt}")
        elif event.type == "case" and event.case is not None:
            line = case_line(event.case)
            if line is not None and (event.case.phase, event.case.index) not in self.cases_said:
                self.cases_said.add((event.case.phase, event.case.index))
                print(line, file=sys.stderr, flush=True)
        elif event.type == "result" and event.result is not None:
            for line in case_lines(event.result, self.cases_said):
                print(line, file=sys.stderr, flush=True)


def case_line(case: CaseProgressView) -> str | None:
    """The line a local run prints for this case as it finishes."""
    if case.phase == "test" and case.passed is not None:
        test = TestOutcome(index=case.index, name=case.name, dims=[], passed=case.passed, message=case.message or "")
        return ProgressPrinter.describe(
            JobEvent(seq=0, type="test_case", index=case.index, count=case.count, test=test)
        )
    if case.phase == "benchmark" and case.timing is not None:
        return ProgressPrinter.describe(
            JobEvent(seq=0, type="benchmark_case", index=case.index, count=case.count, timing=case.timing)
        )
    return None


def case_lines(result: SubmissionResult, said: set[tuple[str, int]] | None = None) -> list[str]:
    """The per-case lines a local run prints while it runs, from the stored result, but for those `said` live."""
    said = said or set()
    events = [
        JobEvent(seq=0, type="test_case", index=i, count=len(result.tests), test=t)
        for i, t in enumerate(result.tests)
        if ("test", i) not in said
    ]
    events += [
        JobEvent(seq=0, type="benchmark_case", index=i, count=len(result.timings), timing=t)
        for i, t in enumerate(result.timings)
        if ("benchmark", i) not in said
    ]
    return [line for line in (ProgressPrinter.describe(e) for e in events) if line]
