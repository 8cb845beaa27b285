# Class: resource_abuse
# §6: hangs, crashes, illegal addresses, context poisoning, fork bombs, memory and disk exhaustion, output floods
# Attack: grabs GPU memory 1 GiB at a time, keeping every block, until the device refuses. The out-of-memory
# error is a runtime error of this job alone; the memory returns with the process, and the next job is fine.
import torch

_hoard: list[torch.Tensor] = []


def solution(input_a: torch.Tensor, input_b: torch.Tensor, output_c: torch.Tensor, n: int) -> None:
    while True:
        _hoard.append(torch.empty(1 << 30, dtype=torch.uint8, device=output_c.device))
