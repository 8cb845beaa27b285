"""One submission through the worker pipeline on the CPU: verdicts, figures and error messages."""

from __future__ import annotations

from pathlib import Path

import pytest

from contract.wire import JobEvent, JobRequest, MeasureConfig, SubmissionResult
from runner.job.run import run_job

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
FAST = MeasureConfig(target_cv=0.5, min_samples=3, max_samples=50, max_seconds=1.0)


def request_for(slug: str, file_name: str, source: str, language: str = "python", **kw) -> JobRequest:
    return JobRequest(
        submission_id=f"t-{slug}-{abs(hash(source)) % 10**8}",
        problem_slug=slug,
        language=language,
        file_name=file_name,
        source=source,
        device_kind="cpu",
        measure=FAST,
        seed=1234,
        **kw,
    )


# A `host_busy` answer (the host too loaded for the judge to tell its own pauses from hidden work) is no verdict:
# the run is tried again, as the dispatcher does, before a test looks at the result.
HOST_BUSY_RETRIES = 2


def host_busy(result: SubmissionResult) -> bool:
    return result.error is not None and result.error.code == "host_busy"


async def run(
    slug: str, file_name: str, source: str, *, retry_host_busy: bool = True, **kw
) -> tuple[SubmissionResult, list[JobEvent]]:
    for _ in range(HOST_BUSY_RETRIES + 1):
        events: list[JobEvent] = []
        result = await run_job(request_for(slug, file_name, source, **kw), events.append, timeout_s=120)
        if not (retry_host_busy and host_busy(result)):
            break
    return result, events


async def test_correct_python_solution_passes_and_reports_gflops_for_every_case():
    result, events = await run("vector_add", "vector_add.py", (EXAMPLES / "vector_add.py").read_text())
    assert result.status == "passed", result.error
    assert len(result.tests) == len(result.timings) >= 3
    assert all(t.passed for t in result.tests)
    for timing in result.timings:
        assert timing.gflops > 0 and timing.gbps > 0 and timing.samples >= 3
        assert timing.flops == timing.dims[0]
        assert timing.method == "cpu"
    assert result.geomean_gflops is not None and result.geomean_gflops > 0
    assert min(t.gflops for t in result.timings) <= result.geomean_gflops <= max(t.gflops for t in result.timings)
    types = [e.type for e in events]
    assert types[0] == "accepted" and types[-1] == "done"
    assert types.count("test_case") == types.count("benchmark_case") == len(result.tests)
    assert [e.seq for e in events] == list(range(1, len(events) + 1))


async def test_test_mode_verifies_without_timing():
    result, events = await run("vector_add", "v.py", (EXAMPLES / "vector_add.py").read_text(), mode="test")
    assert result.status == "passed"
    assert result.tests and not result.timings
    assert "benchmark_case" not in {e.type for e in events}


async def test_wrong_solution_fails_naming_the_case_index_and_errors():
    result, _ = await run("vector_add", "v.py", (EXAMPLES / "vector_add_wrong.py").read_text())
    assert result.status == "failed"
    assert result.error is not None and result.error.code == "wrong_answer"
    first = result.tests[0]
    assert not first.passed
    assert first.name in result.error.message
    n = first.dims[0]
    assert first.details["first_mismatch_index"] == [n - 1]
    assert first.details["non_finite"] == 1
    assert "max abs error" in result.error.message and "max rel error" in result.error.message


async def test_wrong_matmul_reports_max_absolute_and_relative_error():
    result, _ = await run("matrix-multiplication", "m.py", (EXAMPLES / "matmul_wrong.py").read_text())
    assert result.status == "failed"
    details = result.tests[-1].details
    assert details["max_abs_error"] > 1.0
    assert details["mismatches"] > 0


async def test_syntax_error_points_at_the_line():
    result, _ = await run("vector_add", "bad.py", "import torch\n\ndef solution(a, b, c, n)\n    pass\n")
    assert result.status == "error"
    assert result.error.code == "syntax_error"
    assert "line 3" in result.error.message


async def test_exception_at_import_is_reported_with_its_traceback():
    result, _ = await run("vector_add", "imp.py", "import torch\nraise ValueError('boom at import')\n")
    assert result.error.code == "import_error"
    assert "boom at import" in result.error.message
    assert "ValueError" in result.error.log


async def test_module_without_solution_is_reported():
    result, _ = await run("vector_add", "nosol.py", "def solve(a, b, c, n):\n    c.copy_(a + b)\n")
    assert result.error.code == "missing_solution"
    assert "def solution" in result.error.message


async def test_exception_inside_solution_names_the_case():
    source = "def solution(a, b, c, n):\n    raise RuntimeError('kernel exploded')\n"
    result, _ = await run("vector_add", "boom.py", source)
    assert result.error.code == "runtime_error"
    assert "kernel exploded" in result.error.message and "n=" in result.error.message


