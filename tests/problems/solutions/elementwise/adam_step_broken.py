# Broken: forgets the bias corrections 1 - beta1^t and 1 - beta2^t.
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
    denom = new_exp_avg_sq.sqrt().add_(eps)
    torch.addcdiv(param * (1.0 - lr * weight_decay), new_exp_avg, denom, value=-lr, out=new_param)
