"""Authenticating a runner's calls to the API: each is signed with the runner's own secret.

    X-Arena-Runner: the runner's id (as `join` gave it)
    X-Arena-Timestamp, X-Arena-Signature: as for calls to a runner (`runner.auth`), under the runner's secret

A signature must be fresh (within the clock skew) and newer than the runner's last accepted request. That last
timestamp lives in the store, so a captured request cannot be replayed to this replica or any other.
"""

from __future__ import annotations

import time

import asyncpg

from core.fleet import FleetAuthError, accept_request, check_signature, runner_secret
from runner.auth import RUNNER_HEADER, SIGNATURE_HEADER, TIMESTAMP_HEADER, signature


async def authenticate_runner(
    pool: asyncpg.Pool,
    runner_id: int,
    headers: dict[str, str] | object,
    method: str,
    path_qs: str,
    body: bytes,
    skew_s: float,
) -> None:
    """Raise FleetAuthError unless the request is the runner's own, fresh and new."""
    get = headers.get  # type: ignore[attr-defined]
    claimed, timestamp, provided = get(RUNNER_HEADER), get(TIMESTAMP_HEADER), get(SIGNATURE_HEADER)
    if not claimed or not timestamp or not provided:
        raise FleetAuthError(f"Sign the request: send {RUNNER_HEADER}, {TIMESTAMP_HEADER} and {SIGNATURE_HEADER}.")
    if claimed != str(runner_id):
        raise FleetAuthError(f"{RUNNER_HEADER} names another runner than the path does.")
    try:
        sent_at = float(timestamp)
    except ValueError:
        raise FleetAuthError(f"{TIMESTAMP_HEADER} is not a Unix time.") from None
    if not abs(time.time() - sent_at) <= skew_s:
        raise FleetAuthError(f"{TIMESTAMP_HEADER} is more than {skew_s:g} s from the API's clock; check NTP.")
    secret = await runner_secret(pool, runner_id)
    check_signature(secret, provided, signature(secret, timestamp, method, path_qs, body))
    await accept_request(pool, runner_id, sent_at)
