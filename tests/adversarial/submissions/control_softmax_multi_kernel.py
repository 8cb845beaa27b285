# Class: control (honest, no cheat)
# A multi-kernel PyTorch softmax along `dim`: max, subtract, exp, sum and divide are five separate kernels, all on
# the current stream, the last ones working in place on the output buffer. Every kernel finishes before the
# stop event, so this must pass: the integrity checks must not flag ordinary multi-launch Python code.
import torch


def solution(input: torch.Tensor, dim: int, output: torch.Tensor, shape: torch.Tensor, ndim: int) -> None:
    peak = input.amax(dim=dim, keepdim=True)
    torch.sub(input, peak, out=output)
    output.exp_()
    output.div_(output.sum(dim=dim, keepdim=True))
