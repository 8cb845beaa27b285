# Honest: softmax in NumPy on views of the CPU tensors (CPU only).
import numpy as np
import torch


def solution(input_x: torch.Tensor, output_y: torch.Tensor, rows: int, cols: int) -> None:
    x = input_x.numpy()
    y = output_y.numpy()
    np.subtract(x, x.max(axis=1, keepdims=True), out=y)
    np.exp(y, out=y)
    y /= y.sum(axis=1, keepdims=True)
