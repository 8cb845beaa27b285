"""all-pairs-shortest-path: the length of the shortest path between every ordered pair of vertices."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from problems.base import DType, Param
from problems.builtin.graph._graph import GraphProblem, directed_graph
from problems.library import Dims

if TYPE_CHECKING:
    import torch

MAX_WEIGHT = 100


def unreachable_sources(n: int) -> int:
    """Vertices with no incoming edge in a case: about 1% of them, at least one."""
    return max(1, n // 100)


def floyd_warshall(adj: torch.Tensor) -> torch.Tensor:
    """Shortest path lengths (inf where there is no path) of a 0-means-no-edge adjacency matrix, in float32: every
    finite length is a whole number below 2^24, so float32 is exact here."""
    import torch

    dist = torch.where(adj > 0, adj.float(), float("inf"))
    dist.fill_diagonal_(0.0)
    for k in range(dist.shape[0]):
        # Row k and column k do not change in step k (dist[k][k] = 0), so updating in place is safe.
        torch.minimum(dist, dist[:, k : k + 1] + dist[k : k + 1, :], out=dist)
    return dist


class AllPairsShortestPath(GraphProblem):
    slug = "all-pairs-shortest-path"
    title = "All-Pairs Shortest Path"
    description = (
        "Given a weighted directed graph as a row-major n×n float matrix, where `adj_matrix[i][j] > 0` is the "
        "weight of the edge i → j and 0 means there is no edge (the diagonal is 0), write `output[i][j]` = "
        "the length of the shortest path from i to j, 0 on the diagonal, and -1 where j cannot be reached "
        "from i. Weights are whole numbers from 1 to 100, so every length is a whole number float32 holds "
        "exactly; the check allows 1e-4 relative (Tensara's bound). About 1% of the vertices have no incoming "
        "edges."
    )
    parameters = (
        Param("adj_matrix", "input", doc="n×n, row-major; 0 = no edge"),
        Param("output", "output", doc="n×n shortest path lengths, -1 where unreachable"),
        Param("n", "scalar", "size_t", "vertices"),
    )
    # n: ragged sizes, then 2048 (17 GFLOP of Floyd-Warshall).
    gpu_cases = ((255,), (1000,), (1531,), (2048,))
    cpu_cases = ((7,), (33,), (70,))
    flops_formula = "2 · n³ (Floyd-Warshall: an add and a min per (i, j, k))"
    bytes_formula = "2 · n² · 4 (read the matrix, write the distances)"

    def shapes(self, dims: Dims) -> dict[str, tuple[int, ...]]:
        (n,) = dims
        return {"adj_matrix": (n, n), "output": (n, n)}

    def extras(self, dims: Dims) -> list[Any]:
        return list(dims)

    def flops(self, dims: Dims) -> int:
        (n,) = dims
        return 2 * n**3

    def make_inputs(self, dims: Dims, dtype: DType, gen: torch.Generator) -> tuple[torch.Tensor, ...]:
        (n,) = dims
        return (directed_graph(n, gen, MAX_WEIGHT, unreachable_sources(n)),)

    def reference_solution(self, *args: Any) -> torch.Tensor:
        import torch

        dist = floyd_warshall(args[0])
        return torch.where(dist.isinf(), -1.0, dist).double()
