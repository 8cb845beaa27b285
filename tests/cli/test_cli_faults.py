"""Everyday faults give one line that says what to do, and a sensible exit status; never a traceback."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import pytest

from tests.cli.harness import (
    ROOT,
    arena,
    arena_env,
    assert_one_line_error,
    busy_port,
    closed_port,
    default_sigint,
    error_lines,
    interrupt,
    start_arena,
    wait_for,
)

pytestmark = pytest.mark.timeout(300)

# One embedded store for this module's runs, never the user's own.
DATA_DIR = tempfile.mkdtemp(prefix="arena-cli-faults-")
ENV = arena_env(DATA_DIR)


def test_starter_into_a_missing_folder_says_to_create_it(tmp_path: Path) -> None:
    target = tmp_path / "nowhere" / "s.cu"
    proc = arena("starter", "vector_add", "-o", str(target), env=ENV)
    assert_one_line_error(proc, f"The folder {target.parent} does not exist", "mkdir -p")
    assert not target.parent.exists()


def test_starter_into_a_folder_asks_for_a_file_name(tmp_path: Path) -> None:
    proc = arena("starter", "vector_add", "--lang", "python", "-o", str(tmp_path), env=ENV)
    assert_one_line_error(proc, "is a folder", str(tmp_path / "solution.py"))


@pytest.mark.parametrize("program", [("-m", "arena", "runner"), ("-m", "runner")], ids=["arena", "python -m runner"])
def test_runner_serve_on_a_port_in_use_says_to_choose_another(tmp_path: Path, program: tuple[str, ...]) -> None:
    env = arena_env(DATA_DIR, RUNNER_SECRET="s" * 32, RUNNER_STATE_DIR=str(tmp_path / "state"))
    with busy_port() as port:
        proc = subprocess.run(
            [sys.executable, *program, "serve", "--port", str(port)],
            cwd=ROOT, capture_output=True, text=True, timeout=300, env=env, check=False,
        )  # fmt: skip
    line = assert_one_line_error(proc, "The runner cannot listen", "address already in use", "--port")
    assert str(port) in line


def test_runner_settings_that_do_not_parse_are_one_line_naming_the_variable(tmp_path: Path) -> None:
    env = arena_env(DATA_DIR, RUNNER_SECRET="s" * 32, RUNNER_STATE_DIR=str(tmp_path / "state"), RUNNER_PORT="eighty")
    proc = arena("runner", "serve", env=env)
    assert_one_line_error(proc, "The runner is misconfigured: RUNNER_PORT:")


def test_runner_url_without_scheme_is_refused_with_the_url_to_write(tmp_path: Path) -> None:
    secret = tmp_path / "secret"
    secret.write_text("s" * 32)
    proc = arena(
        "submit",
        "vector_add",
        "examples/vector_add.py",
        "--runner",
        "localhost:8700",
        "--secret-file",
        str(secret),
        env=ENV,
    )
    assert_one_line_error(proc, "--runner", "write it as http://localhost:8700")


def test_unreachable_runner_names_it_and_says_what_to_check(tmp_path: Path) -> None:
    secret = tmp_path / "secret"
    secret.write_text("s" * 32)
    with closed_port() as port:
        url = f"http://127.0.0.1:{port}"
        proc = arena(
            "submit", "vector_add", "examples/vector_add.py", "--runner", url, "--secret-file", str(secret), env=ENV
        )
    assert_one_line_error(proc, f"Cannot reach the runner at {url}", "arena runner serve")


@pytest.mark.parametrize(
    "command",
    [
        ("db", "status"),
        ("db", "migrate"),
        ("leaderboard", "matrix-multiplication"),
        ("submit", "vector_add", "examples/vector_add.py", "--device", "cpu"),
    ],
    ids=lambda c: " ".join(c[:2]),
)
def test_unreachable_database_url_is_one_line_naming_the_server(command: tuple[str, ...]) -> None:
    with closed_port() as port:
        env = arena_env(DATA_DIR, DATABASE_URL=f"postgresql://arena:secret-pw@127.0.0.1:{port}/arena")
        proc = arena(*command, env=env)
    line = assert_one_line_error(proc, f"Cannot connect to PostgreSQL at 127.0.0.1:{port}/arena", "DATABASE_URL")
    assert "secret-pw" not in proc.stderr and "secret-pw" not in line


def test_malformed_database_url_says_how_to_write_one() -> None:
    proc = arena("db", "status", env=arena_env(DATA_DIR, DATABASE_URL="postgresql://u:p@host:port/db"))
    assert_one_line_error(proc, "DATABASE_URL is not a PostgreSQL URL", "postgresql://USER:PASSWORD@HOST:PORT/DATABASE")


@pytest.mark.parametrize("value", ["inf", "Infinity", "nan", "-1", "0"])
def test_non_finite_or_non_positive_max_seconds_is_refused(value: str) -> None:
    proc = arena("submit", "vector_add", "examples/vector_add.py", "--max-seconds", value, env=ENV)
    assert_one_line_error(proc, "--max-seconds", "give a finite number above 0")


def test_target_cv_out_of_range_is_refused() -> None:
    proc = arena("submit", "vector_add", "examples/vector_add.py", "--target-cv", "inf", env=ENV)
    assert_one_line_error(proc, "--target-cv", "at most 1")


def test_usage_mistakes_are_one_line_pointing_at_help() -> None:
    proc = arena("submit", "vector_add", env=ENV)
    assert_one_line_error(proc, "required: FILE", "arena submit --help")
    assert "usage:" not in proc.stderr


def _write_to_a_closed_pipe(*args: str) -> subprocess.CompletedProcess[str]:
    """`arena ARGS | head` where head has already gone: the reading end is closed before arena writes."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        return subprocess.run(
            [sys.executable, "-m", "arena", *args],
            cwd=ROOT,
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
            env=ENV,
            check=False,
        )
    finally:
        os.close(write_end)


