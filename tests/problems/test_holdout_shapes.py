"""Every problem declares the ranges its hidden shapes come from (`KernelProblem.dim_ranges`, `holdout_ranges`),
and the shapes drawn there are cases of the problem: in no public list, within the ranges, fresh for each seed, and
(on the CPU, for every problem) inputs and a reference that PyTorch computes."""

from __future__ import annotations

import pytest
import torch

from problems.library import HOLDOUT_CASES, KernelProblem
from problems.registry import builtin_problems

PROBLEMS = sorted(builtin_problems().items())


@pytest.mark.parametrize(("slug", "problem"), PROBLEMS, ids=[slug for slug, _ in PROBLEMS])
def test_every_problem_draws_hidden_shapes_outside_its_public_list(slug: str, problem: KernelProblem) -> None:
    assert isinstance(problem, KernelProblem), f"{slug} declares no ranges for hidden shapes"
    public = {tuple(c) for c in (*problem.gpu_cases, *problem.cpu_cases)}
    for kind in ("gpu", "cpu"):
        ranges = problem.dim_ranges(kind)
        assert ranges and all(low <= high for r in ranges for low, high in r)
        first = problem.holdout_cases(problem.dtypes[0], kind, seed=1)
        assert len(first) == HOLDOUT_CASES, f"{slug} ({kind}): only {len(first)} hidden shapes could be drawn"
        dims = [tuple(c["dims"]) for c in first]
        assert not set(dims) & public
        assert any(all(low <= v <= high for v, (low, high) in zip(d, r, strict=True)) for d in dims for r in ranges)
        assert [tuple(c["dims"]) for c in problem.holdout_cases(problem.dtypes[0], kind, seed=1)] == dims
        others = {tuple(c["dims"]) for s in range(2, 8) for c in problem.holdout_cases(problem.dtypes[0], kind, s)}
        assert others - set(dims), f"{slug} ({kind}): every seed draws the same shapes"
        for case in first:
            problem.buffer_shapes(case)  # the sizes make buffers


@pytest.mark.parametrize(("slug", "problem"), PROBLEMS, ids=[slug for slug, _ in PROBLEMS])
def test_every_problems_hidden_cpu_shapes_have_a_reference(slug: str, problem: KernelProblem) -> None:
    for case in problem.holdout_cases(problem.dtypes[0], "cpu", seed=3):
        inputs = tuple(t.contiguous() for t in case["create_inputs"](torch.Generator().manual_seed(0)))
        outputs = problem.reference_outputs(inputs, problem.get_extra_params(case))
        assert outputs and all(torch.isfinite(o.float()).any() or o.numel() == 0 for o in outputs)
