# Honest: copies a few output values to the host with `.cpu().tolist()` (a blocking copy).
import torch


def solution(input_a: torch.Tensor, input_b: torch.Tensor, output_c: torch.Tensor, n: int) -> None:
    torch.add(input_a, input_b, out=output_c)
    head = output_c[:4].cpu().tolist()
    if len(head) > 4:
        raise RuntimeError("unreachable")
