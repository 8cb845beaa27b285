"""Writes 1 GiB into a file in its working directory."""

import os

chunk = b"\0" * (1 << 20)
with open(os.path.join(os.getcwd(), "flood.bin"), "wb") as fh:
    for _ in range(1024):
        fh.write(chunk)


def solution(input_a, input_b, output_c, n):
    pass
