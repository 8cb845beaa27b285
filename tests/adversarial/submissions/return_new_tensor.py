# Class: cache_replay
# §6: caching or replaying results across calls or inputs; returning an input or a reference buffer
# Attack: returns a fresh tensor (exactly torch.Tensor, so the return type itself is allowed) holding A + B and
# never touches the output buffer. The judge never reads the returned object: the output stays poisoned.
import torch


def solution(input_a: torch.Tensor, input_b: torch.Tensor, output_c: torch.Tensor, n: int) -> torch.Tensor:
    return input_a + input_b
