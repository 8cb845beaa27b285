# Honest: runs the garbage collector on its first call (a tripwire note, never a verdict).
import gc

import torch

_DONE = []


def solution(input_a: torch.Tensor, input_b: torch.Tensor, output_c: torch.Tensor, n: int) -> None:
    if not _DONE:
        _DONE.append(gc.collect())
    torch.add(input_a, input_b, out=output_c)
