# Honest: a host-side loop over blocks of rows, one softmax per block.
import torch


def solution(input_x: torch.Tensor, output_y: torch.Tensor, rows: int, cols: int) -> None:
    block = 64
    for start in range(0, rows, block):
        stop = min(rows, start + block)
        output_y[start:stop].copy_(torch.softmax(input_x[start:stop], dim=1))
