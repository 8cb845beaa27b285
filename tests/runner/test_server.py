"""The runner's HTTP API: signing, idempotency, the queue, cancelling, resumable events, retention, metrics.

Each test runs the real application (`create_app`) on a real port of 127.0.0.1, with real sandboxed workers.
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import aiohttp
import pytest

from contract.wire import JobEvent, ValidateRequest
from runner.auth import SIGNATURE_HEADER, TIMESTAMP_HEADER, sign_headers
from runner.clients.http import RunnerClient, RunnerError
from runner.daemon.server import create_app
from runner.settings import RunnerSettings, SettingsError
from tests.runner.conftest import good_request, job_request, run_remote, serve_app, settings_for, submission


async def _raw(url: str, method: str, path: str, headers: dict[str, str], body: bytes = b"") -> tuple[int, dict]:
    async with aiohttp.ClientSession() as session:
        async with session.request(method, url + path, data=body or None, headers=headers) as response:
            return response.status, json.loads(await response.read() or b"{}")


async def _wait_state(client: RunnerClient, job_id: str, state: str, timeout_s: float = 30.0) -> None:
    deadline = time.monotonic() + timeout_s
    while (await client.status(job_id)).state != state:
        assert time.monotonic() < deadline, f"job {job_id} never reached {state}"
        await asyncio.sleep(0.05)


async def test_requests_without_a_valid_fresh_signature_get_401(state_dir: Path, secret: str) -> None:
    async with serve_app(settings_for(state_dir, secret)) as url:
        key = secret.encode()
        assert (await _raw(url, "GET", "/v1/health", {}))[0] == 401
        wrong = sign_headers(b"not-the-secret-at-all", "GET", "/v1/health")
        assert (await _raw(url, "GET", "/v1/health", wrong))[0] == 401
        stale = sign_headers(key, "GET", "/v1/health", now=time.time() - 61)
        status, body = await _raw(url, "GET", "/v1/health", stale)
        assert status == 401 and "clock" in body["error"]["message"]
        other_path = sign_headers(key, "GET", "/v1/jobs/abc")
        assert (await _raw(url, "GET", "/v1/health", other_path))[0] == 401
        good = sign_headers(key, "GET", "/v1/health")
        assert (await _raw(url, "GET", "/v1/health", good))[0] == 200
        status, body = await _raw(url, "GET", "/v1/health", good)
        assert status == 401 and body["error"]["code"] == "unauthorized", "a replayed request must fail"
        tampered = {**sign_headers(key, "GET", "/v1/health"), TIMESTAMP_HEADER: f"{time.time():.6f}"}
        assert (await _raw(url, "GET", "/v1/health", tampered))[0] == 401
        async with RunnerClient(url, key) as client:
            assert (await client.health()).slots == 1


async def test_the_openapi_document_is_public_and_describes_the_api(state_dir: Path, secret: str) -> None:
    async with serve_app(settings_for(state_dir, secret)) as url:
        status, doc = await _raw(url, "GET", "/v1/openapi.json", {})
    assert status == 200
    assert doc["openapi"].startswith("3.")
    assert {"/v1/jobs", "/v1/jobs/{job_id}", "/v1/jobs/{job_id}/events", "/v1/problems/validate"} <= set(doc["paths"])
    assert {"JobRequest", "JobStatus", "JobEvent", "ValidateReport", "ApiError"} <= set(doc["components"]["schemas"])
    assert SIGNATURE_HEADER in json.dumps(doc["components"]["securitySchemes"])


async def test_post_is_idempotent_on_the_submission_id(state_dir: Path, secret: str) -> None:
    async with serve_app(settings_for(state_dir, secret)) as url, RunnerClient(url, secret.encode()) as client:
        request = good_request()
        first = await client.submit(request)
        again = await client.submit(request)
        assert first.created and not again.created
        assert again.job_id == first.job_id
        changed = request.model_copy(update={"mode": "benchmark"})
        with pytest.raises(RunnerError) as conflict:
            await client.submit(changed)
        assert conflict.value.status == 409 and conflict.value.code == "conflict"
        result = await client.wait_result(first.job_id)
        assert result is not None and result.status == "passed"
        assert {"queue", "startup", "test", "teardown", "total"} <= set(result.phase_seconds)
        with pytest.raises(RunnerError) as finished:
            await client.cancel(first.job_id)
        assert finished.value.status == 409 and "already finished" in finished.value.message
        # A dispatcher that restarted finds the job by the key it posted it under, and only that job.
        found = await client.find(request.submission_id)
        assert found is not None and found.job_id == first.job_id and found.state == "done"
        for hostile in ("job-999", "²", "\x00", "%00", "../v1/health", "<script>", "x" * 5000, " "):
            assert await client.find(hostile) is None, hostile
        status, body = await _raw(url, "GET", "/v1/jobs", sign_headers(secret.encode(), "GET", "/v1/jobs"))
        assert status == 400 and "submission_id" in body["error"]["message"]


async def test_a_full_queue_answers_429_and_cancel_stops_jobs(state_dir: Path, secret: str) -> None:
    settings = settings_for(state_dir, secret, max_queue=1, test_timeout_s=60.0)
    async with serve_app(settings) as url, RunnerClient(url, secret.encode()) as client:
        running = await client.submit(job_request(submission("infinite_loop.py")))
        await _wait_state(client, running.job_id, "running")
        queued = await client.submit(good_request())
        assert queued.queue_position == 1
        signed = sign_headers(secret.encode(), "POST", "/v1/jobs", body := good_request().model_dump_json().encode())
        status, error = await _raw(url, "POST", "/v1/jobs", {**signed, "Content-Type": "application/json"}, body)
        assert status == 429 and error["error"]["code"] == "queue_full"

        assert (await client.cancel(queued.job_id)).state == "cancelled"
        await client.cancel(running.job_id)
        await _wait_state(client, running.job_id, "cancelled", timeout_s=60)
        events = [e async for e in client.events(running.job_id)]
        assert events[-1].type == "done" and events[-1].result is None
        assert (await client.cancel(running.job_id)).state == "cancelled", "cancelling twice is harmless"


async def test_events_resume_after_a_dropped_connection(state_dir: Path, secret: str) -> None:
    async with serve_app(settings_for(state_dir, secret)) as url, RunnerClient(url, secret.encode()) as client:
        accepted = await client.submit(good_request())
        first: list[JobEvent] = []
        async for event in client.events(accepted.job_id):
            first.append(event)
            if len(first) == 2:
                break  # the connection is dropped here
        rest = [e async for e in client.events(accepted.job_id, after=first[-1].seq)]
        seqs = [e.seq for e in first + rest]
        assert seqs == list(range(1, len(seqs) + 1))
        assert rest[-1].type == "done" and rest[-1].result is not None
        replay = [e async for e in client.events(accepted.job_id, after=3)]
        assert [e.seq for e in replay] == seqs[3:]
        path = f"/v1/jobs/{accepted.job_id}/events?after=x"
        status, body = await _raw(url, "GET", path, sign_headers(secret.encode(), "GET", path))
        assert status == 400 and "after" in body["error"]["message"]


async def test_finished_jobs_are_dropped_after_the_retention_time(state_dir: Path, secret: str) -> None:
    async with serve_app(settings_for(state_dir, secret, retention_s=1.0)) as url:
        async with RunnerClient(url, secret.encode()) as client:
            accepted = await client.submit(good_request())
            await client.wait_result(accepted.job_id)
            assert (await client.status(accepted.job_id)).state == "done"
            gone: RunnerError | None = None
            deadline = asyncio.get_running_loop().time() + 60
            while gone is None and asyncio.get_running_loop().time() < deadline:
                await asyncio.sleep(0.2)
                try:
                    await client.status(accepted.job_id)
                except RunnerError as exc:
                    gone = exc
            assert gone is not None, "the finished job was still readable long after its retention time"
            assert gone.status == 404 and gone.code == "not_found"


async def test_bad_requests_get_a_message_that_says_what_to_fix(state_dir: Path, secret: str) -> None:
    async with serve_app(settings_for(state_dir, secret)) as url:
        body = json.dumps({"submission_id": "x", "problem_slug": "vector_add"}).encode()
        headers = {**sign_headers(secret.encode(), "POST", "/v1/jobs", body), "Content-Type": "application/json"}
        status, error = await _raw(url, "POST", "/v1/jobs", headers, body)
        assert status == 400 and error["error"]["code"] == "bad_request"
        assert "language" in error["error"]["message"]
        status, error = await _raw(url, "GET", "/v1/jobs/nope", sign_headers(secret.encode(), "GET", "/v1/jobs/nope"))
        assert status == 404 and error["error"]["code"] == "not_found"


def test_the_app_refuses_to_start_without_a_secret(state_dir: Path) -> None:
    with pytest.raises(SettingsError, match="RUNNER_SECRET"):
        create_app(RunnerSettings(state_dir=state_dir, _env_file=None))
    with pytest.raises(SettingsError, match="16 bytes"):
        create_app(settings_for(state_dir, "short"))


async def test_validation_admits_a_sound_problem_and_rejects_a_lax_one(state_dir: Path, secret: str) -> None:
    root = Path(__file__).resolve().parents[2]
    sound = (root / "tests" / "bot" / "data" / "vector_sub.py").read_text()
    # The same problem with a verify_result that accepts anything.
    lax = sound.replace(
        "class VectorSub(Problem):\n",
        "class VectorSub(Problem):\n    def verify_result(self, expected_output, actual_output, dtype):\n"
        "        return True, {}\n\n",
    )
    assert lax != sound
    async with serve_app(settings_for(state_dir, secret)) as url, RunnerClient(url, secret.encode()) as client:
        report = await client.validate(ValidateRequest(problem_source=sound))
        assert report.ok, [c for c in report.checks if not c.ok]
        assert report.slug == "vector_sub"
        assert {"reference", "zeros", "constant", "copy_input", "flops"} <= {c.check for c in report.checks}

        report = await client.validate(ValidateRequest(problem_source=lax))
        assert not report.ok
        assert {c.check for c in report.checks if not c.ok} >= {"zeros", "constant", "copy_input"}

        report = await client.validate(ValidateRequest(problem_source="def broken(:\n"))
        assert not report.ok and report.error is not None and report.error.code == "import_error"


async def test_jobs_run_on_processes_started_ahead(state_dir: Path, secret: str) -> None:
    # How much sooner a job starts this way is a budget, measured by bench/runner_latency.py; here, that jobs
    # run correctly on processes started ahead, one after the other, and that nothing is left behind.
    settings = settings_for(state_dir, secret, warm_workers=True)
    async with serve_app(settings) as url, RunnerClient(url, secret.encode()) as client:
        for _ in range(2):
            result, _ = await run_remote(client, good_request())
            assert result.status == "passed", result.error
            assert "startup" in result.phase_seconds
    # Each process keeps its job directories in a folder of its own, jobs/<owner>/.
    assert [p.name for p in (state_dir / "jobs").glob("*/*")] == [], "the idle worker is removed at shutdown"


def test_a_gpu_slot_keeps_two_jobs_started_ahead_and_a_cpu_slot_one_unless_told() -> None:
    settings = RunnerSettings.model_validate({"secret": "s" * 32})
    assert settings.warm_ahead_for(gpu_slot=True) == 2 and settings.warm_ahead_for(gpu_slot=False) == 1
    told = RunnerSettings.model_validate({"secret": "s" * 32, "warm_ahead": 3})
    assert told.warm_ahead_for(gpu_slot=True) == told.warm_ahead_for(gpu_slot=False) == 3
