"""The fleet view's GPU types: the pools a one-device submission may name. A runner's rank slots serve rank pools
(`cpux2`) in the dispatcher's pool, but those are reached through a world size, never offered as GPU types: with
one `cpu` pool, `cpu` stays the only type, and so the default. The store is replaced by the two reads the view
makes (its first refresh neither sweeps nor judges silence)."""

from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

import pytest

import core.fleet.view as view_module
from core.dispatch import RunnerPool
from core.fleet import FleetSettings
from core.fleet.view import FleetView
from core.settings import Settings
from core.store.fleet import LiveRunner
from core.submit.service import ArenaService


@dataclass(frozen=True)
class Member:
    """A runner client as the dispatcher's pool holds it: its name, GPU type and slots (it is never called)."""

    name: str
    gpu_type: str
    slots: int


def runner(name: str, gpu_type: str = "cpu", rank_slots: tuple[int, ...] = ()) -> LiveRunner:
    return LiveRunner(
        id=hash(name) % 1000, name=name, gpu_type=gpu_type, url="http://127.0.0.1:1", slots=1, state="active",
        quarantined=False, secret="s" * 32, rank_slots=rank_slots,
    )  # fmt: skip


class FakeFleetStore:
    """The store's live runners and the operator's pools (the join tokens' GPU types), set by the test."""

    def __init__(self) -> None:
        self.live: list[LiveRunner] = []
        self.pools: list[str] = ["cpu"]

    async def live_runners(self, pool: Any, timeout_s: float) -> list[LiveRunner]:
        return list(self.live)

    async def pool_types(self, pool: Any) -> list[str]:
        return list(self.pools)


@pytest.fixture
def fleet(monkeypatch: pytest.MonkeyPatch) -> FakeFleetStore:
    fake = FakeFleetStore()
    reads = SimpleNamespace(live_runners=fake.live_runners, pool_types=fake.pool_types)
    monkeypatch.setattr(view_module, "store", reads)
    return fake


def member(live: LiveRunner) -> Member:
    return Member(live.name, live.gpu_type, live.slots)


def make_view() -> tuple[FleetView, RunnerPool]:
    runners = RunnerPool()
    view = FleetView(None, runners, member, FleetSettings())  # type: ignore[arg-type]
    return view, runners


async def test_the_gpu_types_leave_out_the_rank_pools_the_dispatcher_still_serves(fleet: FakeFleetStore) -> None:
    view, runners = make_view()
    fleet.live = [runner("ranks", rank_slots=(2, 2, 4))]
    await view.refresh()
    # The dispatcher's pool serves the rank pools (the rank-pool dispatch reads it, not the view's types)...
    assert runners.gpu_types() == ["cpu", "cpux2", "cpux4"]
    assert [m.name for m in runners.members("cpux2")] == ["ranks/x2"]
    assert runners.capacity("cpux2") == 2
    # ...while a submission may name only the one-device pool, which is then the default.
    assert view.gpu_types() == ["cpu"]
    # The service the bot builds on the view resolves `/submit` without `gpu` to it.
    service = ArenaService(None, Settings(), view.gpu_types)  # type: ignore[arg-type]
    assert service.default_gpu() == "cpu" and service.resolve_gpu(None) == "cpu"
    await service.aclose()


async def test_a_rank_member_still_finishing_a_job_after_its_runner_left_is_no_gpu_type(
    fleet: FakeFleetStore,
) -> None:
    view, runners = make_view()
    fleet.live = [runner("ranks", rank_slots=(2,))]
    await view.refresh()
    held = runners.acquire("cpux2")
    assert held is not None and held.name == "ranks/x2"
    fleet.live = [runner("plain")]
    await view.refresh()
    assert "cpux2" in runners.gpu_types()  # kept in the pool until its job ends
    assert view.gpu_types() == ["cpu"]


async def test_an_operators_pool_keeps_its_name_and_a_pool_without_runners_is_offered(fleet: FakeFleetStore) -> None:
    view, _ = make_view()
    # A pool an operator made a token for is a one-device pool, whatever its name; one with no runner yet is listed
    # so that its jobs can wait for a runner to join.
    fleet.pools = ["cpu", "cpux2", "h100"]
    fleet.live = [runner("ranks", rank_slots=(2,))]
    await view.refresh()
    assert view.gpu_types() == ["cpu", "cpux2", "h100"]
