"""Shared test configuration: `gpu` tests need CUDA, `nvcc` tests need the CUDA compiler, and the modules of
`tests/tiers.py: SLOW_MODULES` are the `slow` tier that `scripts/test.sh --quick` leaves out."""

from __future__ import annotations

import shutil
from collections.abc import Generator
from functools import cache

import pytest

from tests.tiers import SLOW_MODULES, TESTS


@cache
def cuda_available() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return torch.cuda.is_available()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    no_gpu = pytest.mark.skip(reason="needs a CUDA GPU")
    no_nvcc = pytest.mark.skip(reason="needs nvcc on PATH")
    slow = pytest.mark.slow
    for item in items:
        if item.path.relative_to(TESTS).as_posix() in SLOW_MODULES:
            item.add_marker(slow)
        if "gpu" in item.keywords and not cuda_available():
            item.add_marker(no_gpu)
        if "nvcc" in item.keywords and shutil.which("nvcc") is None:
            item.add_marker(no_nvcc)


AST_RACE = "AST constructor recursion depth mismatch"


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, object, object]:
    """A failure's report, even when CPython 3.11 cannot parse the failing source at that moment.

    pytest reads the source around each traceback entry with `ast.parse`. On CPython 3.11 that parse can raise
    SystemError ("AST constructor recursion depth mismatch", cpython#106905) when other threads of the process
    (the bot's, the runner's) parse or compile at the same time: pytest stops the whole session with an
    INTERNALERROR, and one failing test hides every later result. The race is transient, so the report is
    built once more, and then with Python's own traceback format, which does not parse source."""
    try:
        return (yield)
    except SystemError as exc:
        if AST_RACE not in str(exc):
            raise
    try:
        return pytest.TestReport.from_item_and_call(item, call)
    except SystemError as exc:
        if AST_RACE not in str(exc):
            raise
    item.config.option.tbstyle = "native"
    return pytest.TestReport.from_item_and_call(item, call)
