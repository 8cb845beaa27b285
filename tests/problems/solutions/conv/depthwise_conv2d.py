# ruff: noqa: N803  (Tensara's parameter names)
import torch
import torch.nn.functional as F  # noqa: N812


def solution(
    input: torch.Tensor,
    kernel: torch.Tensor,
    output: torch.Tensor,
    C: int,
    H: int,
    W: int,
    K: int,
) -> None:
    # Accumulate in float32 whatever the storage type, as the problem asks.
    y = F.conv2d(input.float().view(1, C, H, W), kernel.float().view(C, 1, K, K), padding=K // 2, groups=C)
    output.copy_(y.view(C, H, W))
