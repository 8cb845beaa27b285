"""The API service's aiohttp application: `create_app(pool, settings)`.

For machines (load balancers, Kubernetes probes), unauthenticated, answering `ok` or `not ready` and nothing else:
- `GET /healthz`: 200 `ok` while the process answers; `GET /readyz`: 200 `ok` while the store answers a trivial query
  within `READY_TIMEOUT_S`, else 503 `not ready`.

Routes under `/v1`:
- `GET /v1/health`: liveness, unauthenticated (a load balancer's or Kubernetes' probe); `GET /v1/ready`: the store
  answers too.
- `POST /v1/runners/join`: a bootstrap token for a pool, exchanged for the runner's own credential.
- `PUT /v1/runners/{id}`, `POST /v1/runners/{id}/heartbeat`, `DELETE /v1/runners/{id}`: register, heartbeat,
  leave. Each is signed by the runner (`api.runner_auth`).
- `GET /v1/openapi.json`.

Errors are `{"error": {"code", "message"}}` with a real status, as the runner's own API answers.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import math
from typing import Any

import asyncpg
from aiohttp import web
from pydantic import BaseModel, ValidationError
from pydantic.json_schema import models_json_schema

from api import public_batches, public_events, public_profiles, public_read, public_submit, public_subs, web_sessions
from api.batch_models import MODELS as BATCH_MODELS
from api.pool_check import pool_mismatch
from api.problems_json import Problem, problem_middleware
from api.read_models import MODELS as READ_MODELS
from api.runner_auth import authenticate_runner
from api.settings import ApiSettings
from api.submission_models import MODELS as SUBMISSION_MODELS
from api.user_auth import LIMITER, client_of, install_user_auth
from contract.errors import ApiError, ApiErrorBody
from contract.wire import (
    CanaryReport,
    RunnerHeartbeat,
    RunnerJoined,
    RunnerJoinRequest,
    RunnerRegistration,
    RunnerStanding,
)
from core import fleet
from core.fleet import FleetAuthError, JoinRefusedError, PoolMismatchError, RunnerGoneError
from core.fleet.canary import record_canary
from core.server_logs import quiet_malformed_requests
from core.store import fleet as fleet_store
from core.store.outage import STORE_OUTAGE_ERRORS
from core.store.pool import ping
from runner.auth import RUNNER_HEADER, SIGNATURE_HEADER, TIMESTAMP_HEADER

log = logging.getLogger(__name__)

POOL = web.AppKey("pool", asyncpg.Pool)
SETTINGS = web.AppKey("settings", ApiSettings)
MAX_BODY_BYTES = 256 * 1024
# A probe that waits longer than this is answered `not ready`: a store this slow cannot serve the runners either.
READY_TIMEOUT_S = 2.0
# The modules of the public routes, each with its part of the OpenAPI document.
PUBLIC_ROUTES = (public_submit, public_subs, public_events, public_batches, public_profiles, public_read, web_sessions)
_STATUS_CODES = {
    400: "bad_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    409: "conflict",
    413: "payload_too_large",
}


def _json(model: BaseModel, status: int = 200) -> web.Response:
    return web.json_response(text=model.model_dump_json(), status=status)


def _error(status: int, code: str, message: str) -> web.Response:
    body = ApiError(error=ApiErrorBody(code=code, message=message))  # type: ignore[arg-type]
    return web.json_response(text=body.model_dump_json(), status=status)


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
    except (FleetAuthError, JoinRefusedError) as exc:
        log.info("%s %s refused: %s", request.method, request.path, exc)
        return _error(401, "unauthorized", exc.message)
    except PoolMismatchError as exc:
        return _error(403, "forbidden", exc.message)
    except RunnerGoneError as exc:
        return _error(409, "conflict", exc.message)
    except ValidationError as exc:
        parts = [f"{'.'.join(str(p) for p in e['loc']) or 'body'}: {e['msg']}" for e in exc.errors()[:5]]
        return _error(400, "bad_request", "The request body is invalid. " + "; ".join(parts))
    except STORE_OUTAGE_ERRORS:
        log.warning("%s %s: the store is unreachable", request.method, request.path, exc_info=True)
        return _error(503, "unavailable", "The arena's store is unreachable; try again shortly.")
    except Exception:
        log.exception("%s %s failed", request.method, request.path)
        return _error(500, "internal", "The API failed on this request; the error is in its log.")


def _runner_id(request: web.Request) -> int:
    raw = request.match_info["runner_id"]
    if not raw.isascii() or not raw.isdigit() or len(raw) > 18:
        raise web.HTTPNotFound(text=f"No runner {raw!r}.")
    return int(raw)


async def _signed_body(request: web.Request) -> tuple[int, bytes]:
    runner_id = _runner_id(request)
    body = await request.read()
    settings = request.app[SETTINGS]
    await authenticate_runner(
        request.app[POOL], runner_id, request.headers, request.method, request.path_qs, body, settings.clock_skew_s
    )
    return runner_id, body


async def health(request: web.Request) -> web.Response:
    return web.json_response({"status": "ok"})


async def ready(request: web.Request) -> web.Response:
    await request.app[POOL].fetchval("SELECT 1")
    return web.json_response({"status": "ok", "store": "ok"})


def _probe(ok: bool) -> web.Response:
    """A probe's answer: `ok` or `not ready`, nothing more (no version, no count, no error text)."""
    return web.Response(
        text="ok" if ok else "not ready", status=200 if ok else 503, headers={"Cache-Control": "no-store"}
    )


