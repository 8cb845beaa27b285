"""Dereferences address zero: the worker dies with SIGSEGV."""

import ctypes


def solution(input_a, input_b, output_c, n):
    ctypes.string_at(0)
