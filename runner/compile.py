"""Compiles a CUDA submission to a shared library with fixed flags, caching by content."""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
import subprocess
import time
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from runner.errors import CompileError

log = logging.getLogger(__name__)

# Fixed flags: competitors cannot add their own, so every submission is built the same way.
BASE_FLAGS: tuple[str, ...] = ("-O3", "-std=c++17", "--shared", "-Xcompiler", "-fPIC", "-lineinfo")
COMPILE_TIMEOUT_S = 120.0
SOURCE_NAME = "solution.cu"


@dataclass(frozen=True)
class CompiledLibrary:
    path: Path
    seconds: float
    cached: bool
    log: str


@cache
def nvcc_path() -> str | None:
    return shutil.which("nvcc")


@cache
def nvcc_version() -> str:
    """nvcc's release line, part of the cache key: a new compiler must not reuse old builds."""
    nvcc = nvcc_path()
    if nvcc is None:
        return "none"
    out = subprocess.run([nvcc, "--version"], capture_output=True, text=True, timeout=30, check=False).stdout
    lines = [line for line in out.splitlines() if line.strip()]
    return lines[-1] if lines else "unknown"


def cuda_arch(capability: tuple[int, int] | None) -> str:
    """The -arch value for a device capability. Hopper gets sm_90a so wgmma and TMA are available."""
    if capability is None:
        return "sm_90"
    major, minor = capability
    suffix = "a" if (major, minor) in {(9, 0), (10, 0)} else ""
    return f"sm_{major}{minor}{suffix}"


def compile_flags(arch: str) -> list[str]:
    return [*BASE_FLAGS, f"-arch={arch}"]


def cache_key(source: str, arch: str) -> str:
    digest = hashlib.sha256()
    for part in (source, " ".join(compile_flags(arch)), nvcc_version()):
        digest.update(part.encode())
        digest.update(b"\0")
    return digest.hexdigest()[:32]


# Where a trusted compile step (the daemon's sandboxed nvcc) left libraries for this process to load.
# Looked up by cache key and never written to: the worker runs competitor code, so it must not feed a cache.
_prebuilt_dir: Path | None = None


def use_prebuilt(directory: Path | None) -> None:
    """Make `compile_cuda` load `directory/<key>.so` when it exists instead of running nvcc."""
    global _prebuilt_dir
    _prebuilt_dir = directory


def nvcc_command(arch: str, source: str, output: str) -> list[str]:
    """The full nvcc command line: fixed flags only, never anything from the submission."""
    nvcc = nvcc_path()
    if nvcc is None:
        raise CompileError("nvcc was not found on this runner, so CUDA sources cannot be built here.")
    return [nvcc, *compile_flags(arch), "-o", output, source]


def clean_log(output: str, build_dir: Path) -> str:
    """nvcc's output with the build directory removed, so messages read `solution.cu(3): error ...`."""
    return output.replace(f"{build_dir}/", "")


def cached_library(cache_dir: Path, key: str) -> Path | None:
    path = cache_dir / f"{key}.so"
    return path if path.is_file() and not path.is_symlink() else None


def store_library(cache_dir: Path, key: str, library: Path) -> Path:
    """Copy a freshly built library into the cache atomically (a reader never sees half a file)."""
    cache_dir.mkdir(parents=True, exist_ok=True)
    tmp = cache_dir / f".{key}.{os.getpid()}.tmp"
    shutil.copyfile(library, tmp, follow_symlinks=False)
    target = cache_dir / f"{key}.so"
    os.replace(tmp, target)
    return target


def compile_cuda(source: str, build_dir: Path, arch: str, cache_dir: Path | None = None) -> CompiledLibrary:
    """Build `source` into a shared library in `build_dir`; reuse a cached or prebuilt build of identical inputs.

    Raises CompileError with nvcc's output (paths made relative) when the build fails or takes too long.
    """
    build_dir.mkdir(parents=True, exist_ok=True)
    key = cache_key(source, arch)
    target = build_dir / f"solution_{key}.so"
    for directory in (d for d in (_prebuilt_dir, cache_dir) if d is not None):
        cached = cached_library(directory, key)
        if cached is not None:
            shutil.copyfile(cached, target)
            return CompiledLibrary(target, 0.0, True, "")
    src = build_dir / SOURCE_NAME
    src.write_text(source, encoding="utf-8")
    cmd = nvcc_command(arch, SOURCE_NAME, target.name)
    start = time.perf_counter()
    try:
        proc = subprocess.run(
            cmd,
            cwd=build_dir,
            capture_output=True,
            text=True,
            timeout=COMPILE_TIMEOUT_S,
            check=False,
            env={**os.environ, "LC_ALL": "C"},
        )
    except subprocess.TimeoutExpired as exc:
        raise CompileError(f"nvcc took longer than {COMPILE_TIMEOUT_S:.0f} s; simplify the source.") from exc
    seconds = time.perf_counter() - start
    output = clean_log(proc.stdout + proc.stderr, build_dir)
    if proc.returncode != 0 or not target.exists():
        raise CompileError(f"nvcc failed with exit code {proc.returncode}.", log=output or "(no output)")
    log.info("compiled %s in %.2f s (arch %s)", key, seconds, arch)
    if cache_dir is not None:
        store_library(cache_dir, key, target)
    return CompiledLibrary(target, seconds, False, output)
