"""The 1-D inclusive scans' shared rules: one input and one output of n elements, n as the only size, one
operation per element after the first. Each scan states its operator, its inputs and its checking."""

from __future__ import annotations

from typing import Any, ClassVar

from problems.base import DType
from problems.inputs import pow2_name
from problems.library import Dims, KernelProblem


class InclusiveScan(KernelProblem):
    """`output[i] = input[0] ∘ ... ∘ input[i]` with the signature `(input, output, n)`."""

    difficulty = "medium"
    dtypes: ClassVar[tuple[DType, ...]] = ("float32",)
    # The name of the size in the signature and the case names (`N` in Tensara's, `n` in ours).
    size_name: ClassVar[str] = "N"

    def case_name(self, dims: Dims) -> str:
        return f"{self.size_name}={pow2_name(dims[0])}"

    def shapes(self, dims: Dims) -> dict[str, tuple[int, ...]]:
        return {"input": dims, "output": dims}

    def extras(self, dims: Dims) -> list[Any]:
        return list(dims)

    def flops(self, dims: Dims) -> int:
        return dims[0] - 1
