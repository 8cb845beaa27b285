# Class: resource_abuse
# §6: hangs, crashes, illegal addresses, context poisoning, fork bombs, memory and disk exhaustion, output floods
# Attack: asks for 1 TiB of host memory and touches all of it. The allocation is refused at once (a runtime
# error) or, where the host overcommits, the kernel's OOM killer stops the worker (a crash); either way the job
# ends with an error and the runner lives on.
import torch

TIB = 1 << 40


def solution(input_a: torch.Tensor, input_b: torch.Tensor, output_c: torch.Tensor, n: int) -> None:
    hog = torch.empty(TIB, dtype=torch.uint8)
    hog.fill_(1)
    torch.add(input_a, input_b, out=output_c)