async def healthz(request: web.Request) -> web.Response:
    return _probe(True)


async def store_answers(pool: asyncpg.Pool, timeout_s: float) -> bool:
    """Whether the store answers `SELECT 1` within `timeout_s`, waiting for a free connection included."""
    try:
        async with asyncio.timeout(timeout_s):
            return await ping(pool, timeout_s)
    except TimeoutError:
        return False
    except Exception:
        # A probe answers `not ready` whatever failed behind it; what failed goes to the log, never to the caller.
        log.warning("readyz: the store check failed", exc_info=True)
        return False


async def readyz(request: web.Request) -> web.Response:
    ready = await store_answers(request.app[POOL], READY_TIMEOUT_S)
    if not ready:
        log.warning("readyz: the store did not answer within %.1f s", READY_TIMEOUT_S)
    return _probe(ready)


async def join(request: web.Request) -> web.Response:
    """A bootstrap token exchanged for a runner's credential. An unknown token is a guess, counted against the
    client's address with the personal tokens' guesses (one bucket, `ARENA_API_AUTH_FAILURES_*`)."""
    limiter, address = request.app[LIMITER], client_of(request, request.app[SETTINGS]).address
    wait_s = limiter.refused_for_s(address)
    if wait_s is not None:
        seconds = math.ceil(wait_s)
        response = _error(429, "rate_limited", f"Too many failed joins from this address; try again in {seconds} s.")
        response.headers["Retry-After"] = str(seconds)
        return response
    try:
        joined = await fleet.join(
            request.app[POOL], RunnerJoinRequest.model_validate_json(await request.read()), request.app[SETTINGS].fleet
        )
    except JoinRefusedError:
        limiter.failed(address)
        raise
    return _json(joined, 201)


async def register(request: web.Request) -> web.Response:
    runner_id, body = await _signed_body(request)
    registration = RunnerRegistration.model_validate_json(body)
    required = request.app[SETTINGS].fleet.required_sandbox
    check = functools.partial(pool_mismatch, required_sandbox=required)
    return _json(await fleet.register(request.app[POOL], runner_id, registration, check))


async def heartbeat(request: web.Request) -> web.Response:
    runner_id, body = await _signed_body(request)
    beat = RunnerHeartbeat.model_validate_json(body or b"{}")
    return _json(await fleet.heartbeat(request.app[POOL], runner_id, beat))


async def canaries(request: web.Request) -> web.Response:
    runner_id, body = await _signed_body(request)
    report = CanaryReport.model_validate_json(body)
    return _json(await record_canary(request.app[POOL], runner_id, report))


