# Class: stream_or_thread
# §6: work on another stream or host thread, finishing after the stop event
# Attack: solution() starts a host thread and returns at once; the thread writes A + B a couple of
# milliseconds later, after the harness has stopped its clock. The timed window holds only a thread start.
# A thread left alive after the call, a snapshot that differs from the output, or an output still poisoned
# when it is verified must each reject it.
import threading
import time

import torch


def _write_later(input_a: torch.Tensor, input_b: torch.Tensor, output_c: torch.Tensor) -> None:
    time.sleep(0.002)
    torch.add(input_a, input_b, out=output_c)


def solution(input_a: torch.Tensor, input_b: torch.Tensor, output_c: torch.Tensor, n: int) -> None:
    threading.Thread(target=_write_later, args=(input_a, input_b, output_c), daemon=True).start()
