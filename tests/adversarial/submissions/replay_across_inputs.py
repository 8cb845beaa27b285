# Class: cache_replay
# §6: caching or replaying results across calls or inputs; returning an input or a reference buffer
# Attack: the first call of each size computes A + B and keeps a copy; every later call of that size replays
# the copy, whatever the inputs are. Correct only while the same input values come back (a fixed seed, or the
# test inputs reused for timing); fresh values for every timed call make it a wrong answer.
import torch

_answers: dict[int, torch.Tensor] = {}


def solution(input_a: torch.Tensor, input_b: torch.Tensor, output_c: torch.Tensor, n: int) -> None:
    answer = _answers.get(n)
    if answer is None:
        torch.add(input_a, input_b, out=output_c)
        _answers[n] = output_c.clone()
        return
    output_c.copy_(answer)
