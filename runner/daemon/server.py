"""The runner daemon's HTTP API (DESIGN §3): `create_app(settings)` builds the aiohttp application.

Every route is signed but three: the OpenAPI document, and the probes for machines, `GET /healthz` (200 `ok` while
the process answers) and `GET /readyz` (200 `ok` while it takes work, else 503 `not ready`: `runner_ready`), which
say nothing more. `/v1/health` stays signed: it describes the hardware.

Handlers only parse input, call the job table (`runner.daemon.jobs`) and render wire models (`contract.wire`); errors
become `{"error": {"code", "message"}}` with a real status. The daemon never imports torch: jobs run in
sandboxed worker processes.

Kept as one module: the daemon's HTTP routes share one signing check and one error mapping; the queue, the slots and
the pool membership they call are modules of their own.
"""

from __future__ import annotations

import asyncio
import logging
import sys
from collections.abc import AsyncIterator
from typing import Any

from aiohttp import web
from pydantic import BaseModel, ValidationError
from pydantic.json_schema import models_json_schema

from contract.errors import ApiError, ApiErrorBody
from contract.wire import (
    GpuInfo,
    HealthInfo,
    JobAccepted,
    JobEvent,
    JobRequest,
    JobStatus,
    ValidateReport,
    ValidateRequest,
)
from runner.auth import (
    SIGNATURE_HEADER,
    TIMESTAMP_HEADER,
    ReplayLog,
    ReplayLogError,
    Verifier,
    make_auth_middleware,
)
from runner.daemon.jobs import (
    DrainingError,
    Job,
    JobConflictError,
    JobFinishedError,
    JobManager,
    QueueFullError,
    UnknownJobError,
)
from runner.daemon.membership import Membership
from runner.daemon.metrics import Metrics
from runner.daemon.routing import UnroutableJobError
from runner.daemon.slots import slots_gpu_type
from runner.gpus import gpu_type_for
from runner.host.compile import nvcc_path, nvcc_version
from runner.host.devices import package_version
from runner.host.sandbox import SandboxLevel
from runner.profiling.availability import jobs_run_as_root, profiling_support
from runner.settings import RunnerSettings, SettingsError

log = logging.getLogger(__name__)

SETTINGS = web.AppKey("settings", RunnerSettings)
JOBS = web.AppKey("jobs", JobManager)
METRICS = web.AppKey("metrics", Metrics)
VERIFIER = web.AppKey("verifier", Verifier)
STREAMS = web.AppKey("streams", dict)  # {"open": number of event streams being read now}
# Set when the runner joined a pool (`--join`): its standing there is part of its readiness.
MEMBERSHIP = web.AppKey("membership", Membership)
# The paths any caller may read without a signature; every other path is checked by the auth middleware.
PROBE_PATHS = frozenset({"/healthz", "/readyz"})

MAX_BODY_BYTES = 2 * 1024 * 1024
STREAM_KEEPALIVE_S = 15.0
NDJSON = "application/x-ndjson"
_STATUS_CODES = {400: "bad_request", 401: "unauthorized", 404: "not_found", 409: "conflict", 413: "payload_too_large"}


def _json(model: BaseModel, status: int = 200) -> web.Response:
    return web.json_response(text=model.model_dump_json(), status=status)


def _error(status: int, code: str, message: str, headers: dict[str, str] | None = None) -> web.Response:
    body = ApiError(error=ApiErrorBody(code=code, message=message))  # type: ignore[arg-type]
    return web.json_response(text=body.model_dump_json(), status=status, headers=headers)


def _describe_validation(exc: ValidationError) -> str:
    parts = [f"{'.'.join(str(p) for p in e['loc']) or 'body'}: {e['msg']}" for e in exc.errors()[:5]]
    return "The request body is invalid. " + "; ".join(parts)


@web.middleware
async def error_middleware(request: web.Request, handler: Any) -> web.StreamResponse:
    """Every failure becomes an ApiError body with a real status; unexpected ones are logged once here."""
    try:
        return await handler(request)
    except web.HTTPException as exc:
        if exc.status < 400:
            raise
        code = _STATUS_CODES.get(exc.status, "internal" if exc.status >= 500 else "bad_request")
        return _error(exc.status, code, exc.text or exc.reason)
    except QueueFullError as exc:
        return _error(429, "queue_full", str(exc), {"Retry-After": str(exc.retry_after_s)})
    except DrainingError as exc:
        return _error(503, "unavailable", str(exc), {"Retry-After": "5"})
    except UnknownJobError as exc:
        return _error(404, "not_found", f"No job {exc.args[0]} here (unknown, or dropped after its retention time).")
    except (JobConflictError, JobFinishedError) as exc:
        return _error(409, "conflict", str(exc))
    except UnroutableJobError as exc:
        return _error(400, "bad_request", str(exc))
    except ValidationError as exc:
        return _error(400, "bad_request", _describe_validation(exc))
    except Exception:
        log.exception("%s %s failed", request.method, request.path)
        return _error(500, "internal", "The runner failed on this request; the error is in its log.")


