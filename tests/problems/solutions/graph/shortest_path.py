import torch


def solution(d_adj_matrix: torch.Tensor, source: int, d_distances: torch.Tensor, n: int) -> None:
    # Dijkstra on the dense matrix: n rounds of "settle the closest unsettled vertex, relax its row".
    weights = torch.where(d_adj_matrix > 0, d_adj_matrix, float("inf"))
    dist = torch.full((n,), float("inf"), device=d_adj_matrix.device)
    dist[source] = 0.0
    settled = torch.zeros(n, dtype=torch.bool, device=d_adj_matrix.device)
    for _ in range(n):
        u = int(torch.where(settled, float("inf"), dist).argmin())
        settled[u] = True
        dist = torch.minimum(dist, dist[u] + weights[u])
    # Tensara's convention: a vertex the source cannot reach reads -1.
    d_distances.copy_(torch.where(dist.isinf(), -1.0, dist))
