"""The launcher's side of one sample: run a call the way the judge asked and report raw readings.

Everything here runs in the untrusted process, next to the submission, so nothing here decides anything: it
returns raw event times, host times and thread counts, and the judge checks them (runner/judge/judged_timer.py).
What it can do is make tampering from Python harder: every function it relies on is bound when the harness
is built, before the submission is imported, so replacing `torch.cuda.Event.elapsed_time`,
`torch.cuda.synchronize`, `torch.Tensor.copy_` or `time.perf_counter` afterwards does not reach it.

GPU sample (the `arena` method; runner/timing/methods/ says what each method does), all on the legacy default
stream, where CUDA submissions launch:

    read 4x L2 -> A -> spin -> START -> [known spin] -> solution(...) -> STOP -> copy outputs to snapshots -> sync

The copies right after STOP are the on-stream snapshot: the judge compares them with the outputs after the
synchronise, so work that finishes after STOP (a side stream, a host thread) shows up as a difference. They
are raw driver copies (`cuMemcpyDtoDAsync` on the legacy stream; `memmove` on the CPU), below torch's
dispatcher: a dispatch mode or an operator override left by the submission cannot run deferred work inside
them. Each reading also reports whether torch function or dispatch modes were left active by the call.

A batch runs several samples back to back in one request, so the judge can time the whole batch with its own
clock: the sum of what is reported must account for the time that passed (runner/judge/judged_timer.py).
"""

from __future__ import annotations

import ctypes
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from runner.timing.calibration import known_work
from runner.timing.gpu import FLUSH_L2_MULTIPLE, MIN_FLUSH_BYTES
from runner.timing.methods import METHODS, TimingMethod, UnknownMethodError

if TYPE_CHECKING:
    import torch

BoundCall = Callable[[], object]


class BadReturnError(TypeError):
    """A Python solution returned something other than None or a plain tensor."""


def thread_count(listdir: Callable[[str], list[str]] = os.listdir) -> int:
    return len(listdir("/proc/self/task"))


@dataclass
class CallSet:
    """One input set as the launcher sees it: the bound call, and (destination, source, bytes) of each
    snapshot copy, taken as plain integers when the set is shared."""

    call: BoundCall
    copies: list[tuple[int, int, int]]

    @classmethod
    def of(cls, call: BoundCall, outputs: Sequence[torch.Tensor], snapshots: Sequence[torch.Tensor]) -> CallSet:
        copies = [
            (s.data_ptr(), o.data_ptr(), o.numel() * o.element_size()) for o, s in zip(outputs, snapshots, strict=True)
        ]
        return cls(call, copies)


CU_MEMPOOL_ATTR_RELEASE_THRESHOLD = 4


def keep_pool_memory(libcuda: ctypes.CDLL, ordinal: int) -> None:
    """Let the device's default memory pool keep freed memory across synchronisations, as a caching allocator
    does. With the driver's default threshold of 0, every device-wide synchronise of the harness (after STOP)
    returns a solution's `cudaFreeAsync`ed memory to the system, and its next `cudaMallocAsync` maps it again:
    driver work outside the events that the judge's clock saw as hidden work (an honest stream-ordered
    allocation was rejected on an H100)."""
    device, pool = ctypes.c_int(), ctypes.c_void_p()
    if libcuda.cuInit(0) or libcuda.cuDeviceGet(ctypes.byref(device), ordinal):
        return
    if libcuda.cuDeviceGetDefaultMemPool(ctypes.byref(pool), device):
        return
    threshold = ctypes.c_uint64(2**64 - 1)
    libcuda.cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, ctypes.byref(threshold))


