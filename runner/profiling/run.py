"""The runner's side of a profile: run the collector in the job's sandbox, read what it left, build the report.

The collector (`runner.profiling.collect`) and the call it profiles run in a sandboxed process of the job's own,
as the launcher does: the job's uid, memory limit and deadline, its private directories, no view of the judge's.
The runner reads back only the collector's named files, each within a size bound, and parses the raw page here.
"""

from __future__ import annotations

import asyncio
import base64
import functools
import json
import logging
import subprocess
from pathlib import Path

from contract.wire import JobRequest, KernelProfile, ProfileArtifact, ProfileReport
from runner.errors import ProfilerUnavailableError, SolutionRuntimeError, SubmissionError
from runner.host.process import SandboxedProcess
from runner.host.sandbox import JobDir, Sandbox, python_command
from runner.profiling import collect
from runner.profiling.ncu_report import TOP_KERNELS, NcuReportError, launch_count, parse_raw_page

log = logging.getLogger(__name__)

# Each file that comes with a profile, at most this big (a Discord message takes 8 MB in all).
ARTIFACT_LIMIT = 4 * 1024 * 1024
RAW_PAGE_LIMIT = 16 * 1024 * 1024
# The artifacts, in the order a user reads them.
ARTIFACTS = (collect.DETAILS, collect.REPORT, collect.PTX, collect.SASS)
PUBLIC_REQUEST = "profile_request.json"
PROFILE_SOURCE = "profile_source.cu"


class ProfileFailedError(SubmissionError):
    """The profiler itself failed (not the submission): logged, and shown with the profiler's own words."""

    code = "internal"


@functools.cache
def ncu_version() -> str:
    ncu = collect.ncu_path()
    if ncu is None:
        return ""
    try:
        out = subprocess.run([ncu, "--version"], capture_output=True, text=True, timeout=30, check=False).stdout
    except (OSError, subprocess.SubprocessError):
        return "Nsight Compute"
    version = next(
        (line.split("Version", 1)[1].split("(")[0].strip() for line in out.splitlines() if "Version" in line), ""
    )
    return f"Nsight Compute {version}".strip()


def _notes(kernels: list[KernelProfile], launches: int) -> list[str]:
    notes = ["Nsight Compute locks the clocks to base for its passes: durations read longer than the benchmark's."]
    # Only where matrix instructions ran with no tensor op counted: a GPU, an ncu or a source type without the
    # tensor path's ops counters that the profile asks for.
    if any(k.tensor_instructions and not k.tensor_flops for k in kernels):
        notes.append(
            "Some kernels ran tensor-core instructions: the SASS counters see no FLOPs in those, so the counted "
            "FLOPs fall short of the work done."
        )
    if launches >= collect.MAX_LAUNCHES:
        notes.append(f"Only the call's first {collect.MAX_LAUNCHES} kernel launches were profiled.")
    return notes


def _artifact(path: Path) -> ProfileArtifact | None:
    try:
        size = path.stat().st_size
    except OSError:
        return None
    if size == 0 or size > ARTIFACT_LIMIT:
        return None
    return ProfileArtifact(name=path.name, data_b64=base64.b64encode(path.read_bytes()).decode("ascii"))


def read_collected(out: Path, target: ProfileReport) -> ProfileReport:
    """The report from the collector's files in `out`: its status, the raw page, and the artifacts. Blocking."""
    status_file = out / collect.STATUS
    status = json.loads(status_file.read_text(encoding="utf-8")) if status_file.is_file() else {}
    code, message = status.get("code"), str(status.get("message", ""))
    if code == "profiler_unavailable":
        raise ProfilerUnavailableError(message)
    if code != "ok":
        ncu_log = (
            (out / collect.LOG).read_text(encoding="utf-8", errors="replace") if (out / collect.LOG).is_file() else ""
        )
        if code == "runtime_error":
            raise SolutionRuntimeError(f"The profile of case {target.case_name} failed: {message}", log=ncu_log)
        raise ProfileFailedError(
            f"The profiler failed on case {target.case_name}: {message or 'no status'}", log=ncu_log
        )
    raw = out / collect.RAW_PAGE
    if raw.stat().st_size > RAW_PAGE_LIMIT:
        raise ProfileFailedError("The profiler's report was too large to read.")
    try:
        kernels = parse_raw_page(raw.read_text(encoding="utf-8", errors="replace"))
    except NcuReportError as exc:
        raise ProfileFailedError(f"The profiler's report could not be read: {exc}") from exc
    if not kernels:
        raise SolutionRuntimeError(
            f"The call launched no kernel on case {target.case_name}, so there is nothing to profile."
        )
    launches = launch_count(kernels)
    artifacts = [a for a in (_artifact(out / name) for name in ARTIFACTS) if a is not None]
    return target.model_copy(
        update={
            "tool": ncu_version(),
            "kernels": kernels[:TOP_KERNELS],
            "kernel_count": launches,
            "notes": _notes(kernels, launches),
            "artifacts": artifacts,
        }
    )


async def profile_submission(
    sandbox: Sandbox,
    job: JobDir,
    request: JobRequest,
    target: ProfileReport,
    *,
    slot_env: dict[str, str],
    arch: str | None,
    limit_s: float,
    output_limit: int,
    memory_limit: int | None,
) -> ProfileReport:
    """Profile `target`'s case of `request` in a sandboxed process of `job` (whose prebuilt library, for CUDA, is
    in place); the report, or a SubmissionError that says what went wrong."""
    public = request.model_copy(update={"seed": None})
    await asyncio.to_thread((job.in_dir / PUBLIC_REQUEST).write_text, public.model_dump_json(), encoding="utf-8")
    args = ["--request", str(job.in_dir / PUBLIC_REQUEST), "--case", str(target.case_index)]
    args += ["--workdir", str(job.scratch / "profile"), "--out", str(job.out_dir)]
    if request.language == "cuda":
        source = job.in_dir / PROFILE_SOURCE
        await asyncio.to_thread(source.write_text, request.source, encoding="utf-8")
        args += ["--prebuilt-dir", str(job.in_dir / "prebuilt"), "--source", str(source)]
        if arch:
            args += ["--arch", arch]
    argv = python_command(sandbox.policy.python, "runner.profiling.collect", args)
    async with await SandboxedProcess.start(
        sandbox,
        job,
        lambda _fd: argv,
        slot_env=slot_env,
        with_pipe=False,
        writable_out=True,
        output_limit=output_limit,
        memory_limit=memory_limit,
    ) as proc:
        returncode = await proc.wait(limit_s)
        output = await proc.output()
    if returncode is None:
        raise SolutionRuntimeError(f"Profiling took longer than {limit_s:.0f} s and was stopped.", log=output)
    log.info("job %s: profiler exited %s", request.submission_id, returncode)
    return await asyncio.to_thread(read_collected, job.out_dir, target)
