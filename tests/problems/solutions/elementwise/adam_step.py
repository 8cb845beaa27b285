import math

import torch


def solution(
    param: torch.Tensor,
    grad: torch.Tensor,
    exp_avg: torch.Tensor,
    exp_avg_sq: torch.Tensor,
    lr: float,
    beta1: float,
    beta2: float,
    eps: float,
    weight_decay: float,
    step: int,
    new_param: torch.Tensor,
    new_exp_avg: torch.Tensor,
    new_exp_avg_sq: torch.Tensor,
    n: int,
) -> None:
    torch.lerp(exp_avg, grad, 1.0 - beta1, out=new_exp_avg)
    torch.addcmul(exp_avg_sq * beta2, grad, grad, value=1.0 - beta2, out=new_exp_avg_sq)
    bias1 = 1.0 - beta1**step
    bias2 = 1.0 - beta2**step
    denom = (new_exp_avg_sq.sqrt() / math.sqrt(bias2)).add_(eps)
    torch.addcdiv(param * (1.0 - lr * weight_decay), new_exp_avg, denom, value=-lr / bias1, out=new_param)
