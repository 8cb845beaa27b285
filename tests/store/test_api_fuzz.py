"""Every operation of the API's OpenAPI document, fuzzed with schemathesis against a real `arena api` on the test's
PostgreSQL: requests drawn from the document (valid ones, and invalid ones: wrong types, missing fields, values out
of range), sent over HTTP with a personal token. No request may get a 5xx, and every answer must be one the
document declares: its status, its content type, its headers and its body's schema.

The store holds what makes the answers worth checking: the built-in problems, a contest, and a finished submission
of the reading user (so that its result, code and event stream can be found), and two profiled runs of theirs (a
profile diff to be made). The reading token has scope `read` only and owns nothing that waits, so no event stream it
opens stays open; the submitting token sends the uploads and the cancels. Examples are bounded (`EXAMPLES` per
operation and mode), so this takes a minute or two on a busy two-core machine; hypothesis keeps no database of
examples.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import asyncpg
import pytest
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode
from schemathesis.checks import (
    content_type_conformance,
    not_a_server_error,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)
from schemathesis.core.failures import FailureGroup

from api.app import openapi_document
from core.contests import ContestDraft, create_contest
from core.results import record_result
from core.store import jobs
from core.submit.intake import SubmitRequest, submit
from core.submit.uploads import check_upload
from core.tokens import create_token
from tests.profile_fixture import profile_report
from tests.store.fleet_processes import Fleet
from tests.store.store_helpers import GPUS, MOD, ROOMY, add_problems, result_for

pytestmark = pytest.mark.timeout(600)

EXAMPLES = 20
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
]
REQUEST_TIMEOUT_S = 60
SOURCE = b"import torch\n\n\ndef solution(a, b, c, n):\n    torch.add(a, b, out=c)\n"
# Routes whose token must be able to write; every other route is called with the reading token, but those that end
# the caller's own session (DELETE /v1/sessions/current), which get a token of their own to end.
SUBMIT_SCOPE = {
    ("POST", "/v1/submissions"),
    ("POST", "/v1/submissions/batches"),
    ("DELETE", "/v1/submissions/{submission_id}"),
}


async def store_with_data(pool: asyncpg.Pool) -> tuple[str, str, str]:
    """The problems, a contest, the reader's finished submission; the reading, the submitting and a spare token."""
    await add_problems(pool)
    now = datetime.now(UTC)
    start = now + timedelta(hours=1)
    draft = ContestDraft(
        "sprint", "The sprint", start, start + timedelta(hours=1), ("vector_add",), (("cpu", "float32"),)
    )
    await create_contest(pool, MOD, draft, now=now, gpus=GPUS)
    run = SubmitRequest(
        "discord:1001", "reader", "vector_add", check_upload("solution.py", SOURCE), "cpu", "float32", "test"
    )
    receipt = await submit(pool, run, ROOMY)
    lease = await jobs.claim_job(pool, receipt.job_id, "fuzz", 30.0, "runner-a")
    assert lease is not None and await jobs.set_running(pool, lease)
    spec = await jobs.job_spec(pool, receipt.job_id)
    assert spec is not None and await record_result(pool, lease, result_for(spec, 2.5), "runner-a")
    # Two profiled runs of the reader's, so that a profile diff can be found (the ids are small: the first runs).
    for _ in range(2):
        profiled = SubmitRequest(
            "discord:1001", "reader", "vector_add", check_upload("solution.py", SOURCE), "h100", "float32", "profile"
        )
        receipt = await submit(pool, profiled, ROOMY)
        lease = await jobs.claim_job(pool, receipt.job_id, "fuzz", 30.0, "runner-a")
        spec = await jobs.job_spec(pool, receipt.job_id)
        assert lease is not None and spec is not None
        result = result_for(spec, None).model_copy(update={"profile": profile_report(artifacts=[])})
        assert await record_result(pool, lease, result, "runner-a")
    reader = await create_token(pool, "discord:1001", "reader", "fuzz-read", scopes="read")
    writer = await create_token(pool, "discord:1002", "writer", "fuzz-write")
    spare = await create_token(pool, "discord:1003", "spare", "fuzz-spare")
    return reader.token, writer.token, spare.token


def fuzz(base_url: str, reader: str, writer: str, spare: str) -> tuple[list[str], list[str]]:
    """Fuzz every operation in both modes: the operations fuzzed, and what failed (each operation and mode stops
    at its first failure, shrunk to its smallest request)."""
    schema = schemathesis.openapi.from_dict(openapi_document())
    fuzzed, failures = [], []
    for result in schema.get_all_operations():
        operation = result.ok()
        name = f"{operation.method.upper()} {operation.path}"
        key = (operation.method.upper(), operation.path)
        token = writer if key in SUBMIT_SCOPE else spare if key[0] == "DELETE" else reader
        headers = {"Authorization": f"Bearer {token}"}
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):
            try:
                check_operation(operation, mode, base_url, headers)
            except (Exception, FailureGroup) as exc:  # every operation is fuzzed, the failures reported together
                failures.append(f"{name} ({mode.value}): {str(exc)[:1500]}")
        fuzzed.append(name)
    return fuzzed, failures


def check_operation(operation: Any, mode: GenerationMode, base_url: str, headers: dict[str, str]) -> None:
    @given(case=operation.as_strategy(generation_mode=mode))
    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        database=None,
        derandomize=True,  # the same requests at every run: a failure here is reproducible
        phases=[Phase.explicit, Phase.generate, Phase.shrink],
        suppress_health_check=list(HealthCheck),
    )
    def one(case: Any) -> None:
        response = case.call(base_url=base_url, headers=headers, timeout=REQUEST_TIMEOUT_S)
        case.validate_response(response, checks=CHECKS)

    try:
        one()
    except Unsatisfiable:
        if mode is GenerationMode.POSITIVE:
            raise
        # An operation with no parameter and no body (GET /healthz) has nothing to send wrong.


async def test_every_operation_answers_within_the_document_and_never_5xx(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    reader, writer, spare = await store_with_data(pool)
    fleet = Fleet(db_dsn, tmp_path)
    try:
        fleet.api(dispatch=False).start()
        await fleet.wait_api()
        await fleet.token(pool, "cpu")  # the pool `cpu` exists, so that uploads can be accepted
        fuzzed, failures = await asyncio.to_thread(fuzz, fleet.api_url, reader, writer, spare)
        assert not failures, "\n\n".join(failures)
        assert "POST /v1/submissions" in fuzzed and "GET /v1/submissions/{submission_id}/events" in fuzzed
        assert len(fuzzed) == sum(
            1 for item in openapi_document()["paths"].values() for method in item if method != "parameters"
        ), "every operation of the document"
        assert "Traceback" not in fleet.logs(), "an unexpected failure is logged with its traceback"
    finally:
        fleet.close()
