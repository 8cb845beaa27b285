"""Inputs that the store or the runner cannot take are refused in the core, with a message, for every caller
(the CLI and Discord): NUL and other control characters in problem names, a UTF-8 byte-order mark in a
source file, and timing options that are not finite numbers."""

from __future__ import annotations

import json
import re
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import asyncpg
import pytest
from aiohttp import web
from pydantic import ValidationError

from contract.wire import JobRequest, MeasureConfig
from core.browse import board_gpu_types, get_problem_entry, starter_file
from core.errors import BadUploadError, InvalidOptionError, UnknownProblemError
from core.leaderboard import get_leaderboard, get_rank
from core.moderation import Actor, create_problem
from core.problems import ProblemSpec, require_problem, sync_problem
from core.settings import RateLimitSettings
from core.store.pool import create_pool
from core.submit.intake import SubmitRequest, submit
from core.submit.uploads import check_upload
from runner.auth import sign_headers
from runner.daemon.server import create_app
from runner.settings import RunnerSettings
from tests.store.conftest import db_dsn, pg_dsn, template_db  # noqa: F401  (fixtures, found by name)

MOD = Actor("discord:1", "mod")
ROOMY = RateLimitSettings(test_burst=1000, benchmark_burst=1000, ranked_burst=1000)
VECTOR_ADD = ProblemSpec("vector_add", "Vector addition", 1, ("float32",))
PY_SOURCE = b"import torch\n\n\ndef solution(a, b, c, n):\n    torch.add(a, b, out=c)\n"
CU_SOURCE = b'extern "C" void solution(const float* a, const float* b, float* c, int n) {}\n'
BOM = b"\xef\xbb\xbf"
NUL_NAMES = ["vector\x00add", "\x00", "vector_add\x00", "vec\x1b[2Jtor"]


@pytest.fixture
async def pool(db_dsn: str) -> AsyncIterator[asyncpg.Pool]:  # noqa: F811
    async with create_pool(db_dsn, min_size=1, max_size=4, command_timeout=30) as created:
        await sync_problem(created, VECTOR_ADD)
        yield created


async def _count(pool: asyncpg.Pool, table: str) -> int:
    return int(await pool.fetchval(f"SELECT count(*) FROM {table}"))


@pytest.mark.parametrize("slug", NUL_NAMES, ids=repr)
async def test_a_problem_name_with_control_characters_is_refused_before_the_store(
    pool: asyncpg.Pool, slug: str
) -> None:
    request = SubmitRequest("discord:1", "alice", slug, check_upload("s.py", PY_SOURCE), "cpu", "float32", "test")
    with pytest.raises(UnknownProblemError, match="not a problem name: it holds control characters") as refused:
        await submit(pool, request, ROOMY)
    assert "\x00" not in refused.value.message and "\x1b" not in refused.value.message
    assert await _count(pool, "submissions") == 0
    for lookup in (
        require_problem(pool, slug),
        get_problem_entry(pool, slug),
        starter_file(pool, slug, "python", "float32"),
        get_leaderboard(pool, slug, "cpu", "float32"),
        get_rank(pool, slug, "cpu", "float32", "discord:1"),
    ):
        with pytest.raises(UnknownProblemError, match="control characters"):
            await lookup
    assert await board_gpu_types(pool, slug) == []


async def test_a_name_no_problem_can_have_still_gets_close_matches(pool: asyncpg.Pool) -> None:
    with pytest.raises(
        UnknownProblemError, match=re.escape("no problem called `Vector_Add`. Did you mean `vector_add`")
    ):
        await require_problem(pool, "Vector_Add")


