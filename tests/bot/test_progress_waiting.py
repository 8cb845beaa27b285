"""What a live message says while no runner of its GPU type answers."""

from __future__ import annotations

import time

from contract.wire import JobEvent
from core.progress import ProgressHub, ProgressState


def test_the_hub_knows_since_when_a_gpu_type_has_no_runner_answering() -> None:
    hub = ProgressHub()
    assert hub.runner_outage_s("h100") is None
    hub.on_runner_state("h100", time.monotonic() - 90)
    outage = hub.runner_outage_s("h100")
    assert outage is not None and outage >= 90
    assert hub.runner_outage_s("a100") is None, "other GPU types are not affected"
    hub.on_runner_state("h100", None)
    assert hub.runner_outage_s("h100") is None


def test_a_waiting_job_says_which_runner_it_waits_for_and_for_how_long() -> None:
    state = ProgressState(queue_position=1, gpu_type="h100")
    assert state.status == "⏳ Queued: position 1"
    state.runner_outage_s = 20.0
    assert state.status == "⏸️ Waiting for the `h100` runner to come back"
    state.runner_outage_s = 185.0
    assert state.status == "⏸️ Waiting for the `h100` runner to come back (no answer for 3 min)"
    state.apply(JobEvent(seq=1, type="accepted", message="Test GPU"))
    assert state.status.startswith("⏸️ Waiting"), "a running job whose runner went away waits too"
    state.runner_outage_s = None
    assert state.status == "🚀 Starting on Test GPU"
    state.apply(JobEvent(seq=2, type="done"))
    state.runner_outage_s = 30.0
    assert not state.status.startswith("⏸️"), "a finished job waits for nothing"
