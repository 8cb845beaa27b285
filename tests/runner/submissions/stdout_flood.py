"""Writes 1 GiB to stdout, then crashes so the captured output is shown."""

import os
import sys

chunk = b"flood " * (1 << 17)  # 768 KiB
written = 0
while written < (1 << 30):
    sys.stdout.buffer.write(chunk)
    written += len(chunk)
sys.stdout.flush()
os.abort()


def solution(input_a, input_b, output_c, n):
    pass
