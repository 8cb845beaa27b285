"""Runs Nsight Compute on one call of a submission and leaves what it found in the job's output folder.

Started by the runner (`runner.profiling.run`) in the job's sandbox, with the job's uid, limits and deadline, after
the submission passed its tests. It runs ncu on `runner.launcher.profiled_call`, then has ncu read its own report
back as the raw page (the figures) and the details page (the text report), and for a CUDA submission writes the
library's SASS and the source's PTX. Each step's failure is written to `status.json` for the runner to report.

    python -m runner.profiling.collect --request FILE --case N --workdir DIR --out DIR [--prebuilt-dir DIR]
        [--arch sm_90a] [--source FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from runner.host.sandbox import python_command
from runner.launcher.profiled_call import FAILURE, NVTX_RANGE
from runner.profiling.ncu_report import EXTRA_METRICS, SECTIONS

# File names in the output folder; the runner reads these and nothing else.
REPORT = "profile.ncu-rep"
RAW_PAGE = "raw.csv"
DETAILS = "profile.txt"
SASS = "solution.sass"
PTX = "solution.ptx"
STATUS = "status.json"
LOG = "ncu.log"
# A call that launches thousands of kernels (a Python loop of small ops) is profiled on its first ones only:
# each launch is replayed once per pass of the sections, so the profile's time grows with every launch.
MAX_LAUNCHES = 50
# What ncu prints when the driver keeps the counters for administrators (RmProfilingAdminOnly=1).
PERMISSION_ERROR = "ERR_NVGPUCTRPERM"
# What the CUDA toolkit's `ncu` launcher prints when it finds no Nsight Compute install tree (one the sandbox does
# not show, or none at all): the runner's fault, never the submission's.
NOT_INSTALLED = "Nsight Compute is not installed"
LOG_LIMIT = 64 * 1024


def ncu_path() -> str | None:
    return shutil.which("ncu")


def profile_command(
    ncu: str, python: str, child_args: list[str], report_base: Path, metrics: Sequence[str] = EXTRA_METRICS
) -> list[str]:
    """ncu on the profiled call (started as every sandboxed module is: `python -I`, the package's root on its path):
    only the kernels inside its NVTX range, the report's sections and `metrics`."""
    sections = [arg for name in SECTIONS for arg in ("--section", name)]
    return [
        ncu,
        "--target-processes",
        "all",
        "--nvtx",
        "--nvtx-include",
        f"{NVTX_RANGE}/",
        "--launch-count",
        str(MAX_LAUNCHES),
        *sections,
        "--metrics",
        ",".join(metrics),
        "--export",
        str(report_base),
        "--force-overwrite",
        *python_command(python, "runner.launcher.profiled_call", child_args),
    ]


def import_command(ncu: str, report: Path, page: str) -> list[str]:
    command = [ncu, "--import", str(report), "--page", page]
    return [*command, "--csv", "--print-units", "base"] if page == "raw" else command


def ptx_command(nvcc: str, arch: str, source: Path, output: Path) -> list[str]:
    """The source's PTX for the slot's architecture (`sm_90a` -> `compute_90a`), with the build's own options."""
    virtual = arch.replace("sm_", "compute_", 1)
    return [nvcc, "-ptx", "-O3", "-std=c++17", "-lineinfo", f"-arch={virtual}", "-o", str(output), str(source)]


def _write_status(out: Path, code: str, message: str) -> None:
    (out / STATUS).write_text(json.dumps({"code": code, "message": message}), encoding="utf-8")


def _run_to_file(command: list[str], target: Path) -> subprocess.CompletedProcess[str]:
    with target.open("w", encoding="utf-8") as stdout:
        return subprocess.run(command, stdout=stdout, stderr=subprocess.PIPE, text=True, check=False)


def _tail(text: str) -> str:
    return text[-LOG_LIMIT:]


def collect(args: argparse.Namespace) -> int:
    out: Path = args.out
    ncu = ncu_path()
    if ncu is None:
        _write_status(out, "profiler_unavailable", "Nsight Compute (ncu) is not installed on this runner.")
        return 2
    child_args = ["--request", str(args.request), "--case", str(args.case), "--workdir", str(args.workdir)]
    if args.prebuilt_dir is not None:
        child_args += ["--prebuilt-dir", str(args.prebuilt_dir)]
    command = profile_command(ncu, sys.executable, child_args, out / REPORT.removesuffix(".ncu-rep"))
    proc = subprocess.run(command, capture_output=True, text=True, check=False)
    log = _tail(proc.stdout + proc.stderr)
    (out / LOG).write_text(log, encoding="utf-8")
    if PERMISSION_ERROR in log:
        _write_status(
            out,
            "profiler_unavailable",
            "This runner's GPU driver lets only administrators read the performance counters "
            "(RmProfilingAdminOnly=1), and jobs do not run as one.",
        )
        return 2
    if NOT_INSTALLED in log:
        _write_status(
            out, "profiler_unavailable", f"This runner's ncu cannot find its Nsight Compute installation: {_tail(log)}"
        )
        return 2
    failure = next((line.strip() for line in log.splitlines() if line.startswith(FAILURE)), None)
    if failure is not None:
        _write_status(out, "runtime_error", failure)
        return 3
    if not (out / REPORT).is_file():
        _write_status(out, "runtime_error", "Nsight Compute produced no report.")
        return 3
    for page, name in (("raw", RAW_PAGE), ("details", DETAILS)):
        done = _run_to_file(import_command(ncu, out / REPORT, page), out / name)
        if done.returncode != 0:
            _write_status(out, "internal", f"ncu could not read its report back ({page} page): {_tail(done.stderr)}")
            return 4
    if args.source is not None and args.arch:
        _cuda_listings(args, out)
    _write_status(out, "ok", "")
    return 0


def _cuda_listings(args: argparse.Namespace, out: Path) -> None:
    """The library's SASS and the source's PTX; missing tools only leave the files out."""
    cuobjdump, nvcc = shutil.which("cuobjdump"), shutil.which("nvcc")
    libraries = sorted(Path(args.prebuilt_dir).glob("*.so")) if args.prebuilt_dir is not None else []
    if cuobjdump and libraries:
        _run_to_file([cuobjdump, "-sass", str(libraries[0])], out / SASS)
    if nvcc:
        _run_to_file(ptx_command(nvcc, args.arch, args.source, out / PTX), Path(os.devnull))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="runner.profiling.collect")
    parser.add_argument("--request", type=Path, required=True, help="the public request (no seed)")
    parser.add_argument("--case", type=int, required=True)
    parser.add_argument("--workdir", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--prebuilt-dir", type=Path)
    parser.add_argument("--arch", help="the slot's nvcc arch (sm_90a): with --source, the PTX is written")
    parser.add_argument("--source", type=Path, help="a CUDA submission's source")
    args = parser.parse_args(argv)
    args.workdir.mkdir(parents=True, exist_ok=True)
    return collect(args)


if __name__ == "__main__":
    sys.exit(main())
