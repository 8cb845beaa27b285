"""Request signing: what the verifier accepts and what it rejects, with a controlled clock."""

from __future__ import annotations

import pytest

from runner.auth import AuthError, Verifier, sign_headers

SECRET = b"a-shared-secret-of-some-length"


def _check(
    verifier: Verifier, headers: dict[str, str], method: str = "POST", path: str = "/v1/jobs", body: bytes = b"{}"
) -> None:
    verifier.verify(method, path, body, headers.get("X-Arena-Timestamp"), headers.get("X-Arena-Signature"))


def test_a_fresh_signed_request_passes_once() -> None:
    verifier = Verifier(SECRET, clock=lambda: 1000.0)
    headers = sign_headers(SECRET, "POST", "/v1/jobs", b"{}", now=1000.0)
    _check(verifier, headers)
    with pytest.raises(AuthError) as replay:
        _check(verifier, headers)
    assert replay.value.reason == "replayed"


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"body": b'{"x": 1}'}, "bad_signature"),
        ({"path": "/v1/jobs/other"}, "bad_signature"),
        ({"method": "DELETE"}, "bad_signature"),
    ],
)
def test_any_change_to_a_signed_part_fails(change: dict, reason: str) -> None:
    verifier = Verifier(SECRET, clock=lambda: 1000.0)
    headers = sign_headers(SECRET, "POST", "/v1/jobs", b"{}", now=1000.0)
    with pytest.raises(AuthError) as failed:
        _check(verifier, headers, **change)
    assert failed.value.reason == reason


@pytest.mark.parametrize(("sent_at", "ok"), [(940.5, True), (1059.0, True), (939.0, False), (1061.0, False)])
def test_the_clock_skew_limit_is_60_seconds_both_ways(sent_at: float, ok: bool) -> None:
    verifier = Verifier(SECRET, skew_s=60.0, clock=lambda: 1000.0)
    headers = sign_headers(SECRET, "POST", "/v1/jobs", b"{}", now=sent_at)
    if ok:
        _check(verifier, headers)
    else:
        with pytest.raises(AuthError, match="clock") as stale:
            _check(verifier, headers)
        assert stale.value.reason == "stale"


@pytest.mark.parametrize("timestamp", ["", "nan", "inf", "yesterday"])
def test_missing_or_malformed_timestamps_fail(timestamp: str) -> None:
    verifier = Verifier(SECRET, clock=lambda: 1000.0)
    headers = {"X-Arena-Timestamp": timestamp, "X-Arena-Signature": "00" * 32}
    with pytest.raises(AuthError):
        _check(verifier, headers)


def test_a_non_ascii_signature_is_rejected_not_crashed() -> None:
    verifier = Verifier(SECRET, clock=lambda: 1000.0)
    with pytest.raises(AuthError) as failed:
        _check(verifier, {"X-Arena-Timestamp": "1000", "X-Arena-Signature": "é" * 64})
    assert failed.value.reason == "bad_signature"
