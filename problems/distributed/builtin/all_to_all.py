"""all-to-all with uneven splits: a mixture-of-experts dispatch, each token sent to the rank of its expert."""

from __future__ import annotations

from typing import Any

import problems.distributed.builtin._collective as shared
from problems.base import DType, Param
from problems.distributed.base import Dims, DistributedProblem, RankTensors, elements_bytes


class AllToAllUneven(DistributedProblem):
    slug = "all-to-all-moe-dispatch"
    title = "All-to-All with Uneven Splits (MoE Dispatch)"
    description = (
        "Every rank holds `tokens` rows of `hidden` values in `d_input`, already sorted by destination: the first "
        "`send_splits[0]` rows go to rank 0, the next `send_splits[1]` to rank 1, and so on. Write into `d_output` "
        "the rows every rank sends to this one, in source-rank order: first rank 0's, then rank 1's; "
        "`recv_splits[s]` rows come from rank s, `recv_tokens` rows in all. The splits are uneven, some are zero, "
        "and they differ between cases and world sizes (a router's choice, fixed per case). Rows are copied: "
        "checked bit for bit." + shared.CALLING
    )
    tags = ("distributed", "collective", "all-to-all", "moe", "memory-bound")
    difficulty = "medium"
    collective = "all-to-all"
    parameters = (
        Param("d_input", "input", doc="tokens × hidden, rows sorted by destination rank"),
        Param("d_output", "output", doc="recv_tokens × hidden, rows in source-rank order"),
        Param("send_splits", "array", "size_t", "world_size row counts sent to each rank", memory="host"),
        Param("recv_splits", "array", "size_t", "world_size row counts received from each rank", memory="host"),
        Param("tokens", "scalar", "size_t", "rows this rank sends (the sum of send_splits)"),
        Param("recv_tokens", "scalar", "size_t", "rows this rank receives (the sum of recv_splits)"),
        Param("hidden", "scalar", "size_t", "values per row"),
    )
    # (tokens, hidden) per rank: a decode-sized batch, then DeepSeek-V3's hidden size at prefill sizes.
    gpu_cases = ((1001, 4096), (4096, 7168), (8191, 7168))
    cpu_cases = ((9, 5), (64, 33), (257, 17))
    dim_names = ("tokens", "hidden")
    flops_formula = "0 (a copy)"
    bytes_formula = (
        "S = tokens · hidden · sizeof(dtype) (each rank's send buffer); busbw = S / time · (world_size − 1)/world_size "
        "(nccl-tests); the floor: the most rows any rank sends to or receives from its peers, at the links' peak"
    )
    tolerances = shared.EXACT

    def splits(self, dims: Dims, world_size: int) -> list[list[int]]:
        """`splits[src][dst]` of this case at this world size."""
        return shared.moe_splits(dims[0], world_size, f"{self.slug}:{dims}:{world_size}")

    def rank_shapes(self, dims: Dims, rank: int, world_size: int) -> dict[str, tuple[int, ...]]:
        tokens, hidden = dims
        received = sum(row[rank] for row in self.splits(dims, world_size))
        return {"d_input": (tokens, hidden), "d_output": (received, hidden)}

    def rank_extras(self, dims: Dims, rank: int, world_size: int) -> list[Any]:
        splits = self.splits(dims, world_size)
        send = list(splits[rank])
        recv = [row[rank] for row in splits]
        return [send, recv, dims[0], sum(recv), dims[1]]

    def reference(self, dims: Dims, inputs: RankTensors, world_size: int) -> RankTensors:
        import torch

        splits = self.splits(dims, world_size)
        # Rank src's rows for rank dst start after the rows it sends to lower ranks.
        blocks = [list(torch.split(rank[0].double(), splits[src])) for src, rank in enumerate(inputs)]
        return [(torch.cat([blocks[src][dst] for src in range(world_size)]),) for dst in range(world_size)]

    def algorithm_bytes(self, dims: Dims, dtype: DType, world_size: int) -> int:
        return elements_bytes(dims[0] * dims[1], dtype)

    def floor_bytes(self, dims: Dims, dtype: DType, world_size: int) -> int:
        # Each direction of a link is its own limit: the busiest rank's rows out to peers, or in from them.
        splits = self.splits(dims, world_size)
        sent = max(sum(row) - row[r] for r, row in enumerate(splits))
        received = max(sum(row[r] for row in splits) - splits[r][r] for r in range(world_size))
        return elements_bytes(max(sent, received) * dims[1], dtype)
