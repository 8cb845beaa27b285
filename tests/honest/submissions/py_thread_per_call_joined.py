# Honest: starts a thread in every call and joins it before returning.
import threading

import torch


def solution(input_a: torch.Tensor, input_b: torch.Tensor, output_c: torch.Tensor, n: int) -> None:
    half = n // 2
    worker = threading.Thread(target=torch.add, args=(input_a[half:], input_b[half:]), kwargs={"out": output_c[half:]})
    worker.start()
    torch.add(input_a[:half], input_b[:half], out=output_c[:half])
    worker.join()
