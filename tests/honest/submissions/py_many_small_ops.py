# Honest: many small operations: the vector is added in sixteen chunks.
import torch


def solution(input_a: torch.Tensor, input_b: torch.Tensor, output_c: torch.Tensor, n: int) -> None:
    step = max(1, (n + 15) // 16)
    for start in range(0, n, step):
        stop = min(n, start + step)
        torch.add(input_a[start:stop], input_b[start:stop], out=output_c[start:stop])
