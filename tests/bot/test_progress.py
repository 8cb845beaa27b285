"""The Discord-free side of live progress: the event hub, the folded state and the edit throttle."""

from __future__ import annotations

import asyncio

from contract.wire import JobEvent
from core.progress import EditThrottle, ProgressHub, ProgressState


def event(seq: int, kind: str = "compiling", **kw: object) -> JobEvent:
    return JobEvent(seq=seq, type=kind, **kw)  # type: ignore[arg-type]


async def test_events_before_subscribing_are_replayed_then_live_ones_follow() -> None:
    hub = ProgressHub()
    await hub.on_event(1, event(1, "accepted"))
    await hub.on_event(2, event(1, "accepted"))
    async with hub.subscribe(1) as subscription:
        await hub.on_event(1, event(2))
        assert [e.seq for e in subscription.drain()] == [1, 2]
        assert await subscription.next(0.01) is None
        await hub.on_event(1, event(3))
        assert (await subscription.next(0)).seq == 3  # type: ignore[union-attr]
    await hub.on_event(1, event(4))  # nobody follows any more: kept for a later subscriber
    assert [e.seq for e in hub.subscribe(1).drain()] == [4]
    assert [e.seq for e in hub.subscribe(2).drain()] == [1]


async def test_the_backlog_is_bounded() -> None:
    hub = ProgressHub(keep_submissions=2, keep_events=3)
    for submission in range(5):
        for seq in range(1, 6):
            await hub.on_event(submission, event(seq))
    assert hub.subscribe(0).drain() == []
    assert [e.seq for e in hub.subscribe(4).drain()] == [3, 4, 5]


def test_state_reads_like_the_job_moves_and_restarts_on_a_retry() -> None:
    state = ProgressState(queue_position=2)
    assert state.status == "⏳ Queued: position 2"
    state.apply(event(1, "accepted", message="CPU (x86_64)"))
    assert state.status == "🚀 Starting on CPU (x86_64)" and state.queue_position is None
    state.apply(event(2, "compiling"))
    assert state.status == "🛠️ Compiling on CPU (x86_64)"
    state.apply(event(3, "compiled"))
    assert state.status == "🧪 Testing on CPU (x86_64)"
    state.apply(event(4, "benchmark_case", index=1, count=3))
    assert state.status == "⏱️ Benchmark case 2/3 on CPU (x86_64)"
    state.apply(event(1, "accepted", message="CPU (x86_64)"))  # the dispatcher retried elsewhere
    assert state.attempt == 2 and [e.seq for e in state.events] == [1]
    assert state.status.endswith("(attempt 2)")
    state.apply(event(2, "done"))
    assert state.done and state.status == "📝 Recording the result"


def test_a_profile_reads_as_profiling_its_case() -> None:
    state = ProgressState()
    state.apply(event(1, "accepted", message="NVIDIA H100 80GB HBM3"))
    state.apply(event(2, "test_case", index=3, count=4))
    state.apply(event(3, "benchmark_case", phase="profile", index=3, message="profiling case m=4096,n=4096,k=4096"))
    assert state.status == "🔬 Profiling case m=4096,n=4096,k=4096 under Nsight Compute on NVIDIA H100 80GB HBM3"


def test_throttle_allows_one_edit_per_interval() -> None:
    throttle = EditThrottle(1.0)
    assert throttle.wait_s(100.0) == 0.0
    throttle.mark(100.0)
    assert throttle.wait_s(100.25) == 0.75
    assert throttle.wait_s(101.5) == 0.0


async def test_a_subscriber_cancelled_as_an_event_arrives_stops() -> None:
    # The tracker follows each live message in a loop over `next`; the bot's shutdown cancels it, often just as an
    # event comes in. On Python 3.11 `asyncio.wait_for` returns the event instead of raising when both land
    # together, and the loop would go on.
    hub = ProgressHub()
    subscription = hub.subscribe(1)

    async def follow() -> None:
        while True:
            await subscription.next(60)

    task = asyncio.create_task(follow())
    await asyncio.sleep(0.01)  # waiting in `next`
    await hub.on_event(1, event(1, "accepted"))
    task.cancel()
    done, _ = await asyncio.wait({task}, timeout=30)
    if not done:
        task.cancel()  # once more, so that nothing is left running
        await asyncio.wait({task}, timeout=30)
    assert task in done and task.cancelled(), "the cancel was lost"


def test_a_queued_submission_says_when_it_should_start() -> None:
    state = ProgressState(queue_position=3, start_in_s=150.0)
    assert state.status == "⏳ Queued: position 3 · starts in about 3 minutes"
    state.start_in_s = 4.0
    assert state.status == "⏳ Queued: position 3 · starts in a few seconds"
    state.start_in_s = None  # nothing finished yet on this GPU type: no guess
    assert state.status == "⏳ Queued: position 3"
