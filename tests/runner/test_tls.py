"""TLS on the bot–runner link: the runner serves HTTPS with RUNNER_TLS_CERT_FILE and RUNNER_TLS_KEY_FILE, and
the client trusts it through a CA bundle (the bot's: ARENA_FLEET_RUNNER_CA_FILE); plain http:// to another host is
refused unless allowed (ARENA_FLEET_ALLOW_PLAIN_HTTP).

Certificates are made per test by a throwaway CA (trustme): a real TLS handshake, real certificate checks.
"""

from __future__ import annotations

import shutil
import ssl
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import aiohttp
import pytest
from aiohttp import web
from pydantic import ValidationError

# The bot's side of the link needs the store's driver; a GPU machine without the bot's packages skips these.
pytest.importorskip("asyncpg")

from bot.bot_settings import BotSettings
from bot.runners import build_runners
from contract.wire import RunnerHardware
from core.store.fleet import LiveRunner
from runner.clients.http import PLAIN_HTTP_REFUSED, RunnerClient, RunnerConfigError, RunnerError, sends_in_clear
from runner.clients.remote import RemoteRunner, fleet_runner
from runner.daemon.server import create_app
from runner.settings import RunnerSettings, SettingsError
from tests.bot import fleet_member
from tests.bot.fleet_member import fleet, fleet_heartbeat_timeout_s  # noqa: F401  (fixtures, found by name)
from tests.runner.conftest import EXAMPLES, TEST_DEADLINES, TEST_LIMITS, free_port, settings_for
from tests.runner.daemon_process import DaemonProcess
from tests.store.conftest import db_dsn, pg_dsn, template_db  # noqa: F401  (fixtures, found by name)

# The dev extra brings both; a GPU host that carries only the runner's needs skips these tests.
trustme = pytest.importorskip("trustme")
serialization = pytest.importorskip("cryptography.hazmat.primitives.serialization")


@dataclass
class Pki:
    ca_file: Path
    cert_file: Path
    key_file: Path
    key: trustme.LeafCert

    def client_context(self) -> ssl.SSLContext:
        return ssl.create_default_context(cafile=str(self.ca_file))


@pytest.fixture
def pki(tmp_path: Path) -> Pki:
    """A throwaway CA and a certificate it signed for 127.0.0.1 and localhost."""
    ca = trustme.CA()
    leaf = ca.issue_cert("127.0.0.1", "localhost")
    ca_file, cert_file, key_file = tmp_path / "ca.pem", tmp_path / "runner.crt", tmp_path / "runner.key"
    ca.cert_pem.write_to_path(str(ca_file))
    for blob in leaf.cert_chain_pems:
        blob.write_to_path(str(cert_file), append=True)
    leaf.private_key_pem.write_to_path(str(key_file))
    key_file.chmod(0o600)
    return Pki(ca_file, cert_file, key_file, leaf)


@asynccontextmanager
async def serve_https(settings: RunnerSettings) -> AsyncIterator[str]:
    """The real application on a free port of 127.0.0.1, with the TLS context the daemon would use."""
    context = settings.server_ssl_context()
    assert context is not None
    app_runner = web.AppRunner(create_app(settings), access_log=None)
    await app_runner.setup()
    port = free_port()
    await web.TCPSite(app_runner, "127.0.0.1", port, ssl_context=context).start()
    try:
        yield f"https://127.0.0.1:{port}"
    finally:
        await app_runner.cleanup()


def _tls(settings: RunnerSettings, pki: Pki) -> RunnerSettings:
    return settings.model_copy(update={"tls_cert_file": pki.cert_file, "tls_key_file": pki.key_file})


# -- the runner serves HTTPS ---------------------------------------------------------------------------------


async def test_the_client_reaches_an_https_runner_through_its_ca_file(state_dir: Path, secret: str, pki: Pki) -> None:
    async with serve_https(_tls(settings_for(state_dir, secret), pki)) as url:
        async with RunnerClient(url, secret.encode(), ca_file=pki.ca_file) as client:
            assert (await client.health()).slots == 1

        # Without the CA, the certificate is not trusted: no request is sent.
        async with RunnerClient(url, secret.encode(), retries=1) as untrusting:
            with pytest.raises(RunnerError) as refused:
                await untrusting.health()
        assert refused.value.status == 0 and "certificate" in refused.value.message.lower()

        # The port speaks TLS only: a plain-HTTP request gets no answer.
        plain = url.replace("https://", "http://")
        async with aiohttp.ClientSession() as session:
            with pytest.raises(aiohttp.ClientError):
                async with session.get(plain + "/v1/openapi.json") as response:
                    await response.read()


