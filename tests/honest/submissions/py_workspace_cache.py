# Honest: keeps a workspace per shape across calls (buffer reuse, not result reuse).
import torch

_WORKSPACES: dict[tuple, torch.Tensor] = {}


def solution(input_a: torch.Tensor, input_b: torch.Tensor, output_c: torch.Tensor, n: int) -> None:
    key = (tuple(output_c.shape), output_c.dtype, output_c.device)
    workspace = _WORKSPACES.get(key)
    if workspace is None:
        workspace = _WORKSPACES[key] = torch.empty_like(output_c)
    torch.add(input_a, input_b, out=workspace)
    output_c.copy_(workspace)
