"""nvcc's sandboxed process, started ahead with a job's judge and launcher and held until its build script comes.

Starting a sandbox (namespaces, the fresh root, dropping privilege) took 0.12 s of every CUDA job's nvcc phase on an
H200 host (a sandboxed /bin/true, started and ended). Started with the job's other processes, off any job's clock,
the compiler's sandbox is ready when the source comes: the runner writes the build script into the job's inputs
and opens the gate, and the waiting shell runs it. A job that compiles nothing (Python, a cached build) closes the
gate instead, and the shell ends without running anything.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from runner.host.compile import nvcc_path
from runner.host.process import SandboxedProcess
from runner.host.sandbox import JobDir, Sandbox

SCRIPT_NAME = "build.sh"
# What the compiler sees of the host's devices: none; nvcc needs no GPU.
COMPILE_ENV = {"CUDA_VISIBLE_DEVICES": ""}


@dataclass
class CompileGate:
    """The waiting compiler process of one job, and the write end of its gate."""

    process: SandboxedProcess
    go_fd: int
    script: Path

    def build(self, text: str) -> SandboxedProcess:
        """Run the /bin/sh script `text` in the waiting process, which is returned (its exit is the build's)."""
        self.script.write_text(text, encoding="utf-8")
        self._close_gate(b"go\n")
        return self.process

    async def close(self) -> None:
        """End it, built or not (a process that never got its script exits as its gate closes)."""
        self._close_gate(b"")
        await self.process.stop()

    def _close_gate(self, line: bytes) -> None:
        if self.go_fd < 0:
            return
        try:
            if line:
                os.write(self.go_fd, line)
        except OSError:
            pass  # it died while waiting: its exit status says so to whoever waits for it
        finally:
            os.close(self.go_fd)
            self.go_fd = -1


def exec_script(argv: Sequence[str]) -> str:
    """A build script that runs `argv` alone."""
    return "exec " + " ".join(shlex.quote(arg) for arg in argv) + "\n"


async def start_compile_gate(
    sandbox: Sandbox, job: JobDir, *, output_limit: int, memory_limit: int
) -> CompileGate | None:
    """Start the compiler's sandboxed process for `job`, waiting at its gate; None where there is no nvcc."""
    if nvcc_path() is None:
        return None
    read_fd, write_fd = os.pipe()
    script = job.in_dir / SCRIPT_NAME
    # The interpreter waits, not a shell: a POSIX shell's redirections take one-digit descriptors only, and the
    # pipe, made by the runner's user, cannot be opened again through /proc by the job's.
    wait = "\n".join(
        [
            "import os, sys",
            f"if os.read({read_fd}, 3) != b'go\\n':",
            "    sys.exit(1)",
            f"os.execv('/bin/sh', ['/bin/sh', {str(script)!r}])",
        ]
    )
    waiter = [sandbox.policy.python, "-I", "-S", "-c", wait]
    try:
        process = await SandboxedProcess.start(
            sandbox,
            job,
            lambda _fd: waiter,
            slot_env=COMPILE_ENV,
            with_pipe=False,
            writable_out=True,
            output_limit=output_limit,
            extra_fds=(read_fd,),
            memory_limit=memory_limit,
        )
    except BaseException:
        os.close(write_fd)
        raise
    finally:
        os.close(read_fd)
    return CompileGate(process, write_fd, script)
