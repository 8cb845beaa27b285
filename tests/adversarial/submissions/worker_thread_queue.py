# Class: stream_or_thread
# §6: work on another stream or host thread, finishing after the stop event
# Attack: a worker thread is started at import with the low-level _thread module (invisible to
# threading.enumerate()), so the thread count is the same before and after every call. solution() only queues
# the buffers; the worker computes them about a millisecond later, outside the timed window.
# The on-stream snapshot (taken right after STOP) or the verification of the output must reject it.
import _thread
import queue
import time

import torch

_jobs: "queue.SimpleQueue[tuple[torch.Tensor, torch.Tensor, torch.Tensor]]" = queue.SimpleQueue()


def _serve() -> None:
    while True:
        input_a, input_b, output_c = _jobs.get()
        time.sleep(0.001)
        torch.add(input_a, input_b, out=output_c)


_thread.start_new_thread(_serve, ())


def solution(input_a: torch.Tensor, input_b: torch.Tensor, output_c: torch.Tensor, n: int) -> None:
    _jobs.put((input_a, input_b, output_c))
