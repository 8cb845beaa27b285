"""The few CUDA driver calls the distributed ranks make themselves (torch offers no API for them), through ctypes
on `libcuda.so.1`, with a typed error for a failed call."""

from __future__ import annotations

import ctypes
from functools import cache
from typing import Any


class DriverError(RuntimeError):
    """A CUDA driver (or NCCL) call failed, or the library is missing."""


@cache
def driver() -> ctypes.CDLL:
    try:
        return ctypes.CDLL("libcuda.so.1")
    except OSError as exc:
        raise DriverError(f"the CUDA driver library could not be loaded: {exc}") from exc


def check(status: int, what: str) -> None:
    if status != 0:
        raise DriverError(f"{what} failed with CUDA driver error {status}")


def symbol(*names: str) -> Any:
    """The first of `names` the driver exports (the versioned name first, as the headers map them)."""
    lib = driver()
    for name in names:
        try:
            return getattr(lib, name)
        except AttributeError:
            continue
    raise DriverError(f"the CUDA driver has none of {', '.join(names)}")
