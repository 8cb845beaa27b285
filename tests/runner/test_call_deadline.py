"""A call that hangs in the middle of the benchmark is stopped by its batch's deadline, not the phase's."""

from __future__ import annotations

from contract.wire import MeasureConfig
from runner.clients.http import RunnerClient
from tests.runner.conftest import job_request, run_remote, submission


async def test_a_call_that_hangs_during_the_benchmark_is_stopped_by_its_batch_deadline(remote: RunnerClient) -> None:
    request = job_request(
        submission("hang_after_test.py"),
        mode="benchmark",
        measure=MeasureConfig(min_samples=5, max_samples=50, max_seconds=1.0, warmup=False),
    )
    result, _ = await run_remote(remote, request)
    assert result.error is not None and result.error.code == "timeout", result.error
    # The batch deadline's own message: the phase deadline would name the benchmark phase instead.
    assert "did not finish within" in result.error.message, result.error.message
