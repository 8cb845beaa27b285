"""What a solution prints comes back with its result, per phase and bounded, through the real sandboxed judge and
launcher: its descriptors 1 and 2 are capture files of their own, so a print never reaches the judge's channel."""

from __future__ import annotations

import secrets
import shutil
from pathlib import Path

import pytest

from contract.wire import OUTPUT_KEEP_BYTES, JobRequest, MeasureConfig, PhaseOutput, SubmissionResult
from runner.host.executor import Executor
from runner.job.run import run_job
from runner.judge.evaluate import PRINTED_WHILE_TIMED
from tests.runner.conftest import good_request, job_request, settings_for

QUICK = MeasureConfig(method="cpu", min_samples=3, max_samples=6, max_seconds=0.5, warmup=False, input_sets=2)

PRINTS_EVERYWHERE = """
import sys
import torch

print("hello from import")
calls = 0


def solution(a, b, c, n):
    global calls
    calls += 1
    torch.add(a, b, out=c)
    print(f"call {calls} n={n}")
    print(f"warning {calls}", file=sys.stderr)
"""

PRINTS_ONE_MEGABYTE = """
import sys
import torch

printed = False


def solution(a, b, c, n):
    global printed
    if not printed:
        printed = True
        sys.stdout.write("x" * (1 << 20))
        sys.stdout.flush()
    torch.add(a, b, out=c)
"""

# What a hostile solution would send if its prints reached the judge's channel or the host's events pipe: a
# length-prefixed reply and a `done` event with a forged passing result.
FORGES_MESSAGES = """
import json
import os
import struct
import torch

forged_reply = json.dumps({"ok": True, "threads": [1, 1], "returned_tensor": False}).encode()
forged_event = json.dumps({"seq": 99, "type": "done", "message": "passed", "result": {
    "submission_id": "x", "problem_slug": "vector_add", "problem_version": 1, "dtype": "float32",
    "language": "python", "mode": "test", "status": "passed", "device": "forged"}})


def solution(a, b, c, n):
    os.write(1, struct.pack(">I", len(forged_reply)) + forged_reply)
    os.write(2, (forged_event + "\\n").encode())
    print(forged_event, flush=True)
    # The answer is wrong: only a forged message could make this job pass.
    c.zero_()
"""

PRINTS_THEN_FAILS = """
import torch


def solution(a, b, c, n):
    print(f"debug: a[0]={float(a[0]):.3f}")
    c.copy_(a)
"""


# Python's print and C's printf, then a crash: a dead launcher reports nothing, so the judge reads the capture files.
PRINTS_THEN_ABORTS = """
import ctypes
import os

libc = ctypes.CDLL(None)


def solution(a, b, c, n):
    print(f"about to crash on n={n}")
    libc.printf(b"from C before the crash\\n")
    os.abort()
"""


@pytest.fixture
async def executor(state_dir: Path) -> Executor:
    return await Executor.from_settings(settings_for(state_dir, secrets.token_hex(24)))


# A run the runner answers with `host_busy` (its host too loaded for a check to decide) is tried again, as the
# dispatcher does: that answer is never a verdict on the solution.
HOST_BUSY_RETRIES = 2


async def _run(executor: Executor, request: JobRequest) -> SubmissionResult:
    for _ in range(HOST_BUSY_RETRIES):
        result = await run_job(request, executor=executor)
        if result.error is None or result.error.code != "host_busy":
            return result
    return await run_job(request, executor=executor)


def _phase(result: SubmissionResult, phase: str) -> PhaseOutput:
    found = [o for o in result.output if o.phase == phase]
    assert len(found) == 1, result.output
    return found[0]


async def test_prints_of_each_phase_come_back_and_timed_prints_get_a_note(executor: Executor) -> None:
    result = await _run(executor, job_request(PRINTS_EVERYWHERE, mode="benchmark", measure=QUICK))
    assert result.status == "passed", result.error
    assert _phase(result, "load").stdout == "hello from import\n"
    test = _phase(result, "test")
    assert test.stdout.startswith("call 1 n=") and test.stdout.count("call ") == len(result.tests)
    assert test.stderr.startswith("warning 1\n")
    benchmark = _phase(result, "benchmark")
    first_timed = len(result.tests) + 1
    assert f"call {first_timed} " in benchmark.stdout, benchmark.stdout[:200]
    assert PRINTED_WHILE_TIMED in result.notes


async def test_a_run_that_prints_only_in_its_tests_has_no_timing_note(executor: Executor) -> None:
    result = await _run(executor, job_request(PRINTS_THEN_FAILS.replace("c.copy_(a)", "torch.add(a, b, out=c)")))
    assert result.status == "passed", result.error
    assert [o.phase for o in result.output] == ["test"]
    assert PRINTED_WHILE_TIMED not in result.notes


async def test_a_quiet_solution_has_no_output(executor: Executor) -> None:
    result = await _run(executor, good_request())
    assert result.status == "passed", result.error
    assert result.output == []


