"""The CLI's server commands when there is no server to speak to: every refusal in one line (or as
`{"error": {...}}` with --json) with its documented exit code, and no token written anywhere it should not be."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.harness import ROOT, arena, arena_env
from tests.runner.conftest import free_port

EXAMPLE = str(ROOT / "examples" / "vector_add.py")


def env(tmp_path: Path, **extra: str) -> dict[str, str]:
    return arena_env(tmp_path / "data", XDG_CONFIG_HOME=str(tmp_path / "config"), **extra)


def error_of(stdout: str) -> dict:
    return json.loads(stdout)["error"]


def test_without_a_server_or_a_token_the_cli_says_what_to_do(tmp_path: Path) -> None:
    nowhere = arena("submissions", "list", "--json", env=env(tmp_path))
    assert nowhere.returncode == 2
    assert "arena login --server URL" in error_of(nowhere.stdout)["message"]

    plain = arena("submissions", "list", "--server", "http://arena.example.org", env=env(tmp_path))
    assert plain.returncode == 2 and "use https://" in plain.stderr and plain.stderr.count("\n") == 1

    local = f"http://127.0.0.1:{free_port()}"
    no_token = arena("submit", "vector_add", EXAMPLE, "--server", local, "--json", env=env(tmp_path))
    assert no_token.returncode == 3, no_token.stderr
    assert error_of(no_token.stdout)["code"] == "token_missing"


def test_an_unreachable_server_exits_5_and_login_keeps_nothing(tmp_path: Path) -> None:
    local = f"http://127.0.0.1:{free_port()}"
    token = env(tmp_path, ARENA_TOKEN="arena_pat_" + "x" * 43)
    submitted = arena("submit", "vector_add", EXAMPLE, "--server", local, "--stream", env=token)
    assert submitted.returncode == 5, submitted.stderr
    error = error_of(submitted.stdout)
    assert error["code"] == "unreachable" and local in error["message"]
    assert "arena_pat_" not in submitted.stdout + submitted.stderr, "the token is never shown"

    login = arena("login", "--server", local, env=token)
    assert login.returncode == 5 and login.stderr.startswith("error: Cannot reach the arena at")
    assert not (tmp_path / "config").exists()


def test_stream_and_gpu_belong_to_server_runs(tmp_path: Path) -> None:
    local_run = arena("submit", "vector_add", EXAMPLE, "--stream", env=env(tmp_path))
    assert local_run.returncode == 2 and "--stream and --gpu go with --server" in local_run.stderr
