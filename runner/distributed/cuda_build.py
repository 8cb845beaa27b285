"""The judge's side of a distributed CUDA solution: where NCCL's header and library are, and the nvcc build.

The solution is built with the single-GPU judge's fixed flags (runner.host.compile) plus NCCL: its header from the
`nvidia-nccl` wheel torch depends on, or the system's, and its library linked by soname, so that each rank
process resolves it against the libnccl torch has already loaded. Nothing of the submission reaches the command
line but the source file.
"""

from __future__ import annotations

import importlib.util
import subprocess
from dataclasses import dataclass
from pathlib import Path

from runner.errors import CompileError
from runner.host.compile import compile_flags, nvcc_path

SYSTEM_PREFIXES = (Path("/usr"), Path("/usr/local"), Path("/usr/local/cuda"))
BUILD_TIMEOUT_S = 120.0


@dataclass(frozen=True)
class NcclInstall:
    include: Path
    lib: Path


def _wheel_prefixes() -> list[Path]:
    spec = importlib.util.find_spec("nvidia")
    if spec is None or not spec.submodule_search_locations:
        return []
    return [Path(location) / "nccl" for location in spec.submodule_search_locations]


def find_nccl() -> NcclInstall | None:
    """NCCL's header and library directory: torch's wheel first, then the system's; None where neither is."""
    for prefix in (*_wheel_prefixes(), *SYSTEM_PREFIXES):
        header = prefix / "include" / "nccl.h"
        if not header.is_file():
            continue
        for lib in (prefix / "lib", prefix / "lib64", prefix / "lib" / "x86_64-linux-gnu"):
            if any(lib.glob("libnccl.so*")):
                return NcclInstall(header.parent, lib)
    return None


def nccl_flags(nccl: NcclInstall) -> list[str]:
    """NCCL's include path, and its library by soname with the directory as run path (the wheel has no
    unversioned `libnccl.so` to link by `-lnccl`)."""
    library = "-l:libnccl.so.2" if (nccl.lib / "libnccl.so.2").exists() else "-lnccl"
    return [f"-I{nccl.include}", f"-L{nccl.lib}", library, "-Xlinker", f"-rpath={nccl.lib}"]


def build_command(arch: str, source: Path, output: Path, nccl: NcclInstall) -> list[str]:
    nvcc = nvcc_path()
    if nvcc is None:
        raise CompileError("nvcc was not found on this runner, so CUDA sources cannot be built here.")
    text = source.read_text(encoding="utf-8")
    return [nvcc, *compile_flags(arch, text), *nccl_flags(nccl), "-o", str(output), str(source)]


def build_solution(source: Path, output: Path, arch: str) -> Path:
    """Build `source` into the shared library `output`; CompileError with nvcc's own words when it fails."""
    nccl = find_nccl()
    if nccl is None:
        raise CompileError("NCCL's header (nccl.h) was not found on this runner, so distributed CUDA cannot build.")
    command = build_command(arch, source, output, nccl)
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=BUILD_TIMEOUT_S, check=False)
    except subprocess.TimeoutExpired as exc:
        raise CompileError(f"nvcc took longer than {BUILD_TIMEOUT_S:.0f} s; simplify the source.") from exc
    if done.returncode != 0:
        log = (done.stdout + done.stderr).replace(f"{source.parent}/", "")
        raise CompileError(f"nvcc failed:\n{log[-4000:]}")
    return output
