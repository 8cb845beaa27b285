# Honest: takes its arguments as *args and unpacks them itself.
import torch


def solution(*args: object) -> None:
    a, b, c, _n = args
    torch.add(a, b, out=c)  # type: ignore[call-overload]
