# Broken: compares with >=, so pixels exactly at the threshold become 255 instead of 0.
import torch


def solution(
    input_image: torch.Tensor, threshold_value: float, output_image: torch.Tensor, height: int, width: int
) -> None:
    output_image.copy_((input_image >= threshold_value).float() * 255.0)
