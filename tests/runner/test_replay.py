"""Replay protection that survives restarts: the log of accepted signatures, and a real daemon restarted on it.

A request captured on the wire and sent again must be refused, also after the daemon restarts (cleanly or
by kill -9) on the same state directory, while a request signed anew is accepted.
"""

from __future__ import annotations

import json
import signal
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import aiohttp
import pytest

import runner.auth
from runner.auth import AuthError, ReplayLog, ReplayLogError, Verifier, sign_headers
from tests.runner.conftest import free_port, good_request
from tests.runner.daemon_process import DaemonProcess

SECRET = b"a-shared-secret-of-some-length"
SIGNATURE_A = "a" * 64
SIGNATURE_B = "b" * 64


class Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def _check(verifier: Verifier, headers: dict[str, str], body: bytes = b"{}") -> runner.auth.Accepted:
    return verifier.verify("POST", "/v1/jobs", body, headers["X-Arena-Timestamp"], headers["X-Arena-Signature"])


async def _accept(verifier: Verifier, headers: dict[str, str]) -> runner.auth.Accepted:
    accepted = _check(verifier, headers)
    await verifier.record(accepted)
    return accepted


def _lines(path: Path) -> list[str]:
    return path.read_text().splitlines()


# -- the log itself ----------------------------------------------------------------------------------------------


async def test_a_signature_accepted_before_a_restart_is_refused_after_it(tmp_path: Path) -> None:
    path, clock = tmp_path / "auth" / "accepted-signatures", Clock(1000.0)
    first = Verifier(SECRET, clock=clock, replay_log=ReplayLog(path, clock))
    first.load()
    captured = sign_headers(SECRET, "POST", "/v1/jobs", b"{}", now=1000.0)
    await _accept(first, captured)
    first.close()

    clock.now = 1002.0
    second = Verifier(SECRET, clock=clock, replay_log=ReplayLog(path, clock))
    second.load()
    with pytest.raises(AuthError) as replay:
        _check(second, captured)
    assert replay.value.reason == "replayed"
    assert "across restarts" in replay.value.message
    await _accept(second, sign_headers(SECRET, "POST", "/v1/jobs", b"{}", now=1002.0))
    second.close()


async def test_the_log_is_private_and_synced_line_by_line(tmp_path: Path) -> None:
    path, clock = tmp_path / "auth" / "accepted-signatures", Clock(1000.0)
    verifier = Verifier(SECRET, clock=clock, replay_log=ReplayLog(path, clock))
    verifier.load()
    first = await _accept(verifier, sign_headers(SECRET, "POST", "/v1/jobs", b"{}", now=1000.0))
    second = await _accept(verifier, sign_headers(SECRET, "POST", "/v1/jobs", b"{}", now=1000.5))
    # Read while the log is still open: each line is in the file when record() returns, not only at close.
    lines = _lines(path)
    verifier.close()
    assert lines == [f"1120.000000 {first.signature}", f"1120.500000 {second.signature}"]
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700


def test_loading_drops_stale_and_torn_lines_and_rewrites_the_file(tmp_path: Path) -> None:
    path = tmp_path / "accepted-signatures"
    path.write_text(
        f"900.000000 {SIGNATURE_A}\n"  # forgotten at 900: stale at 1000
        f"1100.000000 {SIGNATURE_B}\n"  # still to be remembered
        "1100.000000 not-a-signature\n"
        f"1100.0 {'c' * 40}"  # a write cut off by a crash: no newline, half a signature
    )
    log = ReplayLog(path, Clock(1000.0))
    assert log.open() == {SIGNATURE_B: 1100.0}
    log.close()
    assert _lines(path) == [f"1100.000000 {SIGNATURE_B}"]


async def test_a_clock_stepped_back_within_the_window_does_not_revive_a_signature(tmp_path: Path) -> None:
    path, clock = tmp_path / "accepted-signatures", Clock(1000.0)
    verifier = Verifier(SECRET, skew_s=60.0, clock=clock, replay_log=ReplayLog(path, clock))
    verifier.load()
    captured = sign_headers(SECRET, "POST", "/v1/jobs", b"{}", now=1000.0)
    await _accept(verifier, captured)
    verifier.close()

    clock.now = 1090.0  # past the request's own window (1060): it would be "stale" now; the restart reloads
    reloaded = Verifier(SECRET, skew_s=60.0, clock=clock, replay_log=ReplayLog(path, clock))
    reloaded.load()
    clock.now = 1030.0  # an NTP step back by 60 s makes the timestamp acceptable again
    with pytest.raises(AuthError) as replay:
        _check(reloaded, captured)
    assert replay.value.reason == "replayed"
    reloaded.close()