# -- handlers ---------------------------------------------------------------------------------------------------


async def post_job(request: web.Request) -> web.Response:
    job_request = JobRequest.model_validate_json(await request.read())
    manager = request.app[JOBS]
    job, created = manager.submit(job_request)
    accepted = JobAccepted(
        job_id=job.id,
        submission_id=job.request.submission_id,
        state=job.state,
        queue_position=manager.position(job),
        created=created,
    )
    return _json(accepted, 202 if created else 200)


async def find_job(request: web.Request) -> web.Response:
    """`GET /v1/jobs?submission_id=K`: the job posted under that idempotency key, so that a dispatcher that restarted
    (and so forgot the runner's job id) can follow it again instead of running it a second time."""
    key = request.query.get("submission_id")
    if not key:
        raise web.HTTPBadRequest(text="Give `submission_id`: the key the job was posted under.")
    manager = request.app[JOBS]
    job = manager.by_submission.get(key)
    if job is None:
        raise web.HTTPNotFound(text=f"No job was posted here under {key!r} (or it was dropped after its retention).")
    return _json(job.status(manager.position(job)))


async def get_job(request: web.Request) -> web.Response:
    manager = request.app[JOBS]
    job = manager.get(request.match_info["job_id"])
    return _json(job.status(manager.position(job)))


async def delete_job(request: web.Request) -> web.Response:
    manager = request.app[JOBS]
    job = manager.cancel(request.match_info["job_id"])
    return _json(job.status(manager.position(job)))


def _after(request: web.Request) -> int:
    raw = request.query.get("after", "0")
    if not raw.isdigit():
        raise web.HTTPBadRequest(text="`after` must be a non-negative integer: the last event number you have.")
    return int(raw)


async def _stream(response: web.StreamResponse, job: Job, after: int) -> None:
    index = after
    while True:
        batch = await job.events_after(index, STREAM_KEEPALIVE_S)
        if batch:
            await response.write("".join(e.model_dump_json() + "\n" for e in batch).encode())
            index += len(batch)
        elif not job.finished:
            await response.write(b"\n")  # keeps proxies from closing an idle stream; readers skip blank lines
        if job.finished and index >= len(job.events):
            return


async def job_events(request: web.Request) -> web.StreamResponse:
    """NDJSON events numbered above `after`, live until the job is done; reconnect with the last number seen."""
    job = request.app[JOBS].get(request.match_info["job_id"])
    after = _after(request)
    response = web.StreamResponse(headers={"Content-Type": NDJSON, "Cache-Control": "no-store"})
    await response.prepare(request)
    streams = request.app[STREAMS]
    streams["open"] += 1  # a draining runner waits for its results to be read before it leaves
    try:
        await _stream(response, job, after)
        await response.write_eof()
    except ConnectionResetError:
        log.info("job %s: event reader went away after %d", job.id, after)
    finally:
        streams["open"] -= 1
    return response


async def validate_problem(request: web.Request) -> web.Response:
    validate_request = ValidateRequest.model_validate_json(await request.read())
    report = await request.app[JOBS].validate(validate_request)
    return _json(report)


async def health(request: web.Request) -> web.Response:
    manager = request.app[JOBS]
    settings = request.app[SETTINGS]
    level = manager.executor.sandbox.level if manager.executor is not None else SandboxLevel.NONE
    nvcc = await asyncio.to_thread(nvcc_version) if nvcc_path() else None
    gpus = [
        GpuInfo(
            index=g.index,
            name=g.name,
            uuid=g.uuid,
            capability=f"{g.capability[0]}.{g.capability[1]}",
            memory_mib=g.memory_mib,
            gpu_type=gpu_type_for(g.name),
            peaks=manager.peaks.get(g.uuid),
        )
        for g in manager.gpus
    ]
    uid_base = manager.executor.sandbox.policy.uid_base if manager.executor is not None else None
    support = await asyncio.to_thread(
        profiling_support, any(s.is_gpu for s in manager.slots), jobs_run_as_root(uid_base)
    )
    info = HealthInfo(
        status="ok" if level is SandboxLevel.FULL else "degraded",
        name=settings.name,
        device="gpu" if any(s.is_gpu for s in manager.slots) else "cpu",
        gpu_count=len(manager.gpus),
        gpus=gpus,
        gpu_type=slots_gpu_type(manager.slots),
        driver=manager.gpus[0].driver if manager.gpus else None,
        torch=package_version("torch"),
        triton=package_version("triton"),
        nvcc=nvcc,
        slots=len(manager.slots),
        free_slots=manager.free_slots,
        rank_slots=[slot.ranks for slot in manager.rank_slots],
        topology=manager.topology,
        queue_depth=len(manager.queue),
        max_queue=settings.max_queue,
        sandbox=level.value,  # type: ignore[arg-type]
        profiling=support.available,
        profiling_note=support.note,
        torch_loaded="torch" in sys.modules,
    )
    return _json(info)


