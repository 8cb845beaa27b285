"""A hostile all-gather: rank 0 does nothing but swap its output's storage for a file both ranks map, and returns;
rank 1 gathers and then writes rank 0's output through that file, a buffer it was never given. On a GPU the same
threat is a peer storing through a CUDA IPC pointer after rank 0's clock stopped. The harness reads the buffer it
gave (not the swapped storage) as it stood at the return, and names the swap."""

import sys
from pathlib import Path

import torch
import torch.distributed as dist

# The ranks of one job share its folder (the rank process's first argument), so they can meet there; the file
# goes when the harness removes the job.
SHARED = str(Path(sys.argv[1]) / "peer-writes")


def _mapped(numel: int, dtype: torch.dtype) -> torch.Tensor:
    return torch.from_file(SHARED, shared=True, size=numel, dtype=dtype)


def solution(
    d_input: torch.Tensor, d_output: torch.Tensor, n: int, rank: int, world_size: int, group: dist.ProcessGroup
) -> None:
    if rank == 0:
        d_output.set_(_mapped(d_output.numel(), d_output.dtype))
        dist.send(d_input, dst=1, group=group)  # rank 1 needs rank 0's input to do its part
        return
    received = torch.empty_like(d_input)
    dist.recv(received, src=0, group=group)
    d_output.copy_(torch.cat([received, d_input]))
    # Rank 0's output, written from rank 1 through the shared file after rank 0 has returned.
    _mapped(d_output.numel(), d_output.dtype).copy_(d_output)
