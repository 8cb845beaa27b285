"""cross-entropy: the softmax cross-entropy of each row of a B×V logit matrix against an int32 class index."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from problems.base import Param
from problems.builtin.loss._loss import offset_rows
from problems.library import Dims, KernelProblem

if TYPE_CHECKING:
    import torch

    from problems.base import DType


class CrossEntropy(KernelProblem):
    slug = "cross-entropy"
    title = "Cross-Entropy Loss"
    description = (
        "For each row b of a B×V matrix of logits and its class index `targets[b]` (an int in [0, V)), write "
        "the row's cross-entropy loss as a float32: `loss[b] = log(sum_j exp(logits[b][j])) - "
        "logits[b][targets[b]]`. There is one loss per row, not their mean. The logits come in the problem's "
        "dtype; the loss is float32 in every dtype. Each row is shifted by its own offset of up to 100, so "
        "`exp` overflows unless the row's maximum is subtracted first. Row-major and contiguous."
    )
    tags = ("loss-function", "reduction", "memory-bound")
    difficulty = "medium"
    dtypes = ("float32", "float16", "bfloat16")
    parameters = (
        Param("logits", "input", doc="B×V, row-major"),
        Param("targets", "input", doc="B class indices in [0, V)", element="int32"),
        Param("loss", "output", doc="B: one loss per row, float32", element="float32"),
        Param("B", "scalar", "size_t", "rows (tokens)"),
        Param("V", "scalar", "size_t", "classes (vocabulary size)"),
    )
    # A ragged vocabulary, few rows over a large vocabulary, then language-model shapes.
    gpu_cases = ((257, 5003), (64, 128256), (1024, 32000), (2048, 50257))
    cpu_cases = ((7, 33), (16, 1000), (64, 5003))
    dim_names = ("B", "V")
    flops_formula = "4 · B · V + 3 · B (max, subtract, exp and add per logit; log, add and subtract per row)"
    bytes_formula = "B · V · sizeof(dtype) + 8 · B (read the logits and targets, write the float32 losses)"

    def shapes(self, dims: Dims) -> dict[str, tuple[int, ...]]:
        b, _ = dims
        return {"logits": dims, "targets": (b,), "loss": (b,)}

    def extras(self, dims: Dims) -> list[Any]:
        return list(dims)

    def flops(self, dims: Dims) -> int:
        b, v = dims
        return 4 * b * v + 3 * b

    def make_inputs(self, dims: Dims, dtype: DType, gen: torch.Generator) -> tuple[torch.Tensor, ...]:
        import torch

        b, v = dims
        targets = torch.randint(0, v, (b,), generator=gen, device=gen.device, dtype=torch.int32)
        return offset_rows(b, v, 2.0, dtype, gen), targets

    def reference_solution(self, *args: Any) -> torch.Tensor:
        logits, targets = args[0].double(), args[1].long()
        picked = logits.gather(1, targets[:, None])[:, 0]
        return logits.logsumexp(dim=1) - picked
