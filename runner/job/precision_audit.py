"""The daemon's half of the precision audit: read the SASS of a job's compiled code in the job's sandbox, and hand
the judge what it holds (`contract.precision.SassAudit`).

Two kinds of compiled code are read:
- a CUDA submission's library, while the judge tests it: it adds nothing to a run's time unless the tests finish
  first;
- the cubins Triton compiled for a Python submission on a GPU, which exist only once the submission has run: the
  judge says `tested` on its gate when its tests and hidden shapes have passed, the daemon copies the cubins out of
  the launcher's Triton cache (`runner.host.triton_cubins`, bounded) and reads them. No cubin, no audit file: the
  judge then has nothing to say, as before (a pure-PyTorch submission costs the gate's round trip, well under a
  millisecond of work).

cuobjdump runs sandboxed like nvcc (it parses a binary the submission shaped) and writes into the launcher's out/,
which the launcher cannot write. A runner that cannot read the code says why in the audit; the judge then refuses
nothing (runner/judge/precision.py).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable
from pathlib import Path

from contract.precision import MatrixUse, SassAudit
from runner.host.executor import Executor
from runner.host.process import SandboxedProcess
from runner.host.sandbox import JobDir, SandboxLevel
from runner.host.sass_audit import cubins_sass_command, matrix_uses, sass_command
from runner.host.triton_cubins import (
    CacheLocation,
    CacheUnreadableError,
    CopiedCubins,
    copy_cubins,
    sandbox_location,
)

log = logging.getLogger(__name__)

SASS_FILE = "solution.sass"
AUDIT_TIMEOUT_S = 60.0


async def _cuobjdump(executor: Executor, job: JobDir, command: list[str]) -> tuple[int | None, str]:
    """Run `command` (cuobjdump's) in the sandbox of `job`, with out/ writable and no GPU."""
    async with await SandboxedProcess.start(
        executor.sandbox,
        job,
        lambda _fd: command,
        slot_env={"CUDA_VISIBLE_DEVICES": ""},
        with_pipe=False,
        writable_out=True,
        output_limit=executor.output_limit,
        memory_limit=executor.memory_limit_bytes,
    ) as proc:
        returncode = await proc.wait(AUDIT_TIMEOUT_S)
        return returncode, await proc.output()


def _failed(returncode: int | None, output: str) -> SassAudit:
    log.warning("precision audit: cuobjdump exited with %s: %s", returncode, output.strip()[-500:])
    reason = "cuobjdump took too long" if returncode is None else f"cuobjdump failed with exit code {returncode}"
    return SassAudit(available=False, reason=reason)


async def audit_library(executor: Executor, job: JobDir, library: Path) -> SassAudit:
    """The matrix instructions of `library` (a path the sandbox of `job` sees), read with cuobjdump."""
    out = job.out_dir / SASS_FILE
    command = sass_command(library, out)
    if command is None:
        return SassAudit(available=False, reason="cuobjdump is not installed")
    returncode, output = await _cuobjdump(executor, job, command)
    if returncode != 0 or not out.is_file():
        return _failed(returncode, output)
    uses = await asyncio.to_thread(_uses_in, [out])
    return SassAudit(available=True, uses=uses)


async def audit_cubins(executor: Executor, job: JobDir, copied: CopiedCubins) -> SassAudit:
    """The matrix instructions of the cubins copied into the out/ of `job`, read with cuobjdump, one run each."""
    command = cubins_sass_command(copied.files)
    if command is None:
        return SassAudit(available=False, reason="cuobjdump is not installed")
    returncode, output = await _cuobjdump(executor, job, command)
    read = [sass for sass in (cubin.with_suffix(".sass") for cubin in copied.files) if sass.is_file()]
    if returncode != 0 or not read:
        return _failed(returncode, output)
    uses = await asyncio.to_thread(_uses_in, read)
    return SassAudit(available=True, uses=uses, unread=copied.unread + len(copied.files) - len(read))


def _uses_in(files: list[Path]) -> list[MatrixUse]:
    lines: list[str] = []
    for sass in files:
        lines += sass.read_text(encoding="utf-8", errors="replace").splitlines()
    return matrix_uses(lines)


def launcher_cache(executor: Executor, launcher: SandboxedProcess, job: JobDir) -> CacheLocation | None:
    """Where the daemon reads the Triton cache of the launcher of `job`: on its private tmpfs, through a process
    inside its root, with the full sandbox; in the host's folder otherwise. None when the launcher is gone."""
    if executor.sandbox.level is not SandboxLevel.FULL:
        return CacheLocation.on_host(job.root)
    return sandbox_location(launcher.inner_pids(), job.scratch)


async def cubin_audit(executor: Executor, job: JobDir, location: CacheLocation | None) -> SassAudit | None:
    """The audit of the Triton cubins at `location`, or None when there is none to read."""
    if location is None:
        return SassAudit(available=False, reason="the launcher's Triton cache could not be reached")
    try:
        copied = await asyncio.to_thread(copy_cubins, location, job.out_dir)
    except CacheUnreadableError as exc:
        log.warning("precision audit: the Triton cache of %s cannot be read: %s", job.root.name, exc)
        return SassAudit(available=False, reason=f"the Triton cache could not be read: {exc}")
    if copied is None or not (copied.files or copied.unread):
        return None  # nothing compiled by Triton: nothing to say
    if not copied.files:
        return SassAudit(available=True, unread=copied.unread)  # every cubin past the bounds: say so, accuse none
    return await audit_cubins(executor, job, copied)


async def _write(audit: Awaitable[SassAudit | None], what: str, target: Path) -> SassAudit | None:
    """Write the audit to `target` (in the judge's in/) atomically: the judge reads it once the gate says
    `audited`. A failure of the audit itself is written as an unavailable audit; no audit, no file."""
    try:
        result = await audit
    except Exception as exc:
        log.exception("precision audit of %s failed", what)
        result = SassAudit(available=False, reason=f"the audit failed ({type(exc).__name__})")
    if result is None:
        return None
    tmp = target.with_suffix(".tmp")
    await asyncio.to_thread(tmp.write_text, result.model_dump_json(), encoding="utf-8")
    await asyncio.to_thread(tmp.replace, target)
    return result


async def write_audit(executor: Executor, job: JobDir, library: Path, target: Path) -> SassAudit:
    """Audit `library` and write the result to `target`."""
    audit = await _write(audit_library(executor, job, library), str(library), target)
    assert audit is not None
    return audit


async def write_cubin_audit(
    executor: Executor, job: JobDir, location: CacheLocation | None, target: Path
) -> SassAudit | None:
    """Audit the Triton cubins at `location` and write the result to `target`; None (and no file) when there is
    no cubin."""
    return await _write(cubin_audit(executor, job, location), f"the Triton cache of {job.root.name}", target)
