"""Shared test configuration: `gpu` tests need CUDA, `nvcc` tests need the CUDA compiler."""

from __future__ import annotations

import shutil
from functools import cache

import pytest


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
    for item in items:
        if "gpu" in item.keywords and not cuda_available():
            item.add_marker(no_gpu)
        if "nvcc" in item.keywords and shutil.which("nvcc") is None:
            item.add_marker(no_nvcc)
