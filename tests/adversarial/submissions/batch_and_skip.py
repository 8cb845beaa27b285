# Class: deferred_work
# §6: lazy or deferred outputs; batch-and-skip across calls; computing before the start event
# Attack: a buffer seen for the first time is computed at once (that call is probably the one being checked).
# Calls on a buffer seen before are only queued, and every fourth call computes the whole batch, so three
# timed calls in four do nothing. This relies on the output keeping its last value between calls: poisoning
# the output and refreshing the inputs before every timed call, then verifying it, makes it a wrong answer.
import torch

_seen: set[int] = set()
_batch: list[tuple[torch.Tensor, torch.Tensor, torch.Tensor]] = []


def solution(input_a: torch.Tensor, input_b: torch.Tensor, output_c: torch.Tensor, n: int) -> None:
    key = output_c.data_ptr()
    if key not in _seen:
        _seen.add(key)
        torch.add(input_a, input_b, out=output_c)
        return
    _batch.append((input_a, input_b, output_c))
    if len(_batch) >= 4:
        for a, b, c in _batch:
            torch.add(a, b, out=c)
        _batch.clear()
