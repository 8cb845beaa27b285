"""The slow tier (tests/tiers.py SLOW_MODULES) names test modules that exist: a module renamed or removed must
leave the list, or `scripts/test.sh --quick` would quietly run what it meant to leave out."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.tiers import SLOW_MODULES, TESTS


@pytest.mark.parametrize("module", sorted(SLOW_MODULES))
def test_every_slow_module_is_a_test_module_of_the_tree(module: str) -> None:
    path = TESTS / module
    assert path.is_file(), f"tests/tiers.py lists {module} in SLOW_MODULES, but tests/{module} does not exist"
    assert Path(module).name.startswith("test_") and "def test_" in path.read_text(encoding="utf-8")


def test_the_quick_tier_keeps_the_unit_tests_and_the_architecture_check() -> None:
    assert "test_architecture.py" not in SLOW_MODULES
    assert not any(m.startswith(("core/", "measure/")) for m in SLOW_MODULES)
