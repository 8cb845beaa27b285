"""Tensara-shaped signatures through the real worker pipeline on the CPU: a scalar before the output, a shape
passed as a device array, integer outputs checked exactly, and the old slug still reaching the problem."""

from __future__ import annotations

from pathlib import Path

from tests.pipeline.test_local_pipeline import run

SOLUTIONS = Path(__file__).resolve().parents[1] / "problems" / "solutions"


async def test_argmax_with_a_shape_array_and_an_int_output_passes() -> None:
    source = (SOLUTIONS / "reduction" / "argmax.py").read_text()
    result, _ = await run("argmax", "argmax.py", source, mode="test")
    assert result.status == "passed", result.error
    assert len(result.tests) >= 3 and all(t.passed for t in result.tests)


async def test_an_int_output_that_is_off_is_a_wrong_answer_named_exactly() -> None:
    source = (SOLUTIONS / "reduction" / "argmax_broken.py").read_text()
    result, _ = await run("argmax", "argmax_broken.py", source, mode="test")
    assert result.status == "failed" and result.error is not None
    assert result.error.code == "wrong_answer"
    assert "compared exactly" in result.error.message


async def test_a_scalar_before_the_output_reaches_the_solution_in_place() -> None:
    source = (SOLUTIONS / "activation" / "leaky_relu.py").read_text()
    result, _ = await run("leaky-relu", "leaky_relu.py", source, mode="test")
    assert result.status == "passed", result.error
    broken = (SOLUTIONS / "activation" / "leaky_relu_broken.py").read_text()
    result, _ = await run("leaky-relu", "leaky_relu_broken.py", broken, mode="test")
    assert result.error is not None and result.error.code == "wrong_answer"


async def test_an_unwritten_int_output_is_reported_as_never_written() -> None:
    source = "def solution(input, dim, output, shape, ndim):\n    pass\n"
    result, _ = await run("argmax", "lazy.py", source, mode="test")
    assert result.error is not None and result.error.code == "wrong_answer"
    assert "never written" in result.error.message


async def test_the_former_slug_runs_the_renamed_problem() -> None:
    source = (SOLUTIONS / "matmul" / "matrix_multiplication.py").read_text()
    result, _ = await run("matmul", "mm.py", source, mode="test")
    assert result.status == "passed", result.error
    assert result.problem_slug in ("matmul", "matrix-multiplication")


async def test_a_job_for_an_older_version_is_refused_not_run_on_the_new_interface() -> None:
    # Queued for matmul v1 (m, k, n) before the upgrade: running it on v2 (m, n, k) would judge the wrong interface.
    source = (SOLUTIONS / "matmul" / "matrix_multiplication.py").read_text()
    result, _ = await run("matmul", "mm.py", source, mode="test", problem_version=1)
    assert result.status == "error" and result.error is not None
    assert "version 2" in result.error.message and "version 1" in result.error.message
    result, _ = await run("matmul", "mm.py", source, mode="test", problem_version=2)
    assert result.status == "passed", result.error
