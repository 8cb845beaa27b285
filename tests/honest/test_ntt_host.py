"""The honest NTT solution of poly-multiply-ff, checked without a GPU.

`submissions/cu_ntt_poly_multiply.cu` writes each block's work as host-and-device functions whose loops stride by
thread and whose barriers vanish on the host. `ntt_host_check.cu` runs them on the host, block after block with
one thread each, over the launches' own grids, so its output is what the kernels compute. Here it must equal the
problem's reference exactly, at every GPU case's size and at the edges (n = 1, sizes just past a power of two).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
import torch

from problems.registry import get_problem

HERE = Path(__file__).resolve().parent
PROBLEM = get_problem("poly-multiply-ff")
GPU_SIZES = tuple(case["dims"][0] for case in PROBLEM.generate_test_cases("float32", "gpu"))
EDGE_SIZES = (1, 2, 3, 7, 1025, 2049)


@pytest.fixture(scope="module")
def host_check(tmp_path_factory: pytest.TempPathFactory) -> Path:
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        pytest.skip("needs nvcc on PATH")
    binary = tmp_path_factory.mktemp("ntt") / "ntt_host_check"
    subprocess.run(
        [nvcc, "-O2", "-std=c++17", "-DNTT_HOST_ONLY", "-x", "cu", str(HERE / "ntt_host_check.cu"), "-o", str(binary)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    return binary


def _inputs(n: int) -> tuple[torch.Tensor, ...]:
    """The problem's own input draw (residues with 0 and p − 1 sprinkled in) for a size of our choosing."""
    return PROBLEM.make_inputs((n,), "float32", torch.Generator().manual_seed(n))  # type: ignore[attr-defined]


@pytest.mark.nvcc
@pytest.mark.parametrize("n", sorted(set(GPU_SIZES) | set(EDGE_SIZES)))
def test_the_kernels_arithmetic_matches_the_reference(host_check: Path, n: int) -> None:
    a, b = _inputs(n)
    expected = PROBLEM.reference_outputs((a, b), [n])[0].to(torch.int64)
    text = f"{n}\n{' '.join(map(str, a.tolist()))}\n{' '.join(map(str, b.tolist()))}\n"
    run = subprocess.run([str(host_check)], input=text, capture_output=True, text=True, check=True, timeout=300)
    got = torch.tensor([int(x) for x in run.stdout.split()], dtype=torch.int64)
    assert got.shape == expected.shape
    mismatches = (got != expected).nonzero()
    assert mismatches.numel() == 0, f"first mismatch at {int(mismatches[0])}: {int(got[mismatches[0]])}"
