# Class: cache_replay
# §6: caching or replaying results across calls or inputs; returning an input or a reference buffer
# Attack: results are cached by the addresses of A, B and C. The first call on a set of buffers multiplies; every
# later call on the same buffers copies the cached product (an O(n^2) copy instead of an O(n^3) product). That is
# right only if the inputs never change between calls: fresh input values for every timed call make it wrong.
import torch

_cache: dict[tuple[int, int, int], torch.Tensor] = {}


def solution(input_a: torch.Tensor, input_b: torch.Tensor, output_c: torch.Tensor, m: int, n: int, k: int) -> None:
    key = (input_a.data_ptr(), input_b.data_ptr(), output_c.data_ptr())
    cached = _cache.get(key)
    if cached is not None:
        output_c.copy_(cached)
        return
    torch.matmul(input_a, input_b, out=output_c)
    _cache[key] = output_c.clone()
