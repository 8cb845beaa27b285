"""The distributed harness on one GPU: what a single device can check of the multi-GPU path.

One rank (a world size no board takes, allowed for this check): the Python path over NCCL, the ranks released by
the device-side flag and timed by events on the rank's device, and the CUDA ABI built against NCCL and called with
the harness's communicator and the peers' buffers (CUDA IPC; here the rank's own).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from problems.distributed.registry import get_distributed_problem
from runner.distributed.harness import run_distributed
from runner.host.compile import cuda_arch

pytestmark = pytest.mark.gpu

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "distributed"


def arch() -> str:
    import torch

    return cuda_arch(torch.cuda.get_device_capability())


def test_a_python_all_reduce_passes_on_one_gpu_rank_released_on_the_device() -> None:
    problem = get_distributed_problem("all-reduce")
    run = run_distributed(problem, EXAMPLES / "all_reduce.py", 1, "float32", device_kind="gpu", cases=[0], samples=5)
    assert run.passed, (run.rank_errors, run.failures)
    # The device's wait on the flag where the driver offers it, else the barrier and spin, with the reason.
    assert len(run.cases) == 1 and run.cases[0].release.startswith(("device", "host barrier and spin ("))
    assert all(0 < t < 1.0 for t in run.cases[0].rank_seconds[0])


@pytest.mark.nvcc
@pytest.mark.parametrize(
    ("slug", "example"), [("all-reduce", "all_reduce_nccl.cu"), ("all-gather", "all_gather_peer_copy.cu")]
)
def test_a_cuda_solution_builds_against_nccl_and_passes_on_one_gpu_rank(slug: str, example: str) -> None:
    problem = get_distributed_problem(slug)
    run = run_distributed(
        problem, EXAMPLES / example, 1, "float32", device_kind="gpu", cases=[0], samples=5, arch=arch()
    )
    assert run.passed, (run.rank_errors, run.failures)
    assert all(0 < t < 1.0 for t in run.cases[0].rank_seconds[0])


@pytest.mark.nvcc
def test_a_cuda_solution_that_writes_nothing_fails_on_its_rank(tmp_path: Path) -> None:
    source = tmp_path / "nothing.cu"
    source.write_text(
        '#include <nccl.h>\nextern "C" void solution(const float* a, float* b, size_t n, int rank, int world_size,'
        " ncclComm_t comm, void* const* peers, size_t bytes) {}\n"
    )
    problem = get_distributed_problem("all-reduce")
    run = run_distributed(problem, source, 1, "float32", device_kind="gpu", cases=[0], samples=1, arch=arch())
    assert not run.passed and run.verdict == "wrong_answer"
    assert {f.rank for f in run.failures} == {0}
