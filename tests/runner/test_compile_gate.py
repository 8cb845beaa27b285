"""The compiler's sandboxed process started ahead: it runs the build script it is given, in the job's sandbox
with the job's output folder writable, and ends without running anything when its gate closes unused."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from runner.host.compile_gate import exec_script, start_compile_gate
from runner.host.sandbox import JobDir, Sandbox, SandboxPolicy, open_sandbox
from runner.settings import RunnerSettings

pytestmark = pytest.mark.skipif(shutil.which("nvcc") is None, reason="the gate is started only where nvcc is")


async def _sandbox(state_dir: Path) -> Sandbox:
    """The sandbox of the runner's settings, probed here."""
    settings = RunnerSettings.model_validate({"state_dir": state_dir, "secret": "x" * 32})
    return await open_sandbox(SandboxPolicy.from_settings(settings), state_dir / "jobs")


async def test_the_waiting_compiler_runs_its_build_script_and_its_exit_is_the_builds(state_dir: Path) -> None:
    sandbox = await _sandbox(state_dir)
    job = JobDir.create(state_dir / "jobs", "gate-build", sandbox.uid_for(0))
    gate = await start_compile_gate(sandbox, job, output_limit=4096, memory_limit=0)
    assert gate is not None
    script = f"echo built > {job.out_dir / 'solution.so'}\necho 'nvcc said this'\nexit 3\n"
    async with gate.build(script) as proc:
        assert await proc.wait(60) == 3
        assert "nvcc said this" in await proc.output()
    assert (job.out_dir / "solution.so").read_text() == "built\n"
    await gate.close()  # after a build: nothing left to do, and no error


async def test_a_gate_closed_unused_ends_its_process_without_running_the_script(state_dir: Path) -> None:
    sandbox = await _sandbox(state_dir)
    job = JobDir.create(state_dir / "jobs", "gate-unused", sandbox.uid_for(0))
    gate = await start_compile_gate(sandbox, job, output_limit=4096, memory_limit=0)
    assert gate is not None
    gate.script.write_text(f"echo ran > {job.out_dir / 'ran'}\n")  # there, but never run: the gate stays shut
    gate._close_gate(b"")
    assert await gate.process.wait(60) == 1
    assert not (job.out_dir / "ran").exists()
    await gate.close()


def test_a_plain_build_script_runs_the_command_as_given() -> None:
    assert exec_script(["nvcc", "-o", "a b.so", "x.cu"]) == "exec nvcc -o 'a b.so' x.cu\n"
