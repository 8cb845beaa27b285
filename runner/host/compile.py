"""Compiles a CUDA submission to a shared library with fixed flags, caching by content."""

from __future__ import annotations

import hashlib
import logging
import os
import re
import shutil
import stat
import subprocess
import tempfile
import time
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from runner.errors import CompileError
from runner.gpus import nvcc_arch

log = logging.getLogger(__name__)

# Fixed flags: competitors cannot add their own, so every submission is built the same way. `--threads 2` lets nvcc
# run the host's preprocessing and front end beside the device's (the same output, sooner).
BASE_FLAGS: tuple[str, ...] = ("-O3", "-std=c++17", "--shared", "-Xcompiler", "-fPIC", "-lineinfo", "--threads", "2")
COMPILE_TIMEOUT_S = 120.0
SOURCE_NAME = "solution.cu"
# Bound of the daemon's cache of compiled libraries (RUNNER_CACHE_MAX_MB): past it, the least recently used
# entries are removed. Callers pass the configured value as `store_library(..., max_bytes=...)`.
DEFAULT_CACHE_MAX_BYTES = 2048 * 1024 * 1024
# A temporary file of an interrupted store (a killed daemon) older than this is removed by the next eviction.
STALE_TMP_S = 3600.0


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
    """The -arch value for a device capability, from the GPU registry (`runner.gpus.nvcc_arch`). Hopper gets
    sm_90a so wgmma and TMA are available."""
    return nvcc_arch(capability)


def compile_flags(arch: str, source: str = "") -> list[str]:
    return [*BASE_FLAGS, arch_flag(arch), *library_flags(source)]


def arch_flag(arch: str) -> str:
    """Machine code for exactly the runner's GPU, from one device pass. `-arch=sm_90a` would also embed PTX for
    the portable `compute_90`, a second front-end and cicc pass (about 0.3 s of every compile) that no job
    uses: the library only ever runs on the GPU model it was built for (`arch` is in the cache key)."""
    virtual = arch.replace("sm_", "compute_", 1)
    return f"-gencode=arch={virtual},code={arch}"


# Libraries a solution may link, by the header that asks for them. Linked only when included: a toolkit
# without them (a minimal nvcc install) still builds every other source. The launcher has them loaded already,
# through torch, so the built library finds them at load time.
LINKABLE: dict[str, str] = {"cublas_v2.h": "-lcublas", "cublasLt.h": "-lcublasLt"}
_INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^>"]+)[>"]', re.MULTILINE)


def library_flags(source: str) -> list[str]:
    included = set(_INCLUDE.findall(source))
    return [flag for header, flag in LINKABLE.items() if header in included]


def cache_key(source: str, arch: str) -> str:
    digest = hashlib.sha256()
    for part in (source, " ".join(compile_flags(arch, source)), nvcc_version()):
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


def nvcc_command(arch: str, source: str, output: str, text: str = "") -> list[str]:
    """The full nvcc command line: fixed flags only (and the libraries `text` includes), never anything else from
    the submission."""
    nvcc = nvcc_path()
    if nvcc is None:
        raise CompileError("nvcc was not found on this runner, so CUDA sources cannot be built here.")
    return [nvcc, *compile_flags(arch, text), "-o", output, source]


def clean_log(output: str, build_dir: Path) -> str:
    """nvcc's output with the build directory removed, so messages read `solution.cu(3): error ...`."""
    return output.replace(f"{build_dir}/", "")


def cached_library(cache_dir: Path, key: str, *, touch: bool = True) -> Path | None:
    """The cached library of `key`, or None. A hit touches its mtime (eviction is by least recent use) unless
    `touch` is false, as for the worker's read-only prebuilt directory, which is no cache."""
    path = cache_dir / f"{key}.so"
    if not path.is_file() or path.is_symlink():
        return None
    if not touch:
        return path
    try:
        os.utime(path)
    except FileNotFoundError:
        return None  # evicted by a concurrent store between the check and the touch
    except OSError:
        pass  # a read-only cache is still readable; it just keeps its old recency
    return path


