# Broken: rounds pixel values to the nearest bin instead of flooring them.
import torch


def solution(image: torch.Tensor, num_bins: int, histogram: torch.Tensor, height: int, width: int) -> None:
    bins = image.reshape(-1).round().long().clamp(0, num_bins - 1)
    histogram.copy_(torch.bincount(bins, minlength=num_bins).float())