class Harness:
    """Runs one call per request and reports what it measured."""

    def __init__(self, device: str) -> None:
        import torch

        self.device = device
        self._perf = time.perf_counter
        self._listdir = os.listdir
        self._tensor_type = torch.Tensor
        self._modes = (torch._C._len_torch_function_stack, torch._C._len_torch_dispatch_stack)
        self._memmove = ctypes.memmove
        self._known_work = known_work
        # Bound now like the functions above: a registry the submission rewrites later does not reach samples.
        self._methods: dict[str, TimingMethod] = dict(METHODS)
        if device != "cuda":
            return
        libcuda = ctypes.CDLL("libcuda.so.1")
        self._dtod = libcuda.cuMemcpyDtoDAsync_v2
        self._dtod.argtypes = [ctypes.c_uint64, ctypes.c_uint64, ctypes.c_size_t, ctypes.c_void_p]
        keep_pool_memory(libcuda, torch.cuda.current_device())
        self._sync = torch._C._cuda_synchronize
        self._sleep = torch._C._cuda_sleep
        self._record = torch._C._CudaEventBase.record
        self._elapsed = torch._C._CudaEventBase.elapsed_time
        self._query = torch._C._CudaEventBase.query
        self._stream = torch.cuda.default_stream()
        self._a, self._start, self._stop = (torch.cuda.Event(enable_timing=True) for _ in range(3))
        props = torch.cuda.get_device_properties(torch.cuda.current_device())
        flush_bytes = max(FLUSH_L2_MULTIPLE * int(props.L2_cache_size), MIN_FLUSH_BYTES)
        self._flush = torch.ones(flush_bytes // 4, dtype=torch.float32, device="cuda")
        self._flush_out = torch.empty((), dtype=torch.float32, device="cuda")
        self._sum = torch._C._VariableFunctions.sum

    def snapshot(self, target: CallSet) -> None:
        """Copy each output to its snapshot, enqueued on the legacy stream (GPU) or at once (CPU)."""
        for destination, source, size in target.copies:
            if self.device == "cuda":
                self._dtod(destination, source, size, None)
            else:
                self._memmove(destination, source, size)

    def modes_active(self) -> int:
        return sum(count() for count in self._modes)

    def checked(self, call: BoundCall) -> bool:
        """Run the call; a Python solution may return None or exactly a tensor, whose value is never used.
        Returns whether it returned a tensor, so that an unwritten output can be explained."""
        result = call()
        if result is not None and type(result) is not self._tensor_type:
            raise BadReturnError(
                f"solution returned a {type(result).__name__}; write into the output tensors and return None"
            )
        return result is not None

    def call(self, target: CallSet) -> dict[str, Any]:
        """An untimed call (the test phase), synchronised."""
        before = thread_count(self._listdir)
        returned = self.checked(target.call)
        if self.device == "cuda":
            self._sync()
        return {"threads": [before, thread_count(self._listdir)], "returned_tensor": returned}

    def method(self, name: str) -> TimingMethod:
        """The timing method the judge named (the `protocol` of its `time` message)."""
        method = self._methods.get(name)
        if method is None:
            raise UnknownMethodError(f"no timing method is named {name!r}; the methods are: {', '.join(self._methods)}")
        return method

    def time_gpu(
        self, target: CallSet, run: bool, spin_cycles: int, known_cycles: int, protocol: str
    ) -> dict[str, Any]:
        """One GPU sample of `target` as the method named `protocol` takes it; with `run` False the known spin
        (or, at 0 cycles, the empty kernel) takes the solution's place, and the snapshot copies are made all the
        same."""
        record, a, start, stop, stream = self._record, self._a, self._start, self._stop, self._stream
        method = self.method(protocol)
        if method.syncs_before_sample:
            self._sync()
        host_start = self._perf()
        if method.flushes_l2:
            self._sum(self._flush, dim=0, out=self._flush_out)
        if method.covering_spin:
            record(a, stream)
            self._sleep(spin_cycles)
        record(start, stream)
        if known_cycles or not run:
            self._sleep(known_cycles)
        call_start = self._perf()
        if run:
            self.checked(target.call)
        call_s = self._perf() - call_start
        # Whether the GPU had already passed START when the call returned: always so for a call that waits for
        # the GPU inside (a synchronise, `.item()`, a blocking copy), which no covering spin can change.
        start_passed = self._query(start) if method.covering_spin else None
        record(stop, stream)
        self.snapshot(target)
        host_span = self._perf() - host_start
        self._sync()
        covered = self._elapsed(a, start) / 1e3 if method.covering_spin else None
        return {
            "elapsed_s": self._elapsed(start, stop) / 1e3,
            "covered_s": covered,
            "host_span_s": host_span,
            "call_s": call_s,
            "start_passed": start_passed,
            "modes": self.modes_active(),
        }

    def warm(self) -> None:
        """Load the kernels a sample runs (the flush's sum, the spin) and take one reading of the events, so
        that the first timed sample of the job does not pay for it."""
        if self.device != "cuda":
            return
        self._sum(self._flush, dim=0, out=self._flush_out)
        self._record(self._a, self._stream)
        self._sleep(1000)
        self._record(self._start, self._stream)
        self._record(self._stop, self._stream)
        self._sync()
        self._elapsed(self._a, self._start)

    def time_cpu(self, target: CallSet, run: bool, known_units: int = 0) -> dict[str, Any]:
        """One CPU sample from a monotonic clock; with `run` False the known work of `known_units` (an empty call
        at 0) takes the solution's place."""
        start = self._perf()
        if run:
            self.checked(target.call)
        elif known_units:
            self._known_work(known_units)
        elapsed = self._perf() - start
        self.snapshot(target)
        return {
            "elapsed_s": elapsed,
            "covered_s": None,
            "host_span_s": elapsed,
            "call_s": elapsed,
            "start_passed": None,
            "modes": self.modes_active(),
        }

    def threads(self) -> int:
        return thread_count(self._listdir)