def store_library(cache_dir: Path, key: str, library: Path, *, max_bytes: int = DEFAULT_CACHE_MAX_BYTES) -> Path:
    """Copy a freshly built library into the cache atomically (a reader never sees half a file), then evict the
    least recently used entries until the cache holds at most `max_bytes`. Returns the path to load from.

    The entry just stored is never evicted, even when it alone exceeds the bound. With `max_bytes` 0 caching is
    off: nothing is written, entries left from a larger bound are removed, and `library` itself is returned.
    """
    if max_bytes < 0:
        raise ValueError(f"max_bytes must be >= 0, got {max_bytes}")
    cache_dir.mkdir(parents=True, exist_ok=True)
    if max_bytes == 0:
        evict_lru(cache_dir, 0)
        return library
    # A unique temporary name: two jobs of one daemon may store the same key at once (same pid, two threads).
    fd, tmp_name = tempfile.mkstemp(prefix=f".{key}.", suffix=".tmp", dir=cache_dir)
    os.close(fd)
    tmp = Path(tmp_name)
    target = cache_dir / f"{key}.so"
    try:
        shutil.copyfile(library, tmp, follow_symlinks=False)
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    evict_lru(cache_dir, max_bytes, keep=target)
    return target


@dataclass(frozen=True)
class CacheEntry:
    path: Path
    size: int
    mtime_ns: int


def cache_entries(cache_dir: Path) -> list[CacheEntry]:
    """The `<key>.so` regular files of `cache_dir`, least recently used first. Symlinks and other files are
    neither listed nor counted; a temporary file older than STALE_TMP_S (from a killed store) is removed."""
    entries: list[CacheEntry] = []
    stale_before = time.time() - STALE_TMP_S
    try:
        with os.scandir(cache_dir) as scan:
            found = list(scan)
    except FileNotFoundError:
        return []
    for entry in found:
        try:
            st = entry.stat(follow_symlinks=False)
        except FileNotFoundError:
            continue  # removed by a concurrent eviction since the scan
        if not stat.S_ISREG(st.st_mode):
            continue
        if entry.name.startswith("."):
            if entry.name.endswith(".tmp") and st.st_mtime < stale_before:
                _unlink_quietly(Path(entry.path))
            continue
        if entry.name.endswith(".so"):
            entries.append(CacheEntry(Path(entry.path), st.st_size, st.st_mtime_ns))
    entries.sort(key=lambda e: (e.mtime_ns, e.path.name))
    return entries


def evict_lru(cache_dir: Path, max_bytes: int, keep: Path | None = None) -> list[Path]:
    """Remove cache entries, least recently used first, until they total at most `max_bytes`; `keep` stays."""
    return evict_entries(cache_entries(cache_dir), max_bytes, keep)


def evict_entries(entries: list[CacheEntry], max_bytes: int, keep: Path | None = None) -> list[Path]:
    """Remove `entries` in order until the rest total at most `max_bytes`, never `keep`. Returns what went.

    `entries` may be stale, as when another job evicts at the same time: a file already gone counts as removed.
    """
    total = sum(e.size for e in entries)
    removed: list[Path] = []
    for entry in entries:
        if total <= max_bytes:
            break
        if keep is not None and entry.path.name == keep.name:
            continue
        _unlink_quietly(entry.path)
        total -= entry.size
        removed.append(entry.path)
    if removed:
        log.info("compile cache: evicted %d libraries, %d bytes left (bound %d)", len(removed), total, max_bytes)
    return removed


def _unlink_quietly(path: Path) -> None:
    try:
        path.unlink()
    except FileNotFoundError:
        pass


def compile_cuda(source: str, build_dir: Path, arch: str, cache_dir: Path | None = None) -> CompiledLibrary:
    """Build `source` into a shared library in `build_dir`; reuse a cached or prebuilt build of identical inputs.

    Raises CompileError with nvcc's output (paths made relative) when the build fails or takes too long.
    """
    build_dir.mkdir(parents=True, exist_ok=True)
    key = cache_key(source, arch)
    target = build_dir / f"solution_{key}.so"
    for directory in (d for d in (_prebuilt_dir, cache_dir) if d is not None):
        cached = cached_library(directory, key, touch=directory is not _prebuilt_dir)
        if cached is not None:
            try:
                shutil.copyfile(cached, target)
            except FileNotFoundError:
                continue  # evicted since the lookup: build it
            return CompiledLibrary(target, 0.0, True, "")
    src = build_dir / SOURCE_NAME
    src.write_text(source, encoding="utf-8")
    cmd = nvcc_command(arch, SOURCE_NAME, target.name, source)
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
