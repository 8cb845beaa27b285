# Honest: matmul that checks its result with `.item()` (GPU only, as issue reports described).
import torch


def solution(input_a: torch.Tensor, input_b: torch.Tensor, output_c: torch.Tensor, m: int, n: int, k: int) -> None:
    torch.matmul(input_a, input_b, out=output_c)
    if bool(torch.isnan(output_c).any().item()):
        raise RuntimeError("NaN in the product")
