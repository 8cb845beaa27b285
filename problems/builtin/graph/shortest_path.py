"""shortest-path: single-source shortest path lengths on a dense directed graph."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from problems.base import DType, Param
from problems.builtin.graph._graph import GraphProblem, directed_graph
from problems.library import Dims

if TYPE_CHECKING:
    import torch

MAX_WEIGHT = 100


def unreachable_vertices(n: int) -> int:
    """Vertices with no incoming edge in a case: about 2% of them, at least two, so that whichever vertex is the
    source, at least one other cannot be reached and must read -1."""
    return max(2, n // 50)


def case_source(dims: Dims) -> int:
    """The source vertex of a case: set by its size, never vertex 0, so a kernel that ignores it fails."""
    (n,) = dims
    return 1 + (n * 7) % (n - 1)


class ShortestPath(GraphProblem):
    slug = "shortest-path"
    # Version 1 wrote +inf for an unreachable vertex and drew graphs where every vertex was reachable; Tensara's
    # reference writes -1 there, and its smallest case has unreachable vertices.
    version = 2
    title = "Single Source Shortest Path"
    description = (
        "Given a weighted directed graph as a row-major n×n float matrix, where `d_adj_matrix[i][j] > 0` is "
        "the weight of the edge i → j and 0 means there is no edge, write `d_distances[v]` = the length of "
        "the shortest path from vertex `source` to v (0 for the source itself, -1 for a vertex that cannot be "
        "reached: every case has some). Weights are whole numbers from 1 to 100, so every length is a whole "
        "number float32 holds exactly; the check allows 1e-4 relative (Tensara's bound). `source` differs "
        "between cases. The graphs are sparse-ish (about 16 edges per vertex), so paths have several hops."
    )
    score_metric = "gbps"
    parameters = (
        Param("d_adj_matrix", "input", doc="n×n, row-major; 0 = no edge"),
        Param("source", "scalar", "int", "the start vertex"),
        Param("d_distances", "output", doc="n shortest path lengths, -1 where unreachable"),
        Param("n", "scalar", "size_t", "vertices"),
    )
    # n: ragged sizes, then a 268 MB matrix.
    gpu_cases = ((255,), (1000,), (4097,), (8191,))
    cpu_cases = ((7,), (33,), (70,))
    flops_formula = "0 (scored in GB/s: the work is bounded by reading the matrix)"
    bytes_formula = "(n² + n) · 4 (read the matrix once, write the distances)"

    def shapes(self, dims: Dims) -> dict[str, tuple[int, ...]]:
        (n,) = dims
        return {"d_adj_matrix": (n, n), "d_distances": (n,)}

    def extras(self, dims: Dims) -> list[Any]:
        return [case_source(dims), dims[0]]

    def flops(self, dims: Dims) -> int:
        return 0

    def make_inputs(self, dims: Dims, dtype: DType, gen: torch.Generator) -> tuple[torch.Tensor, ...]:
        (n,) = dims
        return (directed_graph(n, gen, MAX_WEIGHT, unreachable_vertices(n)),)

    def reference_solution(self, *args: Any) -> torch.Tensor:
        import torch

        adj, source = args[0], args[1]
        n = adj.shape[0]
        weights = torch.where(adj > 0, adj.float(), float("inf"))
        dist = torch.full((n,), float("inf"), device=adj.device)
        dist[source] = 0.0
        # Bellman-Ford, all edges at once per round, until nothing improves (at most n - 1 rounds). Lengths are whole
        # numbers below 2^24, so float32 is exact.
        for _ in range(n):
            relaxed = torch.minimum(dist, (dist[:, None] + weights).amin(dim=0))
            if torch.equal(relaxed, dist):
                break
            dist = relaxed
        return torch.where(dist.isinf(), -1.0, dist).double()
