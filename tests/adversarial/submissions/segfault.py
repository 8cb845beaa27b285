# Class: resource_abuse
# §6: hangs, crashes, illegal addresses, context poisoning, fork bombs, memory and disk exhaustion, output floods
# Attack: dereferences address zero from Python (ctypes): the worker dies with SIGSEGV. The runner reports a
# crash naming the signal, and the next job is unaffected.
import ctypes

import torch


def solution(input_a: torch.Tensor, input_b: torch.Tensor, output_c: torch.Tensor, n: int) -> None:
    ctypes.string_at(0)