async def test_python_m_runner_serve_speaks_https_when_both_files_are_set(
    state_dir: Path, secret: str, pki: Pki
) -> None:
    tls_env = {"RUNNER_TLS_CERT_FILE": str(pki.cert_file), "RUNNER_TLS_KEY_FILE": str(pki.key_file)}
    daemon = DaemonProcess(state_dir, secret, free_port(), state_dir.parent / f"{state_dir.name}.log", tls_env)
    daemon.scheme = "https"
    daemon.start()
    try:
        await daemon.wait_ready(pki.client_context())
        async with RunnerClient(daemon.url, secret.encode(), ca_file=pki.ca_file) as client:
            assert (await client.health()).slots == 1
        assert f"on https://127.0.0.1:{daemon.port}" in daemon.log()
    finally:
        daemon.close()


async def test_the_bot_reaches_an_https_fleet_runner_through_the_fleets_ca_file(
    state_dir: Path,
    pki: Pki,
    fleet: fleet_member.TestFleet,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    member = await fleet.join("tls-runner", "cpu")
    # No shared secret: the daemon checks requests with the one its join returned.
    plain = {"state_dir": state_dir, "device": "cpu", "max_queue": 4, **TEST_DEADLINES, **TEST_LIMITS}
    settings = _tls(RunnerSettings.model_validate(plain), pki)
    bot_settings = BotSettings(token="not-a-real-token", fleet="on", local_runner="off")
    async with (
        fleet_member.serve_daemon(settings, member.secret, scheme="https") as daemon,
        aiohttp.ClientSession() as session,
    ):
        await member.register(daemon.url, await fleet_member.daemon_hardware(daemon.app))
        monkeypatch.setenv("ARENA_FLEET_RUNNER_CA_FILE", str(pki.ca_file))
        runners = await build_runners(bot_settings, session, fleet.pool)
        [status] = await runners.statuses()
        assert status.error is None and status.health is not None and status.health.slots == 1, status
        assert (status.name, status.state, status.refused) == ("tls-runner", "active", None)

        # Without the CA, the runner's certificate is not trusted: the bot gets no answer from it.
        monkeypatch.delenv("ARENA_FLEET_RUNNER_CA_FILE")
        untrusting = await build_runners(bot_settings, session, fleet.pool)
        [status] = await untrusting.statuses()
        assert status.health is None and status.error == "no answer", status


async def test_the_bot_sends_no_job_to_a_fleet_runner_at_a_plain_http_address_of_another_host(
    fleet: fleet_member.TestFleet,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    member = await fleet.join("clear-runner", "cpu")
    hardware = RunnerHardware(device="cpu", gpu_type="cpu", slots=1, sandbox="full")
    await member.register("http://10.0.0.7:8700", hardware)
    bot_settings = BotSettings(token="not-a-real-token", fleet="on", local_runner="off")
    async with aiohttp.ClientSession() as session:
        runners = await build_runners(bot_settings, session, fleet.pool)
        assert runners.dispatch_pool.members() == []
        [status] = await runners.statuses()
        assert status.refused == PLAIN_HTTP_REFUSED and status.state == "active", status
        assert "10.0.0.7" not in str(status)

        monkeypatch.setenv("ARENA_FLEET_ALLOW_PLAIN_HTTP", "true")  # a network the operator trusts
        allowed = await build_runners(bot_settings, session, fleet.pool)
        assert [r.name for r in allowed.dispatch_pool.members()] == ["clear-runner"]


@pytest.mark.skipif(shutil.which("openssl") is None, reason="needs the openssl command")
async def test_the_deploy_script_makes_certificates_that_pass_strict_checks(
    state_dir: Path, secret: str, tmp_path: Path
) -> None:
    script = Path(__file__).resolve().parents[2] / "deploy" / "tls" / "make-runner-cert.sh"
    tls = tmp_path / "tls"
    made = subprocess.run(["bash", str(script), str(tls), "localhost", "127.0.0.1"], capture_output=True, check=False)
    assert made.returncode == 0, made.stderr.decode(errors="replace")
    settings = settings_for(state_dir, secret, tls_cert_file=tls / "localhost.crt", tls_key_file=tls / "localhost.key")
    async with serve_https(settings) as url:
        async with RunnerClient(url, secret.encode(), ca_file=tls / "ca.pem") as client:
            assert (await client.health()).slots == 1
        strict = ssl.create_default_context(cafile=str(tls / "ca.pem"))
        strict.verify_flags |= ssl.VERIFY_X509_STRICT  # Python 3.13's default
        async with aiohttp.ClientSession() as session, session.get(url + "/v1/openapi.json", ssl=strict) as answer:
            assert answer.status == 200


# -- the runner's TLS settings ---------------------------------------------------------------------------------


def test_a_certificate_without_its_key_is_refused_naming_both_variables(state_dir: Path, pki: Pki) -> None:
    with pytest.raises(ValidationError, match="RUNNER_TLS_CERT_FILE and RUNNER_TLS_KEY_FILE"):
        RunnerSettings(state_dir=state_dir, tls_cert_file=pki.cert_file)


def test_unusable_tls_files_give_a_settings_error_naming_the_file(state_dir: Path, pki: Pki, tmp_path: Path) -> None:
    garbage = tmp_path / "garbage.pem"
    garbage.write_text("not a certificate\n")
    encrypted = tmp_path / "encrypted.key"
    key = serialization.load_pem_private_key(pki.key.private_key_pem.bytes(), password=None)
    encrypted.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.BestAvailableEncryption(b"a passphrase"),
        )
    )
    cases = [
        (garbage, pki.key_file, str(garbage)),
        (tmp_path / "missing.crt", pki.key_file, "missing.crt"),
        (pki.cert_file, pki.cert_file, "runner.crt"),  # a certificate where the key belongs
        (pki.cert_file, encrypted, "encrypted"),
    ]
    for cert_file, key_file, named in cases:
        settings = RunnerSettings(state_dir=state_dir, tls_cert_file=cert_file, tls_key_file=key_file)
        with pytest.raises(SettingsError, match="RUNNER_TLS_") as failed:
            settings.server_ssl_context()
        assert named in str(failed.value)


