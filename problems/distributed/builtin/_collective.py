"""What the distributed problems share: the calling convention every description ends with, the tolerances of a
copy and of a sum over ranks, and the MoE splits of the all-to-all."""

from __future__ import annotations

import random
from typing import TYPE_CHECKING

from problems.base import DType, Tolerance
from problems.builtin.matmul._gemm import GEMM_TOLERANCES

if TYPE_CHECKING:
    import torch

# Every description ends with how the solution is called, so `arena show` and the starters say it once per problem.
CALLING = (
    "\n\nEvery rank runs `solution` in its own process with its own buffers, then `rank`, `world_size` and `group`: "
    "an initialised torch.distributed process group over all ranks (NCCL on GPUs, gloo on the CPU). A CUDA solution "
    "gets the harness's ncclComm_t and the device pointers of every rank's symmetric buffer instead of `group`. "
    "Each sample is timed on every rank; the sample's time is the slowest rank's."
)
# A gather or an exchange copies values: every element must arrive bit for bit.
EXACT: dict[DType, Tolerance] = {
    "float32": Tolerance(rtol=0.0, atol=0.0),
    "float16": Tolerance(rtol=0.0, atol=0.0),
    "bfloat16": Tolerance(rtol=0.0, atol=0.0),
}
# A sum over up to 8 ranks, rounded to the dtype after every add (a ring's order): on 2^20 standard normal values
# per rank, the worst element was off by 2.2e-3 (float16) and 1.6e-2 (bfloat16) of rms + |ref| at 8 ranks, and
# 2.4e-7 in float32; the bounds leave room for the tails of 2^26 elements and any order of the adds.
REDUCTION_TOLERANCES: dict[DType, Tolerance] = {
    "float32": Tolerance(rtol=1e-5, atol=1e-5),
    "float16": Tolerance(rtol=5e-3, atol=5e-3),
    "bfloat16": Tolerance(rtol=3e-2, atol=3e-2),
}
# A GEMM whose partial products are summed over ranks: the GEMM's bounds, bfloat16's widened as a sum's.
FUSED_GEMM_TOLERANCES: dict[DType, Tolerance] = {**GEMM_TOLERANCES, "bfloat16": REDUCTION_TOLERANCES["bfloat16"]}


def moe_splits(tokens: int, world_size: int, seed: str) -> list[list[int]]:
    """`splits[src][dst]`: how many of rank src's `tokens` rows go to rank dst, as a router skewed toward some
    experts sends them. Drawn from `seed` (the problem, the case and the world size), so a case's shapes are fixed
    and can be shown, yet differ between cases and world sizes: no split pattern is one a solution may assume.
    Every row of the matrix sums to `tokens`; with 3 or more ranks, each source skips one destination entirely."""
    rng = random.Random(seed)
    splits = []
    for _ in range(world_size):
        weights = [rng.paretovariate(1.2) for _ in range(world_size)]
        if world_size > 2:
            weights[rng.randrange(world_size)] = 0.0
        total = sum(weights)
        shares = [tokens * w / total for w in weights]
        counts = [int(s) for s in shares]
        # Largest remainders first, so the row sums to `tokens` exactly.
        for i in sorted(range(world_size), key=lambda d: counts[d] - shares[d])[: tokens - sum(counts)]:
            counts[i] += 1
        splits.append(counts)
    return splits


def sum_of_ranks(tensors: list[torch.Tensor]) -> torch.Tensor:
    """The float64 sum of one tensor from each rank: the reductions' reference."""
    total = tensors[0].double().clone()
    for t in tensors[1:]:
        total += t.double()
    return total