async def test_a_megabyte_printed_is_cut_to_the_kept_bytes_and_counted(executor: Executor) -> None:
    result = await _run(executor, job_request(PRINTS_ONE_MEGABYTE))
    assert result.status == "passed", result.error
    test = _phase(result, "test")
    assert test.stdout == "x" * OUTPUT_KEEP_BYTES
    assert test.stdout_cut_bytes == (1 << 20) - OUTPUT_KEEP_BYTES
    assert test.stderr == "" and test.stderr_cut_bytes == 0
    # The judge is unharmed: the next job on the same executor passes.
    after = await _run(executor, good_request())
    assert after.status == "passed", after.error


async def test_a_forged_harness_message_is_only_output(executor: Executor) -> None:
    result = await _run(executor, job_request(FORGES_MESSAGES))
    assert result.status == "failed", result
    assert result.device != "forged"
    assert result.error is not None and result.error.code == "wrong_answer", result.error
    test = _phase(result, "test")
    assert '"returned_tensor": false' in test.stdout
    assert '"device": "forged"' in test.stdout and '"device": "forged"' in test.stderr


async def test_output_printed_before_a_wrong_answer_is_shown(executor: Executor) -> None:
    result = await _run(executor, job_request(PRINTS_THEN_FAILS))
    assert result.status == "failed", result
    assert _phase(result, "test").stdout.startswith("debug: a[0]=")


async def test_what_was_printed_before_a_crash_is_shown_with_the_crash(executor: Executor) -> None:
    result = await _run(executor, job_request(PRINTS_THEN_ABORTS))
    assert result.error is not None and result.error.code == "crashed", result.error
    assert "SIGABRT" in result.error.message
    test = _phase(result, "test")
    assert test.stdout.splitlines() == ["about to crash on n=7", "from C before the crash"], test


CUDA_PRINTF = r"""
#include <cstdio>

__global__ void add(const float* a, const float* b, float* c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i == 0) printf("device says n=%d\n", n);
    if (i < n) c[i] = a[i] + b[i];
}

extern "C" void solution(const float* a, const float* b, float* c, int n) {
    printf("host says n=%d\n", n);
    add<<<(n + 255) / 256, 256>>>(a, b, c, n);
}
"""


@pytest.mark.gpu
async def test_a_cuda_solutions_host_and_device_printf_come_back(executor: Executor) -> None:
    if shutil.which("nvcc") is None:
        pytest.skip("no nvcc")
    request = job_request(CUDA_PRINTF, language="cuda", file_name="solution.cu", device_kind="gpu")
    result = await _run(executor, request)
    assert result.status == "passed", result.error
    test = _phase(result, "test")
    assert "host says n=" in test.stdout and "device says n=" in test.stdout, test


# The launcher's capture in a process of its own, without a GPU: C's buffered `printf` (what a .cu solution's host
# code calls, and where the driver's device `printf` goes) is flushed into the phase that printed it.
C_PRINTF_PROBE = r"""
import ctypes, json, os, sys
from pathlib import Path
from runner.launcher.capture import OutputCapture

capture = OutputCapture(Path(sys.argv[1]), 64)
libc = ctypes.CDLL(None)
libc.printf(b"from C printf %d\n", 42)
print("from python")
first = capture.take()
libc.printf(b"%s", b"z" * 100)
os.write(2, b"raw stderr\n")
second = capture.take()
third = capture.take()
print("harness log line", file=capture.log_stream)
json.dump([[p.text, p.cut_bytes] for p in (*first, *second, *third)], capture.log_stream)
"""


def test_c_printf_is_flushed_into_the_phase_that_printed_it(tmp_path: Path) -> None:
    import json
    import subprocess
    import sys

    from runner.host.sandbox import PACKAGE_ROOT

    done = subprocess.run(
        [sys.executable, "-c", C_PRINTF_PROBE, str(tmp_path / "output")],
        capture_output=True,
        text=True,
        cwd=PACKAGE_ROOT,
        timeout=120,
        check=True,
    )
    # The process's own stdout and stderr saw nothing of what was captured; the launcher's log still reaches them.
    assert done.stdout == ""
    first_line, report = done.stderr.split("\n", 1)
    assert first_line == "harness log line"
    stdout1, stderr1, stdout2, stderr2, stdout3, stderr3 = json.loads(report)
    # Python's and C's buffers are separate: each line arrives whole, in either order.
    assert sorted(stdout1[0].splitlines()) == ["from C printf 42", "from python"] and stdout1[1] == 0
    assert stderr1 == ["", 0]
    assert stdout2 == ["z" * 64, 36]
    assert stderr2 == ["raw stderr\n", 0]
    assert stdout3 == ["", 0] and stderr3 == ["", 0]


def test_the_judge_cuts_and_counts_whatever_the_launcher_sends() -> None:
    from runner.ipc import messages

    raw = {"ok": True, "stdout": "é" * 10_000, "stderr": "", "stdout_cut": 5, "stderr_cut": 0}
    printed = messages.decode_printed(raw, OUTPUT_KEEP_BYTES)
    assert printed.stdout == "é" * OUTPUT_KEEP_BYTES
    assert printed.stdout_cut == 5 + 2 * (10_000 - OUTPUT_KEEP_BYTES)  # the bytes of the characters cut
    for bad in ({"stdout_cut": -1}, {"stdout_cut": True}, {"stdout_cut": 1.5}, {"stderr": None}, {"stdout": 3}):
        with pytest.raises(messages.MalformedMessageError):
            messages.decode_printed({**raw, **bad}, OUTPUT_KEEP_BYTES)
