import torch


def solution(adj_matrix: torch.Tensor, output: torch.Tensor, n: int) -> None:
    dist = torch.where(adj_matrix > 0, adj_matrix, float("inf"))
    dist.fill_diagonal_(0.0)
    for k in range(n):
        dist = torch.minimum(dist, dist[:, k : k + 1] + dist[k : k + 1, :])
    output.copy_(torch.where(dist.isinf(), -1.0, dist))
