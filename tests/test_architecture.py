"""Which package may import which: the tree tells the architecture, and these walks keep it true.

- `contract/` is the bottom of the tree: the names every layer shares, the wire models, the shared errors and the
  runner-client interface. It imports nothing of the project, so every other package may import it.
- The core (`core/`) is a peer of its front ends: it sees runners only through the contract (and the runner's
  timing protocol version, `runner.protocol`), and knows nothing of the bot, the CLI or the benches.
- The front ends reach runners through the backends in `runner/clients/`, never through the runner's processes.
- The web leaderboard is a front end of its own: it needs neither discord.py (the bot) nor torch (the problems'
  modules), so its host installs `kernel-arena[web]` only.
- Inside `runner/`, the folders (its subpackages, and the package's own modules as one more) import one another
  without a cycle, so each can be read, and tested, above the ones it imports.
- `problems/` imports nothing of the project's other packages: the runner and the core import it.
- The names every layer shares (dtypes, languages, modes, timing methods, score metrics, statuses) are listed
  once, in `contract.names`. No other module spells one of those lists out; `problems/`, which may not import the
  contract, keeps its own lists, checked equal to the one list.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping, Set
from itertools import pairwise
from typing import get_args

import pytest

from contract import names
from problems.base import DTYPES as PROBLEM_DTYPES
from problems.base import ScoreMetric as ProblemScoreMetric
from problems.starter import STARTER_LANGUAGES
from tests.import_graph import PROJECT_PACKAGES, direct_imports, import_closure, module_file, modules_under

# runner.protocol is the timing protocol's version, which the boards compare entries with: it reads files, no torch.
CORE_SEES_OF_THE_RUNNER = {"runner", "runner.protocol"}
# The one list of each kind of name, by its name in contract.names.
NAME_LISTS: dict[str, tuple[str, ...]] = {
    "DTYPES": names.DTYPES,
    "LANGUAGES": names.LANGUAGES,
    "LANGUAGE_FILTERS": names.LANGUAGE_FILTERS,
    "MODES": names.MODES,
    "METHODS": names.METHODS,
    "GPU_METHODS": names.GPU_METHODS,
    "SCORE_METRICS": names.SCORE_METRICS,
    "SUBMISSION_STATUSES": names.SUBMISSION_STATUSES,
    "STORED_STATUSES": names.STORED_STATUSES,
}
FRONT_ENDS = ("bot", "arena", "web", "api")


def _runner_modules(reached: set[str]) -> set[str]:
    return {m for m in reached if m == "runner" or m.startswith("runner.")}


@pytest.mark.parametrize("module", modules_under("core"))
def test_the_core_sees_runners_only_through_the_contract(module: str) -> None:
    reached = import_closure(module)
    assert not _runner_modules(reached) - CORE_SEES_OF_THE_RUNNER, sorted(
        _runner_modules(reached) - CORE_SEES_OF_THE_RUNNER
    )
    assert not {m for m in reached if m.split(".")[0] in FRONT_ENDS}


def test_the_walk_sees_runner_internals_where_they_are_imported() -> None:
    # The local backend does reach the runner's internals (one job's run): the check above could fail.
    assert "runner.job.run" in import_closure("runner.clients.local")


@pytest.mark.parametrize("module", modules_under("contract"))
def test_the_contract_imports_nothing_of_the_project_but_itself(module: str) -> None:
    reached = import_closure(module)
    assert {m.split(".")[0] for m in reached} == {"contract"}, sorted(reached)


def test_the_walk_sees_the_contract_where_it_is_imported() -> None:
    # The check above could fail: the walk follows the contract's own imports (the client interface's models).
    assert {"contract.wire", "contract.names", "contract.errors"} <= import_closure("contract.runner_client")


def _runner_folder(module: str) -> str:
    """The folder of a runner module: its subpackage (`runner.host`), or `runner` for the package's own modules
    (runner/*.py). `runner.__main__`, the entry point of `python -m runner` that nothing imports, is a node of its
    own: it starts the daemon, so it stands above every folder."""
    parts = module.split(".")
    path = module_file(module)
    if module == "runner.__main__" or path is None:
        return module
    if len(parts) > 2 or (len(parts) == 2 and path.name == "__init__.py"):
        return ".".join(parts[:2])
    return "runner"


def _runner_folder_imports() -> dict[str, dict[str, set[str]]]:
    """Which runner folder imports which (at the top or inside a function), with the imports behind each edge
    (`a imports b`). Importing a module runs its packages too, so those count as imported."""
    edges: dict[str, dict[str, set[str]]] = {}
    for module in modules_under("runner"):
        source = _runner_folder(module)
        for target in sorted(m for m in direct_imports(module) if m.split(".")[0] == "runner"):
            parts = target.split(".")
            for name in [target, *(".".join(parts[:i]) for i in range(1, len(parts)))]:
                folder = _runner_folder(name)
                if folder == source or (name != target and folder == _runner_folder(target)):
                    continue
                why = f"{module} imports {target}" + ("" if name == target else f", in package {name}")
                edges.setdefault(source, {}).setdefault(folder, set()).add(why)
    return edges


def _cycles(graph: Mapping[str, Set[str]]) -> list[list[str]]:
    """Each cycle of `graph`, once, as its nodes from the first (in sorted order) back to it: for each edge, the
    shortest way back to its start."""
    found: set[tuple[str, ...]] = set()
    for start in sorted(graph):
        for first in sorted(graph[start]):
            paths, todo = {first: [first]}, [first]
            while todo and start not in paths:
                node = todo.pop(0)
                for nxt in sorted(graph.get(node, ())):
                    if nxt not in paths:
                        paths[nxt] = [*paths[node], nxt]
                        todo.append(nxt)
            if start in paths:
                ring = [start, *paths[start][:-1]]
                turn = ring.index(min(ring))
                found.add(tuple(ring[turn:] + ring[:turn]))
    return [[*ring, ring[0]] for ring in sorted(found)]


def test_runner_subpackages_import_one_another_without_cycles() -> None:
    edges = _runner_folder_imports()
    cycles = _cycles({source: set(targets) for source, targets in edges.items()})
    described = [
        " -> ".join(cycle) + "".join(f"\n    {imp}" for a, b in pairwise(cycle) for imp in sorted(edges[a][b]))
        for cycle in cycles
    ]
    assert not described, "runner's folders import one another in a cycle:\n" + "\n".join(described)


def test_the_cycle_search_finds_a_cycle_where_there_is_one() -> None:
    # The check above could fail: a cycle of three is found once, from its first node, and a chain is no cycle.
    graph = {"c": {"a"}, "a": {"b"}, "b": {"c", "d"}, "d": set()}
    assert _cycles(graph) == [["a", "b", "c", "a"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []
    # The folders are those of the tree: a subpackage's modules, the package's own, and the entry point apart.
    assert _runner_folder("runner.host.sandbox") == _runner_folder("runner.host") == "runner.host"
    assert _runner_folder("contract.wire") == _runner_folder("runner") == "runner"
    assert _runner_folder("runner.__main__") == "runner.__main__"


@pytest.mark.parametrize("module", modules_under("problems"))
def test_problems_import_nothing_of_the_runner_or_the_service(module: str) -> None:
    reached = import_closure(module)
    assert not {m for m in reached if m.split(".")[0] != "problems"}, module


def test_the_walk_sees_an_import_of_the_runner_from_problems() -> None:
    # The check above could fail: the runner's judge imports problems, so the walk crosses packages where it should.
    assert "problems.verification" in import_closure("runner.judge.evaluate")


def test_the_protocol_version_imports_only_the_contract() -> None:
    reached = import_closure("runner.protocol")
    assert {m for m in reached if m.split(".")[0] != "contract"} == {"runner", "runner.protocol"}


def test_the_names_import_nothing_of_the_project() -> None:
    assert import_closure("contract.names") == {"contract", "contract.names"}


def _spelled_out_lists(module: str) -> list[tuple[int, str]]:
    """Where `module` spells out one of the name lists: a tuple, list or set of string constants, or a Literal,
    equal as a set to a list of contract.names (its line and the list's name). A mapping from each name to its
    text is no copy of the list, and is not counted."""
    path = module_file(module)
    assert path is not None, module
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Tuple | ast.List | ast.Set):
            items = node.elts
        elif isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id == "Literal":
            items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        else:
            continue
        if len(items) < 2 or not all(isinstance(i, ast.Constant) and isinstance(i.value, str) for i in items):
            continue
        spelled = {i.value for i in items if isinstance(i, ast.Constant)}
        found += [(node.lineno, name) for name, listed in NAME_LISTS.items() if spelled == set(listed)]
    return found


# problems/ may not import the runner: the problems' own lists are checked equal to the one list below.
_NAME_SCAN = [m for package in PROJECT_PACKAGES if package != "problems" for m in modules_under(package)]


@pytest.mark.parametrize("module", [m for m in _NAME_SCAN if m != "contract.names"])
def test_the_name_lists_are_spelled_out_only_in_contract_names(module: str) -> None:
    copies = _spelled_out_lists(module)
    assert not copies, f"{module} spells out {copies} (line, list): import the list from contract.names instead"


def test_the_scan_finds_the_lists_where_they_are_spelled_out() -> None:
    found = {name for _, name in _spelled_out_lists("contract.names")}
    assert found >= {"DTYPES", "LANGUAGES", "MODES", "METHODS", "SCORE_METRICS", "SUBMISSION_STATUSES"}


def test_the_problems_lists_equal_the_one_list() -> None:
    assert PROBLEM_DTYPES == names.DTYPES
    assert STARTER_LANGUAGES == names.LANGUAGES
    assert get_args(ProblemScoreMetric) == names.SCORE_METRICS


def test_each_method_and_mode_has_its_text() -> None:
    from core.views.result import METHOD_LABELS

    assert tuple(METHOD_LABELS) == names.METHODS
    assert tuple(names.MODE_DESCRIPTIONS) == names.MODES
    assert all(len(f"{mode}: {text}") <= 100 for mode, text in names.MODE_DESCRIPTIONS.items())  # Discord's bound


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
