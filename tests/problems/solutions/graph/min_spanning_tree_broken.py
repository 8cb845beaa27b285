# Broken: an off-by-one in the loop adds only n - 2 edges, so the last vertex is never joined.
# ruff: noqa: N803  (Tensara's parameter names)
import torch


def solution(A: torch.Tensor, min_weight: torch.Tensor, n: int) -> None:
    weights = torch.where(A > 0, A.double(), float("inf"))
    in_tree = torch.zeros(n, dtype=torch.bool, device=A.device)
    in_tree[0] = True
    key = weights[0].clone()
    total = 0.0
    for _ in range(n - 2):
        u = int(torch.where(in_tree, float("inf"), key).argmin())
        total += float(key[u])
        in_tree[u] = True
        key = torch.minimum(key, weights[u])
    min_weight.fill_(total)
