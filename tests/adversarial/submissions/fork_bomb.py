# Class: resource_abuse
# §6: hangs, crashes, illegal addresses, context poisoning, fork bombs, memory and disk exhaustion, output floods
# Attack: a fork bomb: every process, parent or child, forks in a loop and keeps trying when the kernel refuses.
# The task limit holds it, the deadline kills the group (a timeout), and nothing of it outlives the job.
import os
import time

import torch


def solution(input_a: torch.Tensor, input_b: torch.Tensor, output_c: torch.Tensor, n: int) -> None:
    while True:
        try:
            os.fork()
        except OSError:
            time.sleep(0.01)