def runner_ready(app: web.Application) -> bool:
    """Whether this runner takes work now: its slots are started, it is not draining (stopping, paused for its
    canaries, or refused by its pool), and, when it joined a pool, it is registered there and not leaving."""
    manager = app[JOBS]
    if manager.executor is None or not manager.slots or manager.draining:
        return False
    membership = app.get(MEMBERSHIP)
    if membership is None:
        return True
    return not membership.draining and membership.standing is not None and membership.standing.state == "active"


def _probe(ok: bool) -> web.Response:
    """A probe's answer: `ok` or `not ready`, nothing more (no GPU, no version, no count)."""
    return web.Response(
        text="ok" if ok else "not ready", status=200 if ok else 503, headers={"Cache-Control": "no-store"}
    )


async def healthz(request: web.Request) -> web.Response:
    return _probe(True)


async def readyz(request: web.Request) -> web.Response:
    return _probe(runner_ready(request.app))


async def metrics(request: web.Request) -> web.Response:
    manager = request.app[JOBS]
    gauges = {
        "queue_depth": len(manager.queue),
        "slots": len(manager.slots),
        "slots_busy": manager.busy,
        "jobs_retained": len(manager.jobs),
    }
    text = request.app[METRICS].render(gauges)
    return web.Response(text=text, content_type="text/plain", charset="utf-8", headers={"X-Version": "0.0.4"})


async def openapi(request: web.Request) -> web.Response:
    return web.json_response(openapi_document())


# -- OpenAPI ----------------------------------------------------------------------------------------------------


def _ref(model: type[BaseModel]) -> dict[str, Any]:
    return {"$ref": f"#/components/schemas/{model.__name__}"}


def _answer(model: type[BaseModel] | None, description: str, media: str = "application/json") -> dict[str, Any]:
    content = {media: {"schema": _ref(model)}} if model is not None else {media: {"schema": {"type": "string"}}}
    return {"description": description, "content": content}


def _probe_answer(body: str) -> dict[str, Any]:
    return {"description": body, "content": {"text/plain": {"schema": {"const": body}}}}


def _openapi_paths() -> dict[str, Any]:
    err = _answer(ApiError, "error")
    job_id = [{"name": "job_id", "in": "path", "required": True, "schema": {"type": "string"}}]
    after = {"name": "after", "in": "query", "schema": {"type": "integer", "minimum": 0, "default": 0}}
    return {
        "/v1/jobs": {
            "get": {
                "summary": "The job posted under a submission id (idempotency key), to follow it again",
                "parameters": [
                    {"name": "submission_id", "in": "query", "required": True, "schema": {"type": "string"}}
                ],
                "responses": {"200": _answer(JobStatus, "ok"), "400": err, "404": err},
            },
            "post": {
                "summary": "Queue a job; idempotent on submission_id",
                "requestBody": {"required": True, "content": {"application/json": {"schema": _ref(JobRequest)}}},
                "responses": {
                    "202": _answer(JobAccepted, "queued"),
                    "200": _answer(JobAccepted, "already known"),
                    "400": err,
                    "401": err,
                    "409": err,
                    "429": err,
                },
            },
        },
        "/v1/jobs/{job_id}": {
            "parameters": job_id,
            "get": {
                "summary": "Status, and the result once done",
                "responses": {"200": _answer(JobStatus, "ok"), "404": err},
            },
            "delete": {"summary": "Cancel", "responses": {"200": _answer(JobStatus, "ok"), "404": err, "409": err}},
        },
        "/v1/jobs/{job_id}/events": {
            "parameters": job_id,
            "get": {
                "summary": "NDJSON stream of the events numbered above `after`, until `done`",
                "parameters": [after],
                "responses": {"200": _answer(JobEvent, "one JobEvent per line", NDJSON), "404": err},
            },
        },
        "/v1/problems/validate": {
            "post": {
                "summary": "Admission self-test of a problem module",
                "requestBody": {"required": True, "content": {"application/json": {"schema": _ref(ValidateRequest)}}},
                "responses": {"200": _answer(ValidateReport, "report"), "400": err, "429": err},
            }
        },
        "/v1/health": {
            "get": {"summary": "Devices, versions, slots, queue", "responses": {"200": _answer(HealthInfo, "ok")}}
        },
        "/healthz": {
            "get": {
                "summary": "Liveness for machines: `ok` while the daemon answers (unsigned)",
                "security": [],
                "responses": {"200": _probe_answer("ok")},
            }
        },
        "/readyz": {
            "get": {
                "summary": "Readiness for machines: `ok` while it takes work, else `not ready` (unsigned)",
                "security": [],
                "responses": {"200": _probe_answer("ok"), "503": _probe_answer("not ready")},
            }
        },
        "/metrics": {
            "get": {"summary": "Prometheus metrics", "responses": {"200": _answer(None, "text", "text/plain")}}
        },
    }


