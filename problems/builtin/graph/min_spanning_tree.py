"""min-spanning-tree: the total weight of a minimum spanning tree of a connected undirected graph."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from problems.base import DType, Param, TimeFloor
from problems.builtin.graph._graph import GraphProblem, undirected_graph
from problems.library import Dims

if TYPE_CHECKING:
    import torch

# n·MAX_WEIGHT stays far below 2^24, so any float32 sum of tree weights is exact.
MAX_WEIGHT = 1000


def boruvka_weight(adj: torch.Tensor) -> float:
    """The MST weight by Borůvka's rounds, each one vectorised over the whole matrix; -1 if disconnected.

    Equal weights are broken by edge index (weight·n² + lo·n + hi, an int64 key unique per edge), which keeps the
    cheapest-edge choices free of cycles longer than two. The total weight is the same for every MST anyway.
    """
    import torch

    n = adj.shape[0]
    dev = adj.device
    none = torch.iinfo(torch.int64).max
    idx = torch.arange(n, device=dev)
    lo = torch.minimum(idx[:, None], idx[None, :])
    hi = torch.maximum(idx[:, None], idx[None, :])
    weight = adj.to(torch.int64)
    keys = torch.where(weight > 0, weight * (n * n) + lo * n + hi, none)
    del lo, hi, weight
    comp = idx.clone()
    total = 0
    while True:
        cheapest = torch.where(comp[:, None] == comp[None, :], none, keys).amin(dim=1)
        best = torch.full((n,), none, device=dev).scatter_reduce(0, comp, cheapest, "amin")
        labels = (best < none).nonzero().squeeze(1)
        if labels.numel() == 0:
            break
        chosen = best[labels]
        total += int((chosen.unique() // (n * n)).sum())
        edge = chosen % (n * n)
        u, v = comp[edge // n], comp[edge % n]
        parent = idx.clone()
        parent[labels] = torch.where(u == labels, v, u)
        # Two components that chose the same edge point at each other: the smaller label becomes the root.
        mutual = (parent[parent] == idx) & (parent != idx) & (idx < parent)
        parent = torch.where(mutual, idx, parent)
        while True:
            jumped = parent[parent]
            if torch.equal(jumped, parent):
                break
            parent = jumped
        comp = parent[comp]
    return float(total) if bool((comp == comp[0]).all()) else -1.0


class MinSpanningTree(GraphProblem):
    slug = "min-spanning-tree"
    title = "Minimum Spanning Tree"
    description = (
        "Given a weighted undirected graph as a symmetric row-major n×n float matrix, where `A[i][j] = "
        "A[j][i] > 0` is the weight of the edge between i and j and 0 means there is no edge, write the total "
        "weight of a minimum spanning tree to `min_weight[0]` (-1 if the graph were disconnected; the graphs "
        "here are always connected). Weights are whole numbers from 1 to 1000 with many ties; the total is "
        "the same for every minimum spanning tree, is a whole number below 2^24 that float32 holds exactly; "
        "the check allows 1e-4 relative (Tensara's bound)."
    )
    score_metric = "gbps"
    parameters = (
        Param("A", "input", doc="n×n, symmetric, row-major; 0 = no edge"),
        Param("min_weight", "output", doc="one float: the tree's total weight"),
        Param("n", "scalar", "size_t", "vertices"),
    )
    # n: ragged sizes, then a 67 MB matrix.
    gpu_cases = ((255,), (1000,), (2048,), (4097,))
    cpu_cases = ((7,), (33,), (70,))
    flops_formula = "0 (scored in GB/s: the work is bounded by reading the matrix)"
    bytes_formula = "n² · 4 + 4 (read the matrix, write one float)"
    time_floor = TimeFloor(read_share=0.5, why="The symmetric matrix is known from one half of it.")

    def shapes(self, dims: Dims) -> dict[str, tuple[int, ...]]:
        (n,) = dims
        return {"A": (n, n), "min_weight": (1,)}

    def extras(self, dims: Dims) -> list[Any]:
        return list(dims)

    def flops(self, dims: Dims) -> int:
        return 0

    def make_inputs(self, dims: Dims, dtype: DType, gen: torch.Generator) -> tuple[torch.Tensor, ...]:
        (n,) = dims
        return (undirected_graph(n, gen, MAX_WEIGHT),)

    def reference_solution(self, *args: Any) -> torch.Tensor:
        import torch

        return torch.tensor([boruvka_weight(args[0])], dtype=torch.float64, device=args[0].device)
