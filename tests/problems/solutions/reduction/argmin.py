import torch


def solution(input: torch.Tensor, dim: int, output: torch.Tensor, shape: torch.Tensor, ndim: int) -> None:
    sizes = shape.tolist()  # host memory: a CPU tensor, read without waiting for the device
    output.copy_(torch.argmin(input.view(sizes), dim=dim).to(torch.int32))