def openapi_document() -> dict[str, Any]:
    """The OpenAPI 3.1 document of this API, generated from the wire models in contract.wire."""
    models = [JobRequest, JobAccepted, JobStatus, JobEvent, ValidateRequest, ValidateReport, HealthInfo, ApiError]
    _, schemas = models_json_schema([(m, "serialization") for m in models], ref_template="#/components/schemas/{model}")
    paths = _openapi_paths()
    signing = (
        f"HMAC-SHA256 of timestamp, method, path with query, and body, joined by newlines, sent as "
        f"{SIGNATURE_HEADER} (hex) with {TIMESTAMP_HEADER} (Unix seconds). Skew over 60 s is rejected, and so is "
        f"a signature already accepted, before or after a restart."
    )
    return {
        "openapi": "3.1.0",
        "info": {"title": "Kernel Arena runner", "version": "1", "description": signing},
        "paths": paths,
        "components": {
            "schemas": schemas["$defs"],
            "securitySchemes": {
                "signature": {"type": "apiKey", "in": "header", "name": SIGNATURE_HEADER, "description": signing},
                "timestamp": {"type": "apiKey", "in": "header", "name": TIMESTAMP_HEADER},
            },
        },
        "security": [{"signature": [], "timestamp": []}],
    }


# -- application ------------------------------------------------------------------------------------------------


async def _replay_context(app: web.Application) -> AsyncIterator[None]:
    """Load the accepted signatures of earlier runs before the first request; release the log on shutdown."""
    verifier = app[VERIFIER]
    try:
        await asyncio.to_thread(verifier.load)
    except ReplayLogError as exc:
        raise SettingsError(str(exc)) from exc
    yield
    verifier.close()


async def _jobs_context(app: web.Application) -> AsyncIterator[None]:
    """Probe the host and start the slots before serving; stop every job (and kill workers) on shutdown."""
    manager = app[JOBS]
    await manager.start()
    yield
    await manager.close()


def create_app(
    settings: RunnerSettings, secret: bytes | None = None, membership: Membership | None = None
) -> web.Application:
    """The runner application, checking requests with `secret` (a fleet runner's own credential) or the configured
    shared secret; `membership`, for a runner that joined a pool, makes its standing there part of `/readyz`.
    Raises SettingsError at once when neither secret is there."""
    metrics_store = Metrics()
    replay_log = ReplayLog(settings.replay_log_path())
    verifier = Verifier(secret or settings.secret_bytes(), settings.clock_skew_s, replay_log=replay_log)
    public = {"/v1/openapi.json", *PROBE_PATHS} | ({"/metrics"} if settings.metrics_unsigned else set())
    auth = make_auth_middleware(verifier, public, metrics_store.auth_failed)
    app = web.Application(middlewares=[error_middleware, auth], client_max_size=MAX_BODY_BYTES)
    app[SETTINGS] = settings
    app[METRICS] = metrics_store
    app[VERIFIER] = verifier
    app[JOBS] = JobManager(settings, metrics_store)
    app[STREAMS] = {"open": 0}
    if membership is not None:
        app[MEMBERSHIP] = membership
    app.cleanup_ctx.append(_replay_context)
    app.cleanup_ctx.append(_jobs_context)
    app.add_routes(
        [
            web.post("/v1/jobs", post_job),
            web.get("/v1/jobs", find_job),
            web.get("/v1/jobs/{job_id}", get_job),
            web.delete("/v1/jobs/{job_id}", delete_job),
            web.get("/v1/jobs/{job_id}/events", job_events),
            web.post("/v1/problems/validate", validate_problem),
            web.get("/v1/health", health),
            web.get("/healthz", healthz),
            web.get("/readyz", readyz),
            web.get("/metrics", metrics),
            web.get("/v1/openapi.json", openapi),
        ]
    )
    return app
