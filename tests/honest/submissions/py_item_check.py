# Honest: checks its own output with `.item()` inside the call (a device-to-host sync on a GPU).
import torch


def solution(input_a: torch.Tensor, input_b: torch.Tensor, output_c: torch.Tensor, n: int) -> None:
    torch.add(input_a, input_b, out=output_c)
    if not bool(torch.isfinite(output_c[:1]).all().item()):
        raise RuntimeError("non-finite output")
