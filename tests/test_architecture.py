"""Which package may import which: the tree tells the architecture, and these walks keep it true.

- The core (`core/`) is a peer of its front ends: it sees the runner only through `runner.api` (wire models)
  and `runner.client` (the runner-client interface), and knows nothing of the bot, the CLI or the benches.
- The front ends reach runners through the backends in `runner/clients/`, never through the runner's processes.
- The web leaderboard is a front end of its own: it needs neither discord.py (the bot) nor torch (the problems'
  modules), so its host installs `kernel-arena[web]` only.
"""

from __future__ import annotations

import pytest

from tests.import_graph import direct_imports, import_closure, modules_under

RUNNER_CONTRACT = {"runner", "runner.api", "runner.client"}
FRONT_ENDS = ("bot", "arena", "web")


def _runner_modules(reached: set[str]) -> set[str]:
    return {m for m in reached if m == "runner" or m.startswith("runner.")}


@pytest.mark.parametrize("module", modules_under("core"))
def test_the_core_sees_the_runner_only_through_its_api_and_client_interface(module: str) -> None:
    reached = import_closure(module)
    assert not _runner_modules(reached) - RUNNER_CONTRACT, sorted(_runner_modules(reached) - RUNNER_CONTRACT)
    assert not {m for m in reached if m.split(".")[0] in FRONT_ENDS}


def test_the_walk_sees_runner_internals_where_they_are_imported() -> None:
    # The local backend does reach the runner's host code: the check above could fail.
    assert "runner.host.job" in import_closure("runner.clients.local")


def test_the_runner_client_interface_imports_only_the_wire_models() -> None:
    assert _runner_modules(import_closure("runner.client")) == {"runner", "runner.api", "runner.client"}


@pytest.mark.parametrize("front_end", FRONT_ENDS)
def test_front_ends_reach_runners_through_backends_not_their_processes(front_end: str) -> None:
    internals = ("runner.judge", "runner.launcher", "runner.ipc", "runner.timing")
    # The local backend runs jobs on this host, and reaches the judge and launcher through runner.host (as
    # subprocesses); a front end itself imports none of them.
    for module in modules_under(front_end):
        assert not {m for m in direct_imports(module) if m.startswith(internals)}, module


@pytest.mark.parametrize("module", modules_under("web"))
def test_the_web_front_end_imports_neither_the_bot_nor_the_cli(module: str) -> None:
    reached = import_closure(module)
    assert not {m for m in reached if m.split(".")[0] in ("bot", "arena")}, module
