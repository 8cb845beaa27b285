"""adam-step: one fused AdamW update of n parameters, returning the new parameters and both moment buffers."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from problems.base import DType, Param
from problems.builtin.elementwise._scalars import as_float32
from problems.library import Dims, KernelProblem

if TYPE_CHECKING:
    import torch


def case_hyperparameters(dims: Dims) -> list[float | int]:
    """lr, beta1, beta2, eps, weight_decay and step of a case, set by its size so that no constant passes.

    The learning rate is large for training (1e-2 to 5e-2) so that a wrong update moves the parameters well
    outside the tolerance; steps stay small so that the bias corrections matter.
    """
    (n,) = dims
    k = n % 5
    lr = as_float32(0.01 * (1 + k))
    beta1 = as_float32(0.9 - 0.02 * (n % 3))
    beta2 = as_float32(0.999 - 0.004 * (n % 4))
    eps = as_float32(10.0 ** -(6 + n % 3))
    weight_decay = as_float32(0.01 + 0.03 * (n % 4))
    step = 1 + (7 * n) % 40
    return [lr, beta1, beta2, eps, weight_decay, step]


class AdamStep(KernelProblem):
    slug = "adam-step"
    title = "Fused AdamW Step"
    description = (
        "Perform one AdamW optimizer step (decoupled weight decay, as `torch.optim.AdamW`) over n float32 "
        "parameters, writing three outputs. With g = grad and t = step (the step being taken, 1 for the first):\n"
        "`new_exp_avg = beta1 * exp_avg + (1 - beta1) * g`;\n"
        "`new_exp_avg_sq = beta2 * exp_avg_sq + (1 - beta2) * g * g`;\n"
        "`m_hat = new_exp_avg / (1 - beta1^t)`, `v_hat = new_exp_avg_sq / (1 - beta2^t)`;\n"
        "`new_param = param * (1 - lr * weight_decay) - lr * m_hat / (sqrt(v_hat) + eps)`.\n"
        "All buffers hold n elements; the inputs are read-only. The float hyperparameters and the int `step` "
        "differ between cases."
    )
    tags = ("optimizer", "elementwise", "fused", "memory-bound")
    difficulty = "medium"
    dtypes = ("float32",)
    parameters = (
        Param("param", "input", doc="n parameters"),
        Param("grad", "input", doc="n gradients"),
        Param("exp_avg", "input", doc="n first-moment estimates before the step"),
        Param("exp_avg_sq", "input", doc="n second-moment estimates before the step, non-negative"),
        Param("lr", "scalar", "float", "learning rate"),
        Param("beta1", "scalar", "float", "first-moment decay"),
        Param("beta2", "scalar", "float", "second-moment decay"),
        Param("eps", "scalar", "float", "added to the denominator"),
        Param("weight_decay", "scalar", "float", "decoupled weight decay"),
        Param("step", "scalar", "int", "the step being taken, counted from 1"),
        Param("new_param", "output", doc="n updated parameters"),
        Param("new_exp_avg", "output", doc="n updated first moments"),
        Param("new_exp_avg_sq", "output", doc="n updated second moments"),
        Param("n", "scalar", "size_t", "number of parameters"),
    )
    # Seven buffers of n floats: the largest moves about 940 MB.
    gpu_cases = ((1_000_003,), (1 << 22,), (10_000_019,), (1 << 25,))
    cpu_cases = ((7,), (1000,), (65_537,))
    dim_names = ("n",)
    flops_formula = "15 · n (decay 1, first moment 3, second moment 4, corrected update 7)"
    bytes_formula = "7 · n · 4 (read four buffers, write three)"

    def shapes(self, dims: Dims) -> dict[str, tuple[int, ...]]:
        return {
            name: dims
            for name in ("param", "grad", "exp_avg", "exp_avg_sq", "new_param", "new_exp_avg", "new_exp_avg_sq")
        }

    def extras(self, dims: Dims) -> list[Any]:
        return [*case_hyperparameters(dims), *dims]

    def flops(self, dims: Dims) -> int:
        return 15 * dims[0]

    def make_inputs(self, dims: Dims, dtype: DType, gen: torch.Generator) -> tuple[torch.Tensor, ...]:
        """An optimizer state midway through training: moments of the size the gradients have."""
        from problems.inputs import randn

        param = randn(dims, dtype, gen)
        grad = randn(dims, dtype, gen, scale=0.1)
        exp_avg = randn(dims, dtype, gen, scale=0.05)
        exp_avg_sq = randn(dims, dtype, gen, scale=0.1).square_()
        return param, grad, exp_avg, exp_avg_sq

    def reference_solution(self, *args: Any) -> tuple[torch.Tensor, ...]:
        param, grad, exp_avg, exp_avg_sq = (t.double() for t in args[:4])
        lr, beta1, beta2, eps, weight_decay, step = args[4:10]
        m = beta1 * exp_avg + (1.0 - beta1) * grad
        v = beta2 * exp_avg_sq + (1.0 - beta2) * grad * grad
        m_hat = m / (1.0 - beta1**step)
        v_hat = v / (1.0 - beta2**step)
        new_param = param * (1.0 - lr * weight_decay) - lr * m_hat / (v_hat.sqrt() + eps)
        return new_param, m, v
