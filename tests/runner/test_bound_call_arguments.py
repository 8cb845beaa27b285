"""A bound call keeps its constant arrays alive: a CUDA solution receives only their addresses, and on a GPU an
array freed after binding had its memory reused before the timed calls read it (seen on an H100 as an illegal
address in argmax's kernel)."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Sequence
from typing import Any

import torch

from problems.registry import get_problem
from runner.launcher.loader import Solution


def test_constant_arrays_outlive_binding_while_the_call_is_held() -> None:
    problem = get_problem("argmax")
    arrays: list[weakref.ref[torch.Tensor]] = []
    seen: list[list[int]] = []

    def addresses_only(values: Sequence[Any]) -> list[Any]:
        arrays.extend(weakref.ref(v) for v in values if isinstance(v, torch.Tensor) and v is not x and v is not out)
        return [v.data_ptr() if isinstance(v, torch.Tensor) else v for v in values]

    def call(*args: Any) -> None:
        seen.append([a().tolist() for a in arrays if a() is not None])

    solution = Solution("cuda", call, addresses_only)
    x, out = torch.randn(3, 5), torch.empty(3, dtype=torch.int32)
    bound = solution.bind(problem, [x], [out], [1, [3, 5], 2], "cpu")
    gc.collect()
    assert arrays and arrays[0]() is not None, "the shape array was freed once the call was bound"
    bound()
    assert seen == [[[3, 5]]]
    del bound
    gc.collect()
    assert arrays[0]() is None, "the array should go with the bound call"
