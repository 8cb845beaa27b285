# Honest: times itself with its own CUDA events and reads them back (GPU only).
import torch

LAST_MS = [0.0]


def solution(input_a: torch.Tensor, input_b: torch.Tensor, output_c: torch.Tensor, n: int) -> None:
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    torch.add(input_a, input_b, out=output_c)
    stop.record()
    stop.synchronize()
    LAST_MS[0] = start.elapsed_time(stop)
