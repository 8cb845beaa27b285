# Class: cache_replay
# §6: caching or replaying results across calls or inputs; returning an input or a reference buffer
# Attack: returns an input buffer instead of writing the output, hoping the harness reads the return value. The
# judge reads only its own output buffer, which keeps its NaN poison: a wrong answer.
import torch


def solution(input_a: torch.Tensor, input_b: torch.Tensor, output_c: torch.Tensor, n: int) -> torch.Tensor:
    input_a.add_(input_b)  # A + B, computed in the input's own buffer
    return input_a