@pytest.mark.parametrize(
    "command", [("show", "matrix-multiplication"), ("problems",), ("starter", "matrix-multiplication")]
)
def test_a_reader_that_went_away_ends_the_command_quietly(command: tuple[str, ...]) -> None:
    proc = _write_to_a_closed_pipe(*command)
    assert proc.returncode == 141, proc.stderr  # 128 + SIGPIPE, as a shell reports for a writer cut off
    assert proc.stderr == ""


def test_show_piped_into_head_prints_the_first_line_and_no_error() -> None:
    # The shell pipeline users type; whether arena is cut off depends on timing, so only the outcome is checked.
    proc = subprocess.run(
        f"{sys.executable} -m arena show matrix-multiplication | head -1",
        shell=True,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env=ENV,
        check=False,
    )
    assert proc.stdout.startswith("Matrix Multiplication (matrix-multiplication")
    assert len(proc.stdout.splitlines()) == 1
    assert proc.stderr == ""


def test_ctrl_c_while_waiting_for_a_runner_is_one_line_and_exit_130(tmp_path: Path) -> None:
    secret = tmp_path / "secret"
    secret.write_text("s" * 32)
    # A runner that takes the request and never answers: arena waits until the user gives up.
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        port = server.getsockname()[1]
        asked = threading.Event()
        held: list[socket.socket] = []

        def take_the_request() -> None:
            conn, _ = server.accept()
            held.append(conn)
            if conn.recv(65536):
                asked.set()

        threading.Thread(target=take_the_request, daemon=True).start()
        process = start_arena(
            "submit", "vector_add", "examples/vector_add.py",
            "--runner", f"http://127.0.0.1:{port}", "--secret-file", str(secret),
            env=ENV,
        )  # fmt: skip
        try:
            wait_for(lambda: asked.is_set() or process.poll() is not None, "arena to send its request")
            interrupt(process)
            stdout, stderr = process.communicate(timeout=120)
        finally:
            for conn in held:
                conn.close()
    assert process.returncode == 130, stderr
    assert "Traceback" not in stderr
    assert error_lines(stderr) == ["interrupted (Ctrl-C)."], stderr
    assert stdout == ""


def _interrupt_while_importing(program: str) -> subprocess.CompletedProcess[str]:
    """A process named `program` that imports the package and then gets SIGINT, as Ctrl-C during start-up."""
    code = (
        "import os, signal, sys, time\n"
        f"sys.argv = [{program!r}, 'problems']\n"
        "import arena\n"
        "try:\n"
        "    os.kill(os.getpid(), signal.SIGINT)\n"
        "    time.sleep(60)\n"
        "except KeyboardInterrupt:\n"
        "    sys.exit(7)\n"
    )
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env=ENV,
        check=False,
        preexec_fn=default_sigint,
    )


