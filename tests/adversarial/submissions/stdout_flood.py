# Class: resource_abuse
# §6: hangs, crashes, illegal addresses, context poisoning, fork bombs, memory and disk exhaustion, output floods
# Attack: on its first call, writes 64 MiB to stdout and 64 MiB to stderr, then computes the right answer. The
# runner must drain and truncate the output (a bounded log, results on their own channel) and finish the job.
import sys

import torch

CHUNK = "flood " * (1 << 16)  # 384 KiB
FLOOD_BYTES = 64 << 20
_flooded = False


def solution(input_a: torch.Tensor, input_b: torch.Tensor, output_c: torch.Tensor, n: int) -> None:
    global _flooded
    if not _flooded:
        _flooded = True
        for stream in (sys.stdout, sys.stderr):
            for _ in range(FLOOD_BYTES // len(CHUNK)):
                stream.write(CHUNK)
            stream.flush()
    torch.add(input_a, input_b, out=output_c)
