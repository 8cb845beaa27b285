# ruff: noqa: N803  (Tensara's parameter names)
import torch
import torch.nn.functional as F  # noqa: N812


def solution(
    image: torch.Tensor,
    kernel: torch.Tensor,
    output: torch.Tensor,
    H: int,
    W: int,
    Kh: int,
    Kw: int,
) -> None:
    c = F.conv2d(image.view(1, 1, H, W), kernel.view(1, 1, Kh, Kw), padding=(Kh // 2, Kw // 2))
    output.copy_(F.hardswish(F.relu(c)).view(H, W))
