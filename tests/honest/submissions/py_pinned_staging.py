# Honest, host-bound: the inputs are staged through pinned host memory, added on the host, and copied back; every
# copy is waited for inside the call.
import torch

_staging: dict[tuple[int, str], tuple[torch.Tensor, torch.Tensor]] = {}


def _buffers(n: int, device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
    key = (n, str(device))
    if key not in _staging:
        pinned = device.type == "cuda"
        _staging[key] = (
            torch.empty(n, dtype=torch.float32, pin_memory=pinned),
            torch.empty(n, dtype=torch.float32, pin_memory=pinned),
        )
    return _staging[key]


def solution(input_a: torch.Tensor, input_b: torch.Tensor, output_c: torch.Tensor, n: int) -> None:
    host_a, host_b = _buffers(n, input_a.device)
    host_a.copy_(input_a, non_blocking=True)
    host_b.copy_(input_b, non_blocking=True)
    if input_a.is_cuda:
        torch.cuda.current_stream().synchronize()
    host_a.add_(host_b)
    output_c.copy_(host_a, non_blocking=True)
    if input_a.is_cuda:
        torch.cuda.current_stream().synchronize()
