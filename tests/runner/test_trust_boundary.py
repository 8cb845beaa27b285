"""The launcher runs next to a stranger's code: nothing it imports, however deep and wherever in a function, may be
the judge's (the inputs' generator, the expected outputs, verification, verdicts, statistics).

The tree says which side a module is on: everything under `runner/launcher/` runs beside the submission, everything
under `runner/judge/` is the judge's. This walks the imports of every launcher module."""

from __future__ import annotations

from tests.import_graph import import_closure, modules_under


def is_judge(module: str) -> bool:
    return module == "runner.judge" or module.startswith("runner.judge.")


def test_nothing_under_the_launcher_imports_the_judge() -> None:
    launcher = modules_under("runner.launcher")
    assert {"runner.launcher.main", "runner.launcher.loader", "runner.launcher.harness"} <= set(launcher)
    for module in launcher:
        reached = sorted(m for m in import_closure(module) if is_judge(m))
        assert not reached, f"{module} reaches the judge's {reached}"


def test_the_check_sees_the_judge_where_it_is_imported() -> None:
    # The same walk from the judge's entry point does reach its pipeline: the check above can fail.
    assert {"runner.judge.evaluate", "runner.judge.case_buffers"} <= import_closure("runner.judge.main")
