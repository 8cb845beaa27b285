"""sort-pairs: a stable key-value sort, int32 keys carrying int32 values."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from problems.base import DType, Param
from problems.builtin.sort._sort import SortProblem, random_int32
from problems.library import Dims

if TYPE_CHECKING:
    import torch


class SortPairs(SortProblem):
    slug = "sort-pairs"
    title = "Stable Key-Value Sort"
    description = (
        "Sort n (key, value) pairs by key, ascending and stably: pairs with equal keys keep their input order. "
        "Write the sorted keys to `keys_out` and each key's value, moved with it, to `values_out`. Keys are int32 "
        "drawn from about n/4 distinct values spread over the whole int32 range, so nearly every key repeats and "
        "stability matters; values are arbitrary int32 words (payloads such as row indices). Both outputs are "
        "checked exactly."
    )
    difficulty = "medium"
    parameters = (
        Param("keys", "input", doc="n int32 keys", element="int32"),
        Param("values", "input", doc="n int32 values", element="int32"),
        Param("keys_out", "output", doc="the keys, ascending", element="int32"),
        Param("values_out", "output", doc="the values, in the keys' sorted order", element="int32"),
        Param("n", "scalar", "size_t", "pairs"),
    )
    bytes_formula = "4 · n · 4 (read keys and values, write both sorted)"

    def shapes(self, dims: Dims) -> dict[str, tuple[int, ...]]:
        (n,) = dims
        return {"keys": (n,), "values": (n,), "keys_out": (n,), "values_out": (n,)}

    def extras(self, dims: Dims) -> list[Any]:
        return list(dims)

    def make_inputs(self, dims: Dims, dtype: DType, gen: torch.Generator) -> tuple[torch.Tensor, ...]:
        import torch

        (n,) = dims
        pool = random_int32(max(2, n // 4), gen)
        pick = torch.randint(0, pool.numel(), (n,), generator=gen, device=gen.device)
        return pool[pick], random_int32(n, gen)

    def reference_solution(self, *args: Any) -> tuple[torch.Tensor, torch.Tensor]:
        keys, values = args[0], args[1]
        order = keys.sort(stable=True)
        return order.values, values[order.indices]
