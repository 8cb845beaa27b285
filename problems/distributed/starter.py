"""Starter code for a distributed problem: a Python solution that every rank runs with its own buffers, its rank,
the world size and the process group. Only Python: the GPU harness builds the CUDA ABI
(`DistributedProblem.cuda_signature`), but no rank slot takes a `.cu` submission yet, so a CUDA starter would
promise a path that does not run."""

from __future__ import annotations

from problems.base import DType
from problems.distributed.base import DistributedProblem
from problems.starter import param_summary


def distributed_tolerance_summary(problem: DistributedProblem, dtype: DType) -> str:
    """How every rank's outputs are checked in `dtype`, in a line (a copy's bounds are zero: bit for bit)."""
    tol = problem.tolerances[dtype]
    if tol.atol == 0 and tol.rtol == 0:
        return "every rank's outputs are compared bit for bit"
    return f"every rank's outputs: |out - ref| <= {tol.atol:g} * rms(ref) + {tol.rtol:g} * |ref|, elementwise"


def python_starter(problem: DistributedProblem, dtype: DType = "float32") -> str:
    """Source text of a Python starter that parses, joins no collective and writes nothing yet."""
    if dtype not in problem.dtypes:
        raise ValueError(f"{problem.slug} does not support {dtype}; it supports {', '.join(problem.dtypes)}")
    outputs = ", ".join(p.name for p in problem.output_params())
    sizes = ", ".join(str(n) for n in problem.world_sizes)
    lines = [f"# {problem.title} ({problem.slug}, {dtype}), on {sizes} ranks", "#"]
    lines += [f"# {line}".rstrip() for line in problem.description.splitlines()]
    lines.append("#")
    lines.append("# One rank's parameters, in order (each rank gets its own):")
    lines += [f"#   {p.name}: {param_summary(p, dtype)}" for p in problem.parameters]
    lines += [
        "#   rank: this process's rank, 0 to world_size - 1",
        "#   world_size: how many ranks run this call together",
        "#   group: an initialised torch.distributed process group over every rank (NCCL on GPUs, gloo on the CPU)",
        "#",
        f"# Checked: {distributed_tolerance_summary(problem, dtype)}, as they stand when this rank's call returns.",
        "# Work left running after the return (a thread, a peer writing this rank's buffers) does not count.",
        f"# Bytes: {problem.bytes_formula}",
        f"# Submit it at one of {sizes} ranks: `arena submit {problem.slug} FILE --world-size N` with `--fleet POOL`",
        "# or `--server URL`, or /submit with `ranks`; it runs on a runner's slot of N ranks.",
        "import torch",
        "import torch.distributed as dist",
        "",
        "",
        problem.python_signature(),
        f"    # TODO: write this rank's result into {outputs} in place, e.g. with dist.* calls on `group`.",
        "    pass",
        "",
    ]
    return "\n".join(lines)
