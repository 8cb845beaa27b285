import torch


def solution(input: torch.Tensor, W: int, output: torch.Tensor, N: int) -> None:  # noqa: N803
    half = W // 2
    prefix = torch.cat([input.new_zeros(1, dtype=torch.float64), input.double().cumsum(0)])
    i = torch.arange(N, device=input.device)
    output.copy_(prefix[(i + half + 1).clamp(max=N)] - prefix[(i - half).clamp(min=0)])
