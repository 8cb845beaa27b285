"""The daemon's half of the precision audit: read the SASS of a job's CUDA library in the job's sandbox, and hand
the judge what it holds (`contract.precision.SassAudit`) before the judge's tests end.

cuobjdump runs sandboxed like nvcc (it parses a binary the submission's source shaped) and writes into the
launcher's out/, which the launcher cannot write. It runs while the judge tests the submission, so it adds
nothing to a run's time unless the tests finish first. A runner that cannot read the code says why in the audit;
the judge then refuses nothing (runner/judge/precision.py).
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

from contract.precision import MatrixUse, SassAudit
from runner.host.executor import Executor
from runner.host.process import SandboxedProcess
from runner.host.sandbox import JobDir
from runner.host.sass_audit import matrix_uses, sass_command

log = logging.getLogger(__name__)

SASS_FILE = "solution.sass"
AUDIT_TIMEOUT_S = 60.0


async def audit_library(executor: Executor, job: JobDir, library: Path) -> SassAudit:
    """The matrix instructions of `library` (a path the sandbox of `job` sees), read with cuobjdump."""
    out = job.out_dir / SASS_FILE
    command = sass_command(library, out)
    if command is None:
        return SassAudit(available=False, reason="cuobjdump is not installed")
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
        output = await proc.output()
    if returncode != 0 or not out.is_file():
        log.warning("precision audit: cuobjdump exited with %s: %s", returncode, output.strip()[-500:])
        reason = "cuobjdump took too long" if returncode is None else f"cuobjdump failed with exit code {returncode}"
        return SassAudit(available=False, reason=reason)
    uses = await asyncio.to_thread(_uses_in, out)
    return SassAudit(available=True, uses=uses)


def _uses_in(sass: Path) -> list[MatrixUse]:
    with sass.open(encoding="utf-8", errors="replace") as lines:
        return matrix_uses(lines)


async def write_audit(executor: Executor, job: JobDir, library: Path, target: Path) -> SassAudit:
    """Audit `library` and write the result to `target` (in the judge's in/) atomically: the judge reads it once
    the gate says `audited`. A failure of the audit itself is written as an unavailable audit."""
    try:
        audit = await audit_library(executor, job, library)
    except Exception as exc:
        log.exception("precision audit of %s failed", library)
        audit = SassAudit(available=False, reason=f"the audit failed ({type(exc).__name__})")
    tmp = target.with_suffix(".tmp")
    await asyncio.to_thread(tmp.write_text, audit.model_dump_json(), encoding="utf-8")
    await asyncio.to_thread(tmp.replace, target)
    return audit
