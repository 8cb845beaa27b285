"""The seed's GPU warm-up, run once by the launcher before the first case of a method that asks for it
(TimingMethod.seed_warmup). The samples themselves are taken by runner/launcher/harness.py."""

from __future__ import annotations


def seed_warmup() -> None:
    """The seed's GPU warm-up: ten 5000x5000 float32 matmuls, so clocks are up before the first sample."""
    import torch

    a = torch.randn(5000, 5000, device="cuda")
    b = torch.randn(5000, 5000, device="cuda")
    for _ in range(10):
        torch.matmul(a, b)
    torch.cuda.synchronize()
    del a, b
