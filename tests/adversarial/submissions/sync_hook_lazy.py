# Class: deferred_work
# §6: lazy or deferred outputs; batch-and-skip across calls; computing before the start event
# Attack: solution() only records the buffers. At import, torch.cuda.synchronize (and the Event and Stream
# synchronize methods) are replaced by versions that first run the pending additions. A harness that syncs
# through those names after STOP would do the work for us, outside the timed window, and see a correct output.
# The harness binds its functions before the import, and the judge verifies in its own process: the output is
# still poisoned, so this is a wrong answer.
import torch

_pending: list[tuple[torch.Tensor, torch.Tensor, torch.Tensor]] = []


def _flush() -> None:
    while _pending:
        input_a, input_b, output_c = _pending.pop()
        torch.add(input_a, input_b, out=output_c)


def _deferring(real):
    def wrapper(*args, **kwargs):
        _flush()
        return real(*args, **kwargs)

    return wrapper


torch.cuda.synchronize = _deferring(torch.cuda.synchronize)
torch.cuda.Event.synchronize = _deferring(torch.cuda.Event.synchronize)
torch.cuda.Event.elapsed_time = _deferring(torch.cuda.Event.elapsed_time)
torch.cuda.Stream.synchronize = _deferring(torch.cuda.Stream.synchronize)


def solution(input_a: torch.Tensor, input_b: torch.Tensor, output_c: torch.Tensor, n: int) -> None:
    _pending.append((input_a, input_b, output_c))
