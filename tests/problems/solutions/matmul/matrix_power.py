import torch


def solution(input_matrix: torch.Tensor, n: int, output_matrix: torch.Tensor, size: int) -> None:
    # Repeated squaring: about log2(n) products.
    result = None
    base = input_matrix
    while n:
        if n & 1:
            result = base if result is None else result @ base
        n >>= 1
        if n:
            base = base @ base
    output_matrix.copy_(result)
