import torch


def solution(
    input_image: torch.Tensor, threshold_value: float, output_image: torch.Tensor, height: int, width: int
) -> None:
    output_image.copy_(input_image > threshold_value)