def test_ctrl_c_while_arena_starts_is_one_line_and_exit_130() -> None:
    proc = _interrupt_while_importing("/usr/local/bin/arena")
    assert proc.returncode == 130, proc.stderr
    assert proc.stderr == "interrupted (Ctrl-C).\n"


def test_importing_the_package_from_another_program_leaves_ctrl_c_alone() -> None:
    proc = _interrupt_while_importing("pytest")
    assert proc.returncode == 7, proc.stderr
    assert proc.stderr == ""


def test_an_internal_failure_is_an_apology_with_an_incident_file(tmp_path: Path) -> None:
    # A bug, planted: the `problems` command raises an error that no handler expects.
    block = (
        "import sys, arena.commands.problems as p\n"
        "def broken(args): raise ZeroDivisionError('planted')\n"
        "p.cmd_problems = broken\n"
        "from arena.cli import main\n"
        "sys.exit(main(sys.argv[1:]))\n"
    )
    env = {**ENV, "XDG_STATE_HOME": str(tmp_path)}
    proc = subprocess.run(
        [sys.executable, "-c", block, "problems"], cwd=ROOT, capture_output=True, text=True, timeout=120, env=env
    )
    line = assert_one_line_error(proc, "sorry", "incident", "ZeroDivisionError", status=70)
    incidents = list((tmp_path / "kernel-arena" / "incidents").glob("*.log"))
    assert len(incidents) == 1 and incidents[0].stem in line
    assert "ZeroDivisionError: planted" in incidents[0].read_text()


def test_arena_bot_with_discord_unreachable_says_what_to_check() -> None:
    with closed_port() as port:
        env = arena_env(
            DATA_DIR,
            ARENA_BOT_TOKEN="not-a-real-token",
            ARENA_DISCORD_API_BASE=f"http://127.0.0.1:{port}",
            ARENA_BOT_HEALTH_PORT="0",  # the probes' own port may be another run's
        )
        proc = arena("bot", env=env)
    assert_one_line_error(proc, f"Cannot reach the Discord API at http://127.0.0.1:{port}", "ARENA_DISCORD_API_BASE")


BOM = b"\xef\xbb\xbf"


def test_a_python_solution_saved_with_a_byte_order_mark_passes(tmp_path: Path) -> None:
    source = tmp_path / "bom.py"
    source.write_bytes(BOM + (ROOT / "examples" / "vector_add.py").read_bytes())
    proc = arena("submit", "vector_add", str(source), "--device", "cpu", "--mode", "test", env=ENV)
    assert proc.returncode == 0, proc.stderr
    assert "all 3 test cases passed" in proc.stdout


@pytest.mark.nvcc
def test_a_cuda_solution_saved_with_a_byte_order_mark_compiles(tmp_path: Path) -> None:
    from contract.wire import SubmissionResult

    source = tmp_path / "bom.cu"
    source.write_bytes(BOM + (ROOT / "examples" / "vector_add.cu").read_bytes())
    proc = arena("submit", "vector_add", str(source), "--mode", "test", "--no-store", "--json", env=ENV)
    result = SubmissionResult.model_validate_json(proc.stdout)
    if result.error is not None and result.error.code == "no_gpu":  # this machine has nvcc but no GPU
        assert "compiled" in result.error.message
    else:
        assert result.status == "passed", result.error


def test_device_gpu_without_a_gpu_says_what_to_use_instead() -> None:
    from runner.clients.local import detect_gpu_type

    if detect_gpu_type("auto") != "cpu":
        pytest.skip("this machine has a GPU")
    proc = arena("submit", "vector_add", "examples/vector_add.py", "--device", "gpu", env=ENV)
    line = assert_one_line_error(proc, "nvidia-smi finds none on this machine", "--device cpu", "--runner")
    assert "store is unavailable" not in line


def test_a_source_file_that_cannot_be_read_is_one_line() -> None:
    # A regular file whose read fails (EIO): reading a process's own memory from offset 0.
    proc = arena("submit", "vector_add", "/proc/self/mem", env=ENV)
    assert_one_line_error(proc, "Cannot read /proc/self/mem")
