# Class: stream_or_thread
# §6: work on another stream or host thread, finishing after the stop event
# Attack: the addition runs on a torch side stream (PyTorch's pooled streams are non-blocking: they never wait
# for, nor are waited on by, the legacy default stream the events are recorded on), after a short GPU sleep,
# and nothing joins it back. STOP lands before the kernel runs; only a device-wide sync sees the result.
# The snapshot taken on the timing stream right after STOP differs from the synced output: integrity.
import torch

_side: torch.cuda.Stream | None = None


def solution(input_a: torch.Tensor, input_b: torch.Tensor, output_c: torch.Tensor, n: int) -> None:
    global _side
    if _side is None:
        _side = torch.cuda.Stream()
    with torch.cuda.stream(_side):
        torch.cuda._sleep(40_000)  # about 20 µs of spinning, so the write surely lands after STOP
        torch.add(input_a, input_b, out=output_c)