async def leave(request: web.Request) -> web.Response:
    runner_id, _ = await _signed_body(request)
    return _json(await fleet.deregister(request.app[POOL], runner_id))


def _label(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ")


async def metrics(request: web.Request) -> web.Response:
    """Prometheus text: the fleet's runners per pool and state (quarantined, heard from), live jobs per pool, and
    the ranked results flagged by canaries. Counts only: no address or secret."""
    counts = await fleet_store.fleet_counts(request.app[POOL], request.app[SETTINGS].fleet.heartbeat_timeout_s)
    lines = [
        "# HELP arena_fleet_runners Runners in their pools, by pool and state.",
        "# TYPE arena_fleet_runners gauge",
        "# HELP arena_fleet_runners_quarantined Runners whose canaries drifted (no ranked job).",
        "# TYPE arena_fleet_runners_quarantined gauge",
        "# HELP arena_fleet_runners_heard Runners heard from within the heartbeat timeout.",
        "# TYPE arena_fleet_runners_heard gauge",
    ]
    for row in counts.runners:
        labels = f'pool="{_label(row["gpu_type"])}",state="{row["state"]}"'
        lines.append(f"arena_fleet_runners{{{labels}}} {row['n']}")
        lines.append(f"arena_fleet_runners_quarantined{{{labels}}} {row['quarantined']}")
        lines.append(f"arena_fleet_runners_heard{{{labels}}} {row['heard']}")
    lines += ["# HELP arena_jobs Jobs not finished, by pool and state.", "# TYPE arena_jobs gauge"]
    for row in counts.jobs:
        lines.append(f'arena_jobs{{pool="{_label(row["gpu_type"])}",state="{row["state"]}"}} {row["n"]}')
    lines += [
        "# HELP arena_flagged_results Ranked results timed on a runner whose canaries drifted, not re-run yet.",
        "# TYPE arena_flagged_results gauge",
        f"arena_flagged_results {counts.flagged}",
    ]
    return web.Response(text="\n".join(lines) + "\n", content_type="text/plain", charset="utf-8")


async def openapi(request: web.Request) -> web.Response:
    return web.json_response(openapi_document())


def _ref(model: type[BaseModel]) -> dict[str, Any]:
    return {"$ref": f"#/components/schemas/{model.__name__}"}


def _answer(model: type[BaseModel], description: str) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": _ref(model)}}}


def openapi_document() -> dict[str, Any]:
    """The OpenAPI 3.1 document of the API service, generated from the wire models."""
    models = [
        RunnerJoinRequest,
        RunnerJoined,
        RunnerRegistration,
        RunnerHeartbeat,
        RunnerStanding,
        CanaryReport,
        ApiError,
        Problem,
        *SUBMISSION_MODELS,
        *BATCH_MODELS,
        *READ_MODELS,
        *web_sessions.MODELS,
    ]
    _, schemas = models_json_schema([(m, "serialization") for m in models], ref_template="#/components/schemas/{model}")
    err = _answer(ApiError, "error")
    runner_id = [{"name": "runner_id", "in": "path", "required": True, "schema": {"type": "integer"}}]
    signed = [{"runner": [], "signature": [], "timestamp": []}]

    def refused(*statuses: int) -> dict[str, Any]:
        """The runners' refusals (ApiError): a malformed body, the signature, no such runner, its state, the store."""
        return {str(status): err for status in statuses}

    def body(model: type[BaseModel]) -> dict[str, Any]:
        return {"required": True, "content": {"application/json": {"schema": _ref(model)}}}

    probe = {
        "200": {"description": "ok", "content": {"text/plain": {"schema": {"const": "ok"}}}},
        "503": {"description": "not ready", "content": {"text/plain": {"schema": {"const": "not ready"}}}},
    }
    paths = {
        "/healthz": {
            "get": {
                "summary": "Liveness for machines: `ok` while the process answers",
                "security": [],
                "responses": {"200": probe["200"]},
            }
        },
        "/readyz": {
            "get": {
                "summary": "Readiness for machines: `ok` while the store answers, else `not ready`",
                "security": [],
                "responses": probe,
            }
        },
        "/v1/health": {"get": {"summary": "Liveness", "security": [], "responses": {"200": {"description": "ok"}}}},
        "/v1/ready": {
            "get": {"summary": "The store answers", "security": [], "responses": {"200": {"description": "ok"}}}
        },
        "/v1/runners/join": {
            "post": {
                "summary": "Exchange a pool's bootstrap token for a runner credential",
                "security": [],
                "requestBody": body(RunnerJoinRequest),
                "responses": {"201": _answer(RunnerJoined, "joined"), **refused(400, 401, 413, 429, 503)},
            }
        },
        "/v1/runners/{runner_id}": {
            "parameters": runner_id,
            "put": {
                "summary": "Register the runner's address and hardware (refused when not its pool's)",
                "security": signed,
                "requestBody": body(RunnerRegistration),
                "responses": {
                    "200": _answer(RunnerStanding, "registered"),
                    **refused(400, 401, 403, 404, 409, 413, 503),
                },
            },
            "delete": {
                "summary": "Leave the pool",
                "security": signed,
                "responses": {"200": _answer(RunnerStanding, "left"), **refused(401, 404, 409, 503)},
            },
        },
        "/v1/runners/{runner_id}/canaries": {
            "parameters": runner_id,
            "post": {
                "summary": "A canary report: judged against the pool; a confirmed drift quarantines the runner",
                "security": signed,
                "requestBody": body(CanaryReport),
                "responses": {"200": _answer(RunnerStanding, "standing"), **refused(400, 401, 404, 409, 413, 503)},
            },
        },
        "/v1/runners/{runner_id}/heartbeat": {
            "parameters": runner_id,
            "post": {
                "summary": "The runner is alive (active or draining)",
                "security": signed,
                "requestBody": body(RunnerHeartbeat),
                "responses": {"200": _answer(RunnerStanding, "standing"), **refused(400, 401, 404, 409, 413, 503)},
            },
        },
    }
    for module in PUBLIC_ROUTES:
        for path, item in module.openapi_paths().items():
            paths.setdefault(path, {}).update(item)
    return {
        "openapi": "3.1.0",
        "info": {"title": "Kernel Arena API", "version": "1"},
        "paths": paths,
        "components": {
            "schemas": schemas["$defs"],
            "securitySchemes": {
                "runner": {"type": "apiKey", "in": "header", "name": RUNNER_HEADER},
                "signature": {"type": "apiKey", "in": "header", "name": SIGNATURE_HEADER},
                "timestamp": {"type": "apiKey", "in": "header", "name": TIMESTAMP_HEADER},
                "bearer": {"type": "http", "scheme": "bearer", "description": "a personal token, arena_pat_..."},
            },
        },
    }


def create_app(pool: asyncpg.Pool, settings: ApiSettings) -> web.Application:
    quiet_malformed_requests()
    app = web.Application(middlewares=[error_middleware, problem_middleware], client_max_size=MAX_BODY_BYTES)
    app[POOL] = pool
    app[SETTINGS] = settings
    install_user_auth(app, pool, settings)
    public_submit.register(app, pool, settings)
    for routes in (public_subs, public_events, public_batches, public_profiles):
        routes.register(app, pool)
    public_read.register(app, pool, settings)
    web_sessions.register(app, pool, settings)
    app.add_routes(
        [
            web.get("/healthz", healthz),
            web.get("/readyz", readyz),
            web.get("/v1/health", health),
            web.get("/v1/ready", ready),
            web.post("/v1/runners/join", join),
            web.put("/v1/runners/{runner_id}", register),
            web.post("/v1/runners/{runner_id}/heartbeat", heartbeat),
            web.post("/v1/runners/{runner_id}/canaries", canaries),
            web.delete("/v1/runners/{runner_id}", leave),
            web.get("/v1/openapi.json", openapi),
            web.get("/metrics", metrics),
        ]
    )
    return app
