"""A hostile all-gather: rank 0 returns at once and leaves a thread of its own to do its part of the collective and
write its output later, so its clock stops before its work is done. The harness must not count the late write:
it verifies each output as it stood when the rank's call returned, and reports any byte written after it."""

import threading
import time

import torch
import torch.distributed as dist

# Long enough that the late write lands after rank 0's call has returned, short enough to land before the case's
# final release, where the harness reads the buffers again and sees the change.
LATE_SECONDS = 0.02
_pending: list[threading.Thread] = []


def _finish_later(d_input: torch.Tensor, d_output: torch.Tensor, group: dist.ProcessGroup) -> None:
    gathered = torch.empty_like(d_output)
    dist.all_gather_into_tensor(gathered, d_input, group=group)
    time.sleep(LATE_SECONDS)
    d_output.copy_(gathered)


def solution(
    d_input: torch.Tensor, d_output: torch.Tensor, n: int, rank: int, world_size: int, group: dist.ProcessGroup
) -> None:
    if rank != 0:
        dist.all_gather_into_tensor(d_output, d_input, group=group)
        return
    # The previous sample's thread is joined first, so the collectives on the group stay in order.
    for thread in _pending:
        thread.join()
    _pending.clear()
    # Not a daemon: the interpreter waits for it at exit, rather than killing it inside gloo (which aborts).
    thread = threading.Thread(target=_finish_later, args=(d_input, d_output, group))
    thread.start()
    _pending.append(thread)