async def test_the_log_is_compacted_and_keeps_every_live_signature(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(runner.auth, "COMPACT_MIN_LINES", 8)
    path, clock = tmp_path / "accepted-signatures", Clock(1000.0)
    verifier = Verifier(SECRET, skew_s=1.0, clock=clock, replay_log=ReplayLog(path, clock))
    verifier.load()
    accepted = []
    for i in range(40):
        clock.now = 1000.0 + i  # each signature lives 2 s: most are stale when the log is compacted
        headers = sign_headers(SECRET, "POST", "/v1/jobs", b"{}", now=clock.now)
        await _accept(verifier, headers)
        accepted.append(headers)
    lines = _lines(path)
    verifier.close()
    assert len(lines) < 16, f"the log was never compacted: {len(lines)} lines"
    reloaded = Verifier(SECRET, skew_s=1.0, clock=clock, replay_log=ReplayLog(path, clock))
    reloaded.load()
    with pytest.raises(AuthError) as replay:
        _check(reloaded, accepted[-1])
    assert replay.value.reason == "replayed"
    reloaded.close()


def test_a_second_daemon_cannot_share_the_log(tmp_path: Path) -> None:
    path = tmp_path / "accepted-signatures"
    first = ReplayLog(path)
    first.open()
    with pytest.raises(ReplayLogError, match="RUNNER_STATE_DIR"):
        ReplayLog(path).open()
    first.close()
    ReplayLog(path).open()  # released with the first one


def test_no_request_is_accepted_before_the_log_is_loaded(tmp_path: Path) -> None:
    clock = Clock(1000.0)
    verifier = Verifier(SECRET, clock=clock, replay_log=ReplayLog(tmp_path / "log", clock))
    with pytest.raises(AuthError) as early:
        _check(verifier, sign_headers(SECRET, "POST", "/v1/jobs", b"{}", now=1000.0))
    assert early.value.reason == "starting"


# -- a real daemon, restarted ----------------------------------------------------------------------------------


async def _send(url: str, method: str, path: str, headers: dict[str, str], body: bytes = b"") -> tuple[int, dict]:
    async with aiohttp.ClientSession() as session:
        async with session.request(method, url + path, data=body or None, headers=headers) as response:
            return response.status, json.loads(await response.read() or b"{}")


@pytest.fixture
def runner_daemon(state_dir: Path, secret: str) -> Iterator[DaemonProcess]:
    # A wide skew window: a restart on a loaded machine must not turn the replay into a merely "stale" request.
    process = DaemonProcess(
        state_dir, secret, free_port(), state_dir.parent / f"{state_dir.name}.log", {"RUNNER_CLOCK_SKEW_S": "600"}
    )
    yield process
    process.close()


@pytest.mark.parametrize("stop_signal", [signal.SIGTERM, signal.SIGKILL], ids=["restart", "kill-9"])
async def test_a_captured_job_post_is_refused_after_the_daemon_restarts(
    runner_daemon: DaemonProcess, stop_signal: int
) -> None:
    key = runner_daemon.secret.encode()
    body = good_request().model_dump_json().encode()
    captured = sign_headers(key, "POST", "/v1/jobs", body)

    runner_daemon.start()
    await runner_daemon.wait_ready()
    status, answer = await _send(runner_daemon.url, "POST", "/v1/jobs", captured, body)
    assert status == 202 and answer["created"], answer
    runner_daemon.stop(stop_signal)

    runner_daemon.start()
    await runner_daemon.wait_ready()
    status, answer = await _send(runner_daemon.url, "POST", "/v1/jobs", captured, body)
    assert status == 401, f"the replay was accepted after the restart: {answer}"
    assert "already received" in answer["error"]["message"]

    fresh = sign_headers(key, "POST", "/v1/jobs", body)
    status, answer = await _send(runner_daemon.url, "POST", "/v1/jobs", fresh, body)
    assert status == 202 and answer["created"], answer
    status, answer = await _send(runner_daemon.url, "POST", "/v1/jobs", fresh, body)
    assert status == 401, "a replay within one run must fail too"


async def test_a_second_daemon_on_the_same_state_dir_refuses_to_start(runner_daemon: DaemonProcess) -> None:
    runner_daemon.start()
    await runner_daemon.wait_ready()
    second = subprocess.run(
        [sys.executable, "-m", "runner", "serve", "--port", str(free_port())],
        env=runner_daemon.environment(),
        capture_output=True,
        timeout=120,
        check=False,
    )
    stderr = second.stderr.decode(errors="replace")
    assert second.returncode == 2, stderr
    assert "Another runner daemon holds" in stderr and "RUNNER_STATE_DIR" in stderr
    assert "Traceback" not in stderr
