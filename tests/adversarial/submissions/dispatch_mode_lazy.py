# Class: deferred_work
# §6: lazy or deferred outputs; batch-and-skip across calls; computing before the start event
# Attack: a TorchDispatchMode entered at import (and never left) sees every aten operation of the process, including
# the ones the harness calls through functions it bound before the import: binding a Python function does not
# bypass torch's dispatcher. When the call stack says the call is being timed (a caller named time*), solution()
# only records its buffers, and the pending additions run when the next aten::copy_ is dispatched: the harness's
# snapshot copy right after the timer stopped. The output is then right, the snapshot equals it, no thread is
# involved, and the timed window held almost nothing. Untimed (checked) calls compute at once. On a GPU, a sleep
# kernel of 90 % of the physical floor fills the window so that the reported time stays plausible.
# Outcome required: rejected (integrity, implausible_time, wrong_answer) or timed at its true cost.
import sys

import torch
from torch.utils._python_dispatch import TorchDispatchMode

BANDWIDTH_BYTES_PER_S = 3.35e12  # the H100's datasheet bandwidth, as the runner's floor uses it
FLOOR_SHARE = 0.9  # the runner rejects only times under 80 % of its floor
SLEEP_CYCLES_PER_S = 2.0e9

_pending: list[tuple[torch.Tensor, torch.Tensor, torch.Tensor]] = []


class _DeferToNextCopy(TorchDispatchMode):
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if func is torch.ops.aten.copy_.default and _pending:
            work = list(_pending)
            _pending.clear()
            for input_a, input_b, output_c in work:
                torch.add(input_a, input_b, out=output_c)
        return func(*args, **(kwargs or {}))


_DeferToNextCopy().__enter__()


def _being_timed() -> bool:
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_name.startswith("time"):
            return True
        frame = frame.f_back
    return False


def solution(input_a: torch.Tensor, input_b: torch.Tensor, output_c: torch.Tensor, n: int) -> None:
    if not _being_timed():
        torch.add(input_a, input_b, out=output_c)
        return
    _pending.append((input_a, input_b, output_c))
    if output_c.is_cuda:
        floor_s = 3 * 4 * n / BANDWIDTH_BYTES_PER_S
        torch.cuda._sleep(int(FLOOR_SHARE * floor_s * SLEEP_CYCLES_PER_S))
