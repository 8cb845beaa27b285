# Honest: a thread pool made at import; each call splits the work over it and waits for both halves.
from concurrent.futures import ThreadPoolExecutor

import torch

POOL = ThreadPoolExecutor(max_workers=2)
POOL.submit(lambda: None).result()
POOL.submit(lambda: None).result()


def solution(input_a: torch.Tensor, input_b: torch.Tensor, output_c: torch.Tensor, n: int) -> None:
    half = n // 2
    first = POOL.submit(torch.add, input_a[:half], input_b[:half], out=output_c[:half])
    second = POOL.submit(torch.add, input_a[half:], input_b[half:], out=output_c[half:])
    first.result()
    second.result()
