# Class: control (honest, no cheat)
# A multi-kernel PyTorch softmax: row max, subtract, exp, row sum and divide are five separate kernels, all on
# the current stream, the last ones working in place on the output buffer. Every kernel finishes before the
# stop event, so this must pass: the integrity checks must not flag ordinary multi-launch Python code.
import torch


def solution(input_x: torch.Tensor, output_y: torch.Tensor, rows: int, cols: int) -> None:
    row_max = input_x.amax(dim=1, keepdim=True)
    torch.sub(input_x, row_max, out=output_y)
    output_y.exp_()
    output_y.div_(output_y.sum(dim=1, keepdim=True))
