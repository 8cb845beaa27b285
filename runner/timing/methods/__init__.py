"""The timing methods, one module each, behind one interface (`TimingMethod`, in base.py).

To add a method: write `runner/timing/methods/<name>.py` holding one `TimingMethod`, add it to `METHODS` below and
its name to `contract.wire.Method`; tests/measure/test_methods.py checks that the two agree and that the method's
criterion and parameters exist.
"""

from __future__ import annotations

from types import MappingProxyType

from runner.timing.methods.arena import ARENA
from runner.timing.methods.base import Device, TimingMethod
from runner.timing.methods.cpu import CPU
from runner.timing.methods.seed import SEED

METHODS: MappingProxyType[str, TimingMethod] = MappingProxyType({m.name: m for m in (ARENA, SEED, CPU)})
# The method a job gets when it asks for one of the other device kind.
DEFAULT_FOR_DEVICE: MappingProxyType[Device, TimingMethod] = MappingProxyType({"gpu": ARENA, "cpu": CPU})


class UnknownMethodError(LookupError):
    """A timing method name that no module here defines."""


def method_named(name: str) -> TimingMethod:
    try:
        return METHODS[name]
    except KeyError:
        known = ", ".join(sorted(METHODS))
        raise UnknownMethodError(f"no timing method is named {name!r}; the methods are: {known}") from None


def method_for(name: str, device: Device) -> TimingMethod:
    """The method named `name` if it times on `device`, otherwise that device's default method."""
    method = method_named(name)
    return method if method.device == device else DEFAULT_FOR_DEVICE[device]


__all__ = [
    "DEFAULT_FOR_DEVICE",
    "METHODS",
    "Device",
    "TimingMethod",
    "UnknownMethodError",
    "method_for",
    "method_named",
]
