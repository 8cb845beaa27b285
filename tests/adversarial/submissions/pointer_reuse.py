# Class: check_vs_timed
# §6: behaving differently when checked than when timed: call counters, pointer reuse, shape detection
# Attack: pointer reuse. A call on an output buffer never seen before is probably a check, so it computes; a call
# on a buffer seen before is probably a timing loop, so it does nothing and trusts the buffer to still hold the
# last answer. A poisoned output before every timed call, verified after it, makes this a wrong answer.
import torch

_seen: set[int] = set()


def solution(input_a: torch.Tensor, input_b: torch.Tensor, output_c: torch.Tensor, n: int) -> None:
    key = output_c.data_ptr()
    if key in _seen:
        return
    _seen.add(key)
    torch.add(input_a, input_b, out=output_c)