def test_the_daemon_refuses_to_start_with_half_a_tls_configuration(state_dir: Path, secret: str, pki: Pki) -> None:
    daemon = DaemonProcess(
        state_dir, secret, free_port(), state_dir.parent / "half-tls.log", {"RUNNER_TLS_CERT_FILE": str(pki.cert_file)}
    )
    finished = subprocess.run(
        [sys.executable, "-m", "runner", "serve"],
        env=daemon.environment(),
        capture_output=True,
        timeout=120,
        check=False,
    )
    stderr = finished.stderr.decode(errors="replace")
    assert finished.returncode == 2, stderr
    assert "RUNNER_TLS_KEY_FILE" in stderr and "Traceback" not in stderr


# -- the client's transport policy -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "in_clear"),
    [
        ("http://gpu-a.internal:8700", True),
        ("http://10.0.0.7:8700", True),
        ("http://127.0.0.1:8700", False),
        ("http://127.8.9.10:8700", False),
        ("http://localhost:8700", False),
        ("http://[::1]:8700", False),
        ("https://gpu-a.internal:8700", False),
        ("https://10.0.0.7", False),
    ],
)
async def test_plain_http_is_refused_to_any_host_but_this_one(url: str, in_clear: bool) -> None:
    assert sends_in_clear(url) is in_clear
    member = LiveRunner(1, "r", "h100", url, 1, "active", False, "s" * 32)
    async with aiohttp.ClientSession() as session:
        if in_clear:
            with pytest.raises(RunnerConfigError, match="https://"):
                RunnerClient(url, b"s" * 32)
            with pytest.raises(RunnerConfigError, match="https://"):
                fleet_runner(member, session)
        RunnerClient(url, b"s" * 32, allow_plain_http=True)
        assert isinstance(fleet_runner(member, session, allow_plain_http=True), RemoteRunner)


def test_an_unreadable_ca_file_is_named(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-ca.pem"
    with pytest.raises(RunnerConfigError, match=r"no-such-ca\.pem"):
        RunnerClient("https://gpu-a.internal:8700", b"s" * 32, ca_file=missing)


def test_arena_submit_refuses_plain_http_to_another_host(tmp_path: Path) -> None:
    secret_file = tmp_path / "runner.secret"
    secret_file.write_text("s" * 32)
    finished = subprocess.run(
        [
            sys.executable,
            "-m",
            "arena.cli",
            "submit",
            "vector_add",
            str(EXAMPLES / "vector_add.py"),
            "--no-store",
            "--runner",
            "http://192.0.2.1:8700",
            "--secret-file",
            str(secret_file),
        ],
        capture_output=True,
        timeout=300,
        check=False,
    )
    stderr = finished.stderr.decode(errors="replace")
    assert finished.returncode != 0
    assert "--allow-plain-http" in stderr and "Traceback" not in stderr