@pytest.mark.parametrize(
    ("slug", "title", "message"),
    [
        ("soft\x00max", "Softmax", "cannot be a problem's slug"),
        ("Softmax", "Softmax", "cannot be a problem's slug"),
        ("softmax", "Soft\x00max", "cannot be the title"),
        ("softmax", " ", "cannot be the title"),
    ],
)
async def test_a_new_problem_with_a_bad_name_is_refused_before_the_store(
    pool: asyncpg.Pool, slug: str, title: str, message: str
) -> None:
    with pytest.raises(InvalidOptionError, match=message):
        await create_problem(pool, MOD, ProblemSpec(slug, title, 1, ("float32",)))
    assert await _count(pool, "problems") == 1


@pytest.mark.parametrize(("name", "body"), [("solution.py", PY_SOURCE), ("solution.cu", CU_SOURCE)])
async def test_a_byte_order_mark_is_dropped_for_every_caller(pool: asyncpg.Pool, name: str, body: bytes) -> None:
    upload = check_upload(name, BOM + body)
    assert upload.source == body.decode()
    request = SubmitRequest(
        "discord:1", "alice", "vector_add", check_upload(name, BOM + body), "cpu", "float32", "test"
    )
    receipt = await submit(pool, request, ROOMY)
    stored = await pool.fetchval(
        "SELECT src.body FROM submissions s JOIN sources src ON src.sha256 = s.source_sha256 WHERE s.id = $1",
        receipt.submission_id,
    )
    assert stored == body.decode()


def test_a_file_holding_only_a_byte_order_mark_is_empty() -> None:
    with pytest.raises(BadUploadError, match="is empty"):
        check_upload("solution.py", BOM + b"\n")


def test_an_invalid_byte_after_a_byte_order_mark_is_named_at_its_offset_in_the_file() -> None:
    with pytest.raises(BadUploadError, match="byte 5 is invalid"):
        check_upload("solution.cu", BOM + b"ab\xffcd")


def test_a_file_name_with_control_characters_is_refused() -> None:
    with pytest.raises(BadUploadError, match="control characters"):
        check_upload("sol\x00ution.py", PY_SOURCE)


@pytest.mark.parametrize("value", [float("inf"), float("-inf"), float("nan"), "Infinity", "NaN"])
@pytest.mark.parametrize("field", ["max_seconds", "target_cv", "target_rse", "min_time_s"])
def test_measure_config_refuses_numbers_that_are_not_finite(field: str, value: object) -> None:
    with pytest.raises(ValidationError, match="finite number"):
        MeasureConfig(**{field: value})  # type: ignore[arg-type]


def _job_json(max_seconds: str) -> bytes:
    body = {
        "submission_id": "sub-1",
        "problem_slug": "vector_add",
        "language": "python",
        "file_name": "solution.py",
        "source": PY_SOURCE.decode(),
        "mode": "test",
        "measure": {"max_seconds": "__MAX__"},
    }
    return json.dumps(body).replace('"__MAX__"', max_seconds).encode()


def test_a_job_request_with_infinity_in_its_json_is_invalid() -> None:
    with pytest.raises(ValidationError, match="finite number"):
        JobRequest.model_validate_json(_job_json("Infinity"))
    assert JobRequest.model_validate_json(_job_json("2.5")).measure.max_seconds == 2.5


async def test_the_runner_answers_400_to_a_job_with_an_infinite_budget() -> None:
    secret = "s" * 32
    state = Path(tempfile.mkdtemp(prefix="arena-input-checks-"))
    state.chmod(0o711)
    runner = web.AppRunner(create_app(RunnerSettings(secret=secret, state_dir=state)), access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    try:
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        body = _job_json("Infinity")
        headers = {**sign_headers(secret.encode(), "POST", "/v1/jobs", body), "Content-Type": "application/json"}
        async with (
            aiohttp.ClientSession() as session,
            session.post(f"http://127.0.0.1:{port}/v1/jobs", data=body, headers=headers) as response,
        ):
            answer = await response.json()
    finally:
        await runner.cleanup()
    assert response.status == 400, answer
    assert answer["error"]["code"] == "bad_request"
    assert "max_seconds" in answer["error"]["message"] and "finite" in answer["error"]["message"]
