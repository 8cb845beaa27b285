# Honest: softmax along `dim` in NumPy on views of the CPU tensors (CPU only).
import numpy as np
import torch


def solution(input: torch.Tensor, dim: int, output: torch.Tensor, shape: torch.Tensor, ndim: int) -> None:
    x = input.numpy()
    y = output.numpy()
    np.subtract(x, x.max(axis=dim, keepdims=True), out=y)
    np.exp(y, out=y)
    y /= y.sum(axis=dim, keepdims=True)