async def test_worker_crash_becomes_an_error_result():
    source = "import os\n\ndef solution(a, b, c, n):\n    os.abort()\n"
    result, _ = await run("vector_add", "abort.py", source)
    assert result.status == "error"
    assert result.error.code == "crashed"
    assert "SIGABRT" in result.error.message


async def test_unsupported_dtype_is_refused_before_running():
    import problems.registry as registry

    limited = next((p for p in registry.builtin_problems().values() if "float16" not in p.dtypes), None)
    if limited is None:
        pytest.skip("every problem supports float16")
    result, _ = await run(limited.slug, "x.py", "def solution(*a):\n    pass\n", dtype="float16")
    assert result.error.code == "unsupported_dtype"


@pytest.mark.nvcc
async def test_cuda_compile_error_returns_the_compiler_output():
    source = '#include <cuda_runtime.h>\nextern "C" void solution(const float* a) { undeclared_thing(); }\n'
    result, events = await run("vector_add", "bad.cu", source, language="cuda")
    assert result.error.code == "compile_error"
    assert "undeclared_thing" in result.error.log
    assert "compiling" in {e.type for e in events}


@pytest.mark.nvcc
async def test_cuda_without_extern_c_is_told_to_add_it():
    source = "#include <cuda_runtime.h>\nvoid solution(const float* a, const float* b, float* c, size_t n) {}\n"
    result, _ = await run("vector_add", "mangled.cu", source, language="cuda")
    assert result.error.code == "missing_solution"
    assert 'extern "C"' in result.error.message


@pytest.mark.nvcc
async def test_cuda_on_a_machine_without_gpu_compiles_then_says_so():
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU")
    result, _ = await run("vector_add", "vector_add.cu", (EXAMPLES / "vector_add.cu").read_text(), language="cuda")
    assert result.error.code == "no_gpu"
    assert "no GPU" in result.error.message


async def test_a_solution_that_freezes_the_clock_is_timed_at_its_true_cost():
    # The launcher's harness binds its clock before the submission is imported, so the patch misses it.
    source = (
        "import time\n"
        "import torch\n\n"
        "time.perf_counter = lambda: 0.0\n"
        "time.perf_counter_ns = lambda: 0\n\n"
        "def solution(a, b, c, n):\n"
        "    torch.add(a, b, out=c)\n"
    )
    result, _ = await run("vector_add", "frozen_clock.py", source)
    assert result.status == "passed", result.error
    assert all(t.runtime_median_us > 0.5 for t in result.timings)


async def test_ranked_runs_ignore_a_requested_seed_and_draw_fresh_inputs():
    import torch

    from problems.registry import get_problem

    cases = get_problem("vector_add").generate_test_cases("float32", "cpu")
    # Case i draws from seed + i: the first input value of every case under seed 1234.
    known = [float(c["create_inputs"](torch.Generator().manual_seed(1234 + i))[0][0]) for i, c in enumerate(cases)]
    # Correct only on the inputs that seed 1234 gives: it passes exactly when the run used that seed.
    source = (
        "import torch\n\n"
        f"KNOWN = {known!r}\n\n"
        "def solution(a, b, c, n):\n"
        "    if any(abs(float(a[0]) - k) < 1e-6 for k in KNOWN):\n"
        "        torch.add(a, b, out=c)\n"
        "    else:\n"
        "        c.zero_()\n"
    )
    seeded, _ = await run("vector_add", "seeded.py", source, mode="test")
    assert seeded.status == "passed", seeded.error
    ranked, _ = await run("vector_add", "seeded.py", source, mode="ranked")
    assert ranked.status == "failed"
    assert ranked.error.code == "wrong_answer"


async def test_a_shape_specialised_solution_passes_test_mode_and_is_refused_for_ranking():
    source = (EXAMPLES / "shape_specialised_vector_add.py").read_text()
    tested, _ = await run("vector_add", "special.py", source, mode="test")
    assert tested.status == "passed", tested.error
    ranked, events = await run("vector_add", "special.py", source, mode="ranked")
    assert ranked.status == "failed" and ranked.error is not None and ranked.error.code == "wrong_answer"
    assert "hidden test shape failed" in ranked.error.message and "not shown" in ranked.error.message
    from problems.registry import get_problem

    public = {tuple(c["dims"]) for c in get_problem("vector_add").generate_test_cases("float32", "cpu")}
    shown = {tuple(t.dims) for t in ranked.tests} | {tuple(e.test.dims) for e in events if e.test is not None}
    assert shown <= public, "no hidden shape reaches the result or the events"


async def test_an_honest_ranked_run_is_verified_on_hidden_shapes_too():
    ranked, _ = await run("vector_add", "vector_add.py", (EXAMPLES / "vector_add.py").read_text(), mode="ranked")
    assert ranked.status == "passed", ranked.error
    assert "Also verified on 2 hidden shapes, not timed (ranked runs only)." in ranked.notes
    assert len(ranked.tests) == len(ranked.timings) == 3  # the public cases alone are listed and timed
