# Class: deferred_work
# §6: lazy or deferred outputs; batch-and-skip across calls; computing before the start event
# Attack: compute *before* the start event. A polling thread, started at import with the low-level _thread
# module (invisible to threading.enumerate()), watches every buffer it has been given. As soon as the inputs
# change or the output is poisoned, it recomputes the output, between the judge's refresh and the next timed
# call. solution() then returns at once whenever the output is already right for the current inputs, so the
# timed window is empty. The harness must count this thread (it is alive during the calls, though it was
# started before the first one), or verification catches the race with the judge's poisoning.
import _thread
import time

import torch

_watched: dict[int, tuple[torch.Tensor, torch.Tensor, torch.Tensor]] = {}
_computed_for: dict[int, tuple[float, ...]] = {}
_lock = _thread.allocate_lock()


def _fingerprint(input_a: torch.Tensor, input_b: torch.Tensor, output_c: torch.Tensor) -> tuple[float, ...]:
    head = min(input_a.numel(), 4)
    values = [*input_a.view(-1)[:head].tolist(), *input_b.view(-1)[:head].tolist()]
    values += [input_a.view(-1)[-1].item(), input_b.view(-1)[-1].item()]
    return tuple(values)


def _poisoned(output_c: torch.Tensor) -> bool:
    flat = output_c.view(-1)
    return bool(torch.isnan(flat[0]).item() or torch.isnan(flat[-1]).item())


def _refresh(key: int) -> None:
    input_a, input_b, output_c = _watched[key]
    fingerprint = _fingerprint(input_a, input_b, output_c)
    if _computed_for.get(key) != fingerprint or _poisoned(output_c):
        torch.add(input_a, input_b, out=output_c)
        _computed_for[key] = fingerprint


def _watch() -> None:
    while True:
        with _lock:
            for key in list(_watched):
                _refresh(key)
        time.sleep(0.0002)


_thread.start_new_thread(_watch, ())


def solution(input_a: torch.Tensor, input_b: torch.Tensor, output_c: torch.Tensor, n: int) -> None:
    key = output_c.data_ptr()
    if key in _watched and _computed_for.get(key) == _fingerprint(input_a, input_b, output_c):
        if not _poisoned(output_c):
            return  # already computed before the call: nothing inside the timed window
    with _lock:
        _watched[key] = (input_a, input_b, output_c)
        torch.add(input_a, input_b, out=output_c)
        _computed_for[key] = _fingerprint(input_a, input_b, output_c)
