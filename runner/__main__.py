"""`python -m runner serve`: the runner daemon without the rest of the `arena` CLI (a GPU host needs no bot)."""

from __future__ import annotations

import argparse
import errno
import ipaddress
import logging
import sys

from pydantic import ValidationError

from runner.settings import RunnerSettings, SettingsError


def serve(
    host: str | None = None,
    port: int | None = None,
    verbose: bool = False,
    *,
    join: str | None = None,
    token_file: str | None = None,
    advertise: str | None = None,
) -> int:
    """Build the settings from RUNNER_* variables (the command line's over them) and serve until stopped. With a
    join URL the runner joins its pool at the core's API service and serves with its own credential."""
    from aiohttp import web

    from runner.daemon.server import create_app

    given = (
        ("host", host),
        ("port", port),
        ("join_url", join),
        ("token_file", token_file),
        ("advertise_url", advertise),
    )
    overrides = {k: v for k, v in given if v is not None}
    try:
        settings = RunnerSettings(**overrides)
        check_sandbox(settings)
        if settings.join_url is not None or settings.token_file is not None:
            return _serve_in_pool(settings, verbose)
        app = create_app(settings)
        ssl_context = settings.server_ssl_context()
    except SettingsError as exc:
        raise SettingsError(f"The runner is misconfigured: {exc}") from exc
    except ValidationError as exc:
        problems = "; ".join(f"RUNNER_{'_'.join(map(str, e['loc'])).upper()}: {e['msg']}" for e in exc.errors())
        raise SettingsError(f"The runner is misconfigured: {problems}.") from exc
    # The daemon logs at INFO by default: operators need to see the sandbox level and every job.
    logging.getLogger().setLevel(logging.DEBUG if verbose else logging.INFO)
    logger = logging.getLogger(__name__)
    scheme = "https" if ssl_context is not None else "http"
    logger.info("runner %s on %s://%s:%d", settings.name, scheme, settings.host, settings.port)
    if ssl_context is None and not _is_loopback(settings.host):
        logger.warning(
            "serving plain HTTP on %s: jobs' sources and results cross the network unencrypted and unauthenticated. "
            "Set RUNNER_TLS_CERT_FILE and RUNNER_TLS_KEY_FILE, or put a TLS proxy in front (docs/runner.md).",
            settings.host,
        )
    try:
        web.run_app(app, host=settings.host, port=settings.port, ssl_context=ssl_context, print=None, access_log=None)
    except OSError as exc:
        advice = _LISTEN_ADVICE.get(exc.errno or 0)
        if advice is None or "bind" not in str(exc.strerror):
            raise
        # asyncio's message names the address it could not bind: `error while attempting to bind on …`.
        raise SettingsError(f"The runner cannot listen: {exc.strerror}. {advice}") from exc
    return 0


def check_sandbox(settings: RunnerSettings) -> None:
    """Where RUNNER_SANDBOX_REQUIRED asks for a level, try it before anything else (before a pool is joined or a
    port opened): below it, raise SettingsError naming what the host or pod lacks. The executor checks again."""
    if settings.required_sandbox() == "none":
        return
    import asyncio
    import shutil

    from runner.host.sandbox import SandboxPolicy, SandboxUnavailableError, open_sandbox

    async def trial() -> None:
        policy = await asyncio.to_thread(SandboxPolicy.from_settings, settings)
        await open_sandbox(policy, trial_dir)

    trial_dir = settings.state_dir / "sandbox-check"
    try:
        settings.state_dir.mkdir(parents=True, exist_ok=True)
        asyncio.run(trial())
    except SandboxUnavailableError as exc:
        raise SettingsError(f"it refuses to start without its sandbox. {exc}") from exc
    except OSError as exc:
        raise SettingsError(f"it cannot try its sandbox under RUNNER_STATE_DIR={settings.state_dir}: {exc}") from exc
    finally:
        shutil.rmtree(trial_dir, ignore_errors=True)


def _serve_in_pool(settings: RunnerSettings, verbose: bool) -> int:
    import asyncio
    import signal

    from runner.daemon.membership import MembershipError
    from runner.daemon.pool_member import serve_in_pool

    logging.getLogger().setLevel(logging.DEBUG if verbose else logging.INFO)
    logging.getLogger(__name__).info("runner %s joining its pool at %s", settings.name, settings.join_url)
    try:
        asyncio.run(serve_in_pool(settings))
        # Drained and left its pool: a second SIGTERM while the interpreter winds down changes nothing.
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    except MembershipError as exc:
        raise SettingsError(str(exc)) from exc
    except OSError as exc:
        if "bind" not in str(exc.strerror or exc) and exc.errno not in _LISTEN_ADVICE:
            raise
        raise SettingsError(
            f"The runner cannot listen: {exc.strerror}. {_LISTEN_ADVICE.get(exc.errno or 0, '')}"
        ) from exc
    return 0


_LISTEN_ADVICE = {
    errno.EADDRINUSE: "Stop whatever listens there, or choose another port with --port (or RUNNER_PORT).",
    errno.EADDRNOTAVAIL: "Choose an address of this machine with --host (or RUNNER_HOST), such as 0.0.0.0.",
    errno.EACCES: "Ports below 1024 need privileges; choose another with --port (or RUNNER_PORT).",
}


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def add_join_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--join", metavar="URL", help="join a pool at the core's API service (RUNNER_JOIN_URL)")
    parser.add_argument("--token-file", metavar="F", help="file holding the pool's bootstrap token (RUNNER_TOKEN_FILE)")
    parser.add_argument(
        "--advertise",
        metavar="URL",
        help="where dispatchers reach this runner (RUNNER_ADVERTISE_URL); default: the listen address",
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m runner", description="the Kernel Arena GPU runner daemon")
    parser.add_argument("-v", "--verbose", action="store_true")
    sub = parser.add_subparsers(dest="command", required=True)
    serve_parser = sub.add_parser("serve", help="serve the runner HTTP API (settings from RUNNER_* variables)")
    serve_parser.add_argument("--host")
    serve_parser.add_argument("--port", type=int)
    add_join_arguments(serve_parser)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, stream=sys.stderr)
    try:
        return serve(
            args.host, args.port, args.verbose, join=args.join, token_file=args.token_file, advertise=args.advertise
        )
    except SettingsError as exc:
        print(f"error: {exc}", file=sys.stderr)  # noqa: T201
        return 2


if __name__ == "__main__":
    sys.exit(main())
