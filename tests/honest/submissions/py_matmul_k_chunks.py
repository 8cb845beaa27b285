# Honest: matmul accumulated over chunks of K with addmm.
import torch


def solution(input_a: torch.Tensor, input_b: torch.Tensor, output_c: torch.Tensor, m: int, n: int, k: int) -> None:
    step = max(1, (k + 3) // 4)
    output_c.zero_()
    for start in range(0, k, step):
        stop = min(k, start + step)
        output_c.addmm_(input_a[:, start:stop], input_b[start:stop, :])
