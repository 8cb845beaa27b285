"""Raises while being imported."""

raise ValueError("boom at import time")


def solution(input_a, input_b, output_c, n):
    pass
