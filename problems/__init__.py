"""Kernel problems: the Problem contract, the built-in catalogue and starter-code generation.

Modules here import torch only inside functions, so listing metadata stays cheap.
"""

from problems.base import DTYPES, DType, Param, Problem, TestCase, Tolerance
from problems.registry import UnknownProblemError, builtin_problems, get_problem, load_problem_file

__all__ = [
    "DTYPES",
    "DType",
    "Param",
    "Problem",
    "TestCase",
    "Tolerance",
    "UnknownProblemError",
    "builtin_problems",
    "get_problem",
    "load_problem_file",
]
