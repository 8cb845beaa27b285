# Class: deferred_work
# §6: lazy or deferred outputs; batch-and-skip across calls; computing before the start event
# Attack: a TorchDispatchMode entered at import (and never left) sees every aten operation of the process, including
# the ones the harness calls through functions it bound before the import: binding a Python function does not
# bypass torch's dispatcher. When the call stack says the call is being timed (a caller named time*), solution()
# only records its buffers, and the pending products run when the next aten::copy_ is dispatched: the harness's
# snapshot copy right after the timer stopped. The output is then right, the snapshot equals it, no thread is
# involved, and the timed window held almost nothing. Untimed (checked) calls compute at once. On a GPU a sleep
# kernel of 90 % of the physical floor fills the window, so the reported time stays plausible, and cases whose
# hidden cost would show on the judge's wall clock (over ~1 ms) are computed honestly.
# Outcome required: rejected (integrity, implausible_time, wrong_answer) or timed at its true cost.
import sys

import torch
from torch.utils._python_dispatch import TorchDispatchMode

CEILING_FLOPS = 494.7e12  # float32 ceiling of an H100 as the runner's floor uses it (TF32 tensor cores)
BANDWIDTH_BYTES_PER_S = 3.35e12
FLOOR_SHARE = 0.9  # the runner rejects only times under 80 % of its floor
SLEEP_CYCLES_PER_S = 2.0e9
HIDE_AT_MOST_FLOPS = 2 * 2048**3  # on a GPU, hiding more would exceed the judge's wall-clock allowance

_pending: list[tuple[torch.Tensor, torch.Tensor, torch.Tensor]] = []


class _DeferToNextCopy(TorchDispatchMode):
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if func is torch.ops.aten.copy_.default and _pending:
            work = list(_pending)
            _pending.clear()
            for input_a, input_b, output_c in work:
                torch.matmul(input_a, input_b, out=output_c)
        return func(*args, **(kwargs or {}))


_DeferToNextCopy().__enter__()


def _being_timed() -> bool:
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_name.startswith("time"):
            return True
        frame = frame.f_back
    return False


def solution(input_a: torch.Tensor, input_b: torch.Tensor, output_c: torch.Tensor, m: int, n: int, k: int) -> None:
    flops = 2 * m * n * k
    hide = _being_timed() and (not output_c.is_cuda or flops <= HIDE_AT_MOST_FLOPS)
    if not hide:
        torch.matmul(input_a, input_b, out=output_c)
        return
    _pending.append((input_a, input_b, output_c))
    if output_c.is_cuda:
        floor_s = max(flops / CEILING_FLOPS, 4 * (m * k + k * n + m * n) / BANDWIDTH_BYTES_PER_S)
        torch.cuda._sleep(int(FLOOR_SHARE * floor_s * SLEEP_CYCLES_PER_S))
