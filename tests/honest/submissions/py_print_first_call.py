# Honest: prints a line on its first call only.
import torch

_SEEN = []


def solution(input_a: torch.Tensor, input_b: torch.Tensor, output_c: torch.Tensor, n: int) -> None:
    if not _SEEN:
        _SEEN.append(True)
        print(f"vector_add of {n} elements on {output_c.device}")
    torch.add(input_a, input_b, out=output_c)
