# Broken: scans 4096-value tiles and adds only the total of the tile before, not of every earlier tile.
import torch


def solution(input: torch.Tensor, output: torch.Tensor, n: int) -> None:
    tile = 4096
    padded = torch.nn.functional.pad(input, (0, (-n) % tile)).reshape(-1, tile)
    local = padded.cumsum(1, dtype=torch.int32)
    carry = torch.zeros_like(local[:, :1])
    carry[1:] = local[:-1, -1:]
    output.copy_((local + carry).reshape(-1)[:n])
