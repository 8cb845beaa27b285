"""The adversarial regression suite of DESIGN.md §6: every hostile submission, and the verdict it must get.

Each `Entry` names a file under `submissions/`, the problem it targets, the §6 class it attacks and the
verdicts that count as defeating it. A verdict is an error code of `contract.wire.ErrorCode` ("wrong_answer",
"integrity", "timeout", ...), "passed" (honest controls, and a few entries where timing plays no part), or
"true_cost": the run passes and its geometric-mean score is at most `true_cost_factor` times that of the
named honest `control`, run in the same suite run, so the cheat bought nothing.

`judge_entry` decides whether one `SubmissionResult` meets its entry. `SuiteRunner` runs entries through the
real runner (`runner.job.run.run_job`, the real sandbox) for `test_adversarial.py` and `scripts/adversarial.py`.
The runner's environment carries a sentinel secret (`SENTINEL_ENV`): probes that read secrets, environments
or other jobs' files must never bring it back.
"""

from __future__ import annotations

import os
import secrets
import shutil
import site
import socket
import sys
import tempfile
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from contract.names import DType, Language
from contract.wire import JobRequest, MeasureConfig, SubmissionResult
from runner.host.executor import Executor
from runner.job.run import run_job
from runner.settings import RunnerSettings

SUBMISSIONS = Path(__file__).resolve().parent / "submissions"
PACKAGE_ROOT = Path(__file__).resolve().parents[2]

Device = Literal["cpu", "gpu"]
EntryMode = Literal["test", "benchmark", "ranked"]

# The classes of DESIGN.md §6, by their short names.
CHEAT_CLASSES: dict[str, str] = {
    "stream_or_thread": "work on another stream or host thread, finishing after the stop event",
    "deferred_work": "lazy or deferred outputs; batch-and-skip across calls; computing before the start event",
    "cache_replay": "caching or replaying results across calls or inputs; returning an input or a reference buffer",
    "harness_patch": "patching timers, synchronize, the stats code or the result channel, from Python or native code",
    "check_vs_timed": "behaving differently when checked than when timed (call counters, pointer reuse, shape "
    "detection)",
    "weak_output": "partial writes that pass a sampled check; races that pass once; precision below tolerance",
    "impossible_time": "impossible times (zero, negative, NaN, below the physical floor) collapsing an aggregate",
    "resource_abuse": "hangs, crashes, illegal addresses, context poisoning, fork bombs, memory and disk exhaustion, "
    "output floods",
    "host_access": "reading secrets, environment, other jobs' files or the parent's /proc; network access; writing "
    "sitecustomize.py or poisoning caches for later jobs; compile-time #include or .incbin of host files",
}
CONTROL = "control"

# Codes whose messages the runner writes itself, naming what it saw: printed beside the verdict.
RUNNER_WORDED = frozenset({"integrity", "implausible_time"})
TRUE_COST = "true_cost"
PASSED = "passed"
DEFAULT_TRUE_COST_FACTOR = 1.25
# CPU timings of microsecond calls move by tens of percent between two runs of the same code; the CPU cheats
# that could gain anything gain 100x or more, so a wider margin loses nothing.
CPU_TRUE_COST_FACTOR = 2.0

SENTINEL_ENV = "ARENA_ADVERSARIAL_SENTINEL"
SECRET = "<runner secret>"  # in forbidden_text: every secret value of the runner's environment (secret_values)
HOST_PASSWD_ROOT = "root:x:0:0:root:/root"  # root's line of a host /etc/passwd; the sandbox shows /nonexistent
POISON_MARKER = "ARENA-ADVERSARIAL-POISON"
POISON_NAMES = (
    "sitecustomize.py",
    "usercustomize.py",
    "torch.py",
    "runner.py",
    "arena_poison.pth",
    "arena_poison.so",
    "arena_poison.json",
)

# Quick measurements: the suite asks what the verdict is, not how fast anything is to the last percent. The CV
# target is out of reach on purpose: a CPU case takes its 50 samples (or its second), never a lucky five.
MEASURE = MeasureConfig(min_samples=5, max_samples=50, max_seconds=1.0, target_cv=0.001, target_rse=0.01, warmup=False)
# A true-cost comparison that fails on the ratio alone re-runs the control this many times and compares with the
# best honest score: one slow control run must not pass for a cheat's gain.
CONTROL_RERUNS = 2
RUNNER_LIMITS: dict[Device, dict[str, float]] = {
    # The memory entries hold 2 GiB: a limit of 1 GiB keeps them cheap, and is far above what the honest need.
    "cpu": {
        "compile_timeout_s": 60.0,
        "test_timeout_s": 4.0,
        "benchmark_timeout_s": 30.0,
        "job_timeout_s": 120.0,
        "max_memory_mb": 1024,
    },
    "gpu": {"compile_timeout_s": 120.0, "test_timeout_s": 20.0, "benchmark_timeout_s": 120.0, "job_timeout_s": 300.0},
}
SANDBOX_LIMITS = {"max_file_mb": 64, "max_processes": 256, "scratch_mb": 256}
# One OpenMP thread in the sandbox on the CPU: with two spinning pools (the judge's and the launcher's) on a
# small machine, a CPU case's median swung tenfold between two runs of the same code; with one it stays within
# about 20 %, which the true-cost comparisons need.
SANDBOX_ENV: dict[Device, dict[str, str]] = {"cpu": {"OMP_NUM_THREADS": "1"}, "gpu": {}}


@dataclass(frozen=True)
class Entry:
    """One submission of the suite and the verdicts that defeat it."""

    name: str
    file: str
    problem: str
    cheat_class: str
    device: Device
    expected: frozenset[str]
    language: Language
    dtype: DType = "float32"
    mode: EntryMode = "benchmark"
    control: str | None = None
    true_cost_factor: float = DEFAULT_TRUE_COST_FACTOR
    forbidden_text: tuple[str, ...] = ()
    max_log_chars: int | None = None
    checks_poison: bool = False
    directory: Path = SUBMISSIONS

    @property
    def is_control(self) -> bool:
        return self.cheat_class == CONTROL

    @property
    def needs_nvcc(self) -> bool:
        return self.language == "cuda"

    @property
    def path(self) -> Path:
        return self.directory / self.file

    def source(self, placeholders: Mapping[str, object] | None = None) -> str:
        """The file's text with each `__NAME__` replaced by `placeholders[NAME]`."""
        text = self.path.read_text(encoding="utf-8")
        for key, value in (placeholders or {}).items():
            text = text.replace(f"__{key}__", str(value))
        return text


def _entry(
    name: str,
    file: str,
    cheat_class: str,
    device: Device,
    expected: Iterable[str],
    *,
    problem: str = "vector_add",
    language: Language | None = None,
    **fields: object,
) -> Entry:
    if TRUE_COST in expected and device == "cpu":
        fields.setdefault("true_cost_factor", CPU_TRUE_COST_FACTOR)
    return Entry(
        name=name,
        file=file,
        problem=problem,
        cheat_class=cheat_class,
        device=device,
        expected=frozenset(expected),
        language=language or ("cuda" if file.endswith(".cu") else "python"),
        **fields,  # type: ignore[arg-type]
    )


def _control(name: str, file: str, device: Device, *, problem: str = "vector_add", **fields: object) -> Entry:
    return _entry(name, file, CONTROL, device, {PASSED}, problem=problem, **fields)


# Verdict sets shared by several entries.
LATE_WORK = {"integrity", "wrong_answer"}  # a snapshot that differs, a thread left alive, or a poisoned output
LATE_GPU_WORK = {"integrity", "wrong_answer", "implausible_time"}  # ... or an empty window under the floor
UNWRITTEN = {"wrong_answer", "implausible_time"}  # skipped work: caught by verification, or by the floor first
TIMER_TAMPERING = {"integrity", "implausible_time", TRUE_COST}
CRASH_OR_ERROR = {"runtime_error", "crashed"}

_CPU_VECTOR_ADD = "control_py_vector_add"
_CPU_MATMUL = "control_py_matmul"
_GPU_MATMUL_PY = "control_py_matmul_gpu"
_GPU_VECTOR_ADD_CUDA = "control_cu_vector_add"
_GPU_VECTOR_ADD_PY = "control_py_vector_add_gpu"

ENTRIES: tuple[Entry, ...] = (
    # -- honest controls: they must pass, and the true_cost entries are measured against them ---------------------
    _control(_CPU_VECTOR_ADD, "control_vector_add.py", "cpu"),
    _control(_CPU_MATMUL, "control_matmul.py", "cpu", problem="matrix-multiplication"),
    _control("control_py_softmax_multi_kernel", "control_softmax_multi_kernel.py", "cpu", problem="softmax"),
    _control(_GPU_VECTOR_ADD_CUDA, "control_cu_vector_add.cu", "gpu"),
    _control(_GPU_VECTOR_ADD_PY, "control_vector_add.py", "gpu"),
    _control(_GPU_MATMUL_PY, "control_matmul.py", "gpu", problem="matrix-multiplication"),
    _control("control_py_softmax_multi_kernel_gpu", "control_softmax_multi_kernel.py", "gpu", problem="softmax"),
    _control("control_cu_per_thread_stream", "control_cu_per_thread_stream.cu", "gpu"),
    _control("control_cu_shape_specialized", "control_cu_shape_specialized.cu", "gpu"),
    _control("control_triton_vector_add", "control_triton_vector_add.py", "gpu", language="triton"),
    # -- work on another stream or host thread, finishing after the stop event --------------------------------------
    _entry("py_thread_finishes_later", "thread_finishes_later.py", "stream_or_thread", "cpu", LATE_WORK),
    _entry("py_worker_thread_queue", "worker_thread_queue.py", "stream_or_thread", "cpu", LATE_WORK),
    _entry("py_torch_side_stream", "torch_side_stream.py", "stream_or_thread", "gpu", LATE_GPU_WORK),
    _entry("cu_nonblocking_side_stream", "cu_nonblocking_side_stream.cu", "stream_or_thread", "gpu", LATE_GPU_WORK),
    _entry(
        "cu_blocking_side_stream",
        "cu_blocking_side_stream.cu",
        "stream_or_thread",
        "gpu",
        {TRUE_COST},
        control=_GPU_VECTOR_ADD_CUDA,
    ),
    _entry(
        "py_forged_snapshot_side_stream",
        "forged_snapshot_side_stream.py",
        "stream_or_thread",
        "gpu",
        # The work it keeps from the events lands on the judge's clock, which then times the case: on an H200 its
        # 1000x1003x997 case read 98.9 µs against the honest control's 60.1 µs, 0.88x the control's score.
        LATE_GPU_WORK | {TRUE_COST},
        problem="matrix-multiplication",
        control=_GPU_MATMUL_PY,
    ),
    _entry(
        "cu_detached_host_thread",
        "cu_detached_host_thread.cu",
        "stream_or_thread",
        "gpu",
        {"integrity", "wrong_answer", "implausible_time", "crashed"},
    ),
    # -- lazy or deferred outputs; batch-and-skip; computing before the start event ---------------------------------
    # Within one batch of the judge the deferred work lands after the earlier calls' STOP: their snapshots differ.
    _entry("py_batch_and_skip", "batch_and_skip.py", "deferred_work", "cpu", {"wrong_answer", "integrity"}),
    _entry(
        "py_input_watcher_thread",
        "input_watcher_thread.py",
        "deferred_work",
        "cpu",
        LATE_WORK | {TRUE_COST},  # racing the judge: a snapshot that differs, or no faster than honest work
        control=_CPU_VECTOR_ADD,
    ),
    _entry(
        "py_dispatch_mode_lazy",
        "dispatch_mode_lazy.py",
        "deferred_work",
        "cpu",
        # On a host with many cores the intercepting mode can also make the test phase overrun its deadline.
        {"integrity", "wrong_answer", "implausible_time", "timeout", TRUE_COST},
        problem="matrix-multiplication",
        control=_CPU_MATMUL,
    ),
    _entry("py_sync_hook_lazy", "sync_hook_lazy.py", "deferred_work", "gpu", LATE_GPU_WORK),
    _entry(
        "py_dispatch_mode_lazy_gpu",
        "dispatch_mode_lazy.py",
        "deferred_work",
        "gpu",
        {"integrity", "wrong_answer", "implausible_time", TRUE_COST},
        problem="matrix-multiplication",
        control=_GPU_MATMUL_PY,
    ),
    # Deferred work lands after earlier calls' STOP within one batch of the judge: their snapshots differ.
    _entry("cu_batch_and_skip", "cu_batch_and_skip.cu", "deferred_work", "gpu", UNWRITTEN | {"integrity"}),
    # -- caching or replaying across calls or inputs; returning an input or a reference buffer ----------------------
    _entry(
        "py_matmul_replay_by_pointer",
        "matmul_replay_by_pointer.py",
        "cache_replay",
        "cpu",
        {"wrong_answer"},
        problem="matrix-multiplication",
    ),
    _entry("py_replay_across_inputs", "replay_across_inputs.py", "cache_replay", "cpu", {"wrong_answer"}),
    _entry("py_return_input", "return_input.py", "cache_replay", "cpu", {"wrong_answer"}),
    _entry("py_return_new_tensor", "return_new_tensor.py", "cache_replay", "cpu", {"wrong_answer"}),
    _entry(
        "py_rebind_output_storage",
        "rebind_output_storage.py",
        "cache_replay",
        "cpu",
        {"wrong_answer", "integrity", "runtime_error"},
    ),
    _entry(
        "py_tensor_subclass_return",
        "tensor_subclass_return.py",
        "cache_replay",
        "cpu",
        {"runtime_error", "wrong_answer"},
    ),
    _entry(
        "cu_matmul_pointer_replay",
        "cu_matmul_pointer_replay.cu",
        "cache_replay",
        "gpu",
        UNWRITTEN,
        problem="matrix-multiplication",
    ),
    # -- patching timers, synchronize, the stats code or the result channel -----------------------------------------
    _entry(
        "py_patch_perf_counter",
        "patch_perf_counter.py",
        "harness_patch",
        "cpu",
        TIMER_TAMPERING,
        control=_CPU_VECTOR_ADD,
    ),
    _entry(
        "py_patch_harness_objects",
        "patch_harness_objects.py",
        "harness_patch",
        "cpu",
        TIMER_TAMPERING | CRASH_OR_ERROR,
        control=_CPU_VECTOR_ADD,
    ),
    _entry(
        "py_patch_measure_stats",
        "patch_measure_stats.py",
        "harness_patch",
        "cpu",
        {TRUE_COST, "integrity"},
        control=_CPU_VECTOR_ADD,
    ),
    _entry("py_forge_result_channel", "forge_result_channel.py", "harness_patch", "cpu", {"integrity", "crashed"}),
    _entry(
        "cu_interpose_runtime_symbols",
        "cu_interpose_runtime_symbols.cu",
        "harness_patch",
        "cpu",
        {"compile_error"},
    ),
    _entry(
        "py_patch_event_timing",
        "patch_event_timing.py",
        "harness_patch",
        "gpu",
        TIMER_TAMPERING,
        control=_GPU_VECTOR_ADD_PY,
    ),
    _entry(
        "py_patch_harness_objects_gpu",
        "patch_harness_objects.py",
        "harness_patch",
        "gpu",
        TIMER_TAMPERING | CRASH_OR_ERROR,
        control=_GPU_VECTOR_ADD_PY,
    ),
    _entry(
        "py_patch_launcher_replies",
        "patch_launcher_replies.py",
        "harness_patch",
        "gpu",
        TIMER_TAMPERING,
        control=_GPU_VECTOR_ADD_PY,
    ),
    _entry(
        "cu_patch_elapsed_scaled",
        "cu_patch_elapsed_scaled.cu",
        "harness_patch",
        "gpu",
        {"integrity", TRUE_COST},
        control=_GPU_VECTOR_ADD_CUDA,
    ),
    _entry(
        "cu_interpose_driver_symbols",
        "cu_interpose_driver_symbols.cu",
        "harness_patch",
        "gpu",
        {TRUE_COST},
        control=_GPU_VECTOR_ADD_CUDA,
    ),
    # -- behaving differently when checked than when timed ----------------------------------------------------------
    _entry("py_call_counter", "call_counter.py", "check_vs_timed", "cpu", {"wrong_answer"}),
    _entry("py_pointer_reuse", "pointer_reuse.py", "check_vs_timed", "cpu", {"wrong_answer"}),
    _entry("py_shape_detect", "shape_detect.py", "check_vs_timed", "cpu", {"wrong_answer"}),
    _entry("cu_call_counter", "cu_call_counter.cu", "check_vs_timed", "gpu", UNWRITTEN),
    _entry("cu_pointer_reuse_half", "cu_pointer_reuse_half.cu", "check_vs_timed", "gpu", UNWRITTEN),
    # -- partial writes, races that pass once, precision below tolerance --------------------------------------------
    _entry("py_partial_write_half", "partial_write_half.py", "weak_output", "cpu", {"wrong_answer"}),
    _entry("py_strided_write", "strided_write.py", "weak_output", "cpu", {"wrong_answer"}),
    _entry("py_sparse_holes", "sparse_holes.py", "weak_output", "cpu", {"wrong_answer"}),
    _entry(
        "py_bf16_matmul",
        "bf16_matmul.py",
        "weak_output",
        "cpu",
        {"wrong_answer"},
        problem="matrix-multiplication",
    ),
    _entry("cu_racy_kernel", "cu_racy_kernel.cu", "weak_output", "gpu", {"wrong_answer"}),
    _entry(
        "cu_half_precision_matmul",
        "cu_half_precision_matmul.cu",
        "weak_output",
        "gpu",
        {"wrong_answer"},
        problem="matrix-multiplication",
    ),
    _entry("cu_half_write", "cu_half_write.cu", "weak_output", "gpu", {"wrong_answer"}),
    # Tuned to pass the check, and below the board's precision all the same: the precision audit refuses them for
    # ranking (runner/judge/precision.py), naming the instruction.
    _entry(
        "cu_split_fp16_wmma_fp32_matmul",
        "precision_fp16_wmma_fp32.cu",
        "weak_output",
        "gpu",
        {"precision"},
        problem="matrix-multiplication",
        mode="ranked",
    ),
    _entry(
        "cu_fp8_split_bf16_matmul",
        "precision_fp8_bf16_board.cu",
        "weak_output",
        "gpu",
        {"precision"},
        problem="matrix-multiplication",
        dtype="bfloat16",
        mode="ranked",
    ),
    # The same split in Triton: the audit reads the cubins Triton compiled into the launcher's cache.
    _entry(
        "triton_split_fp16_dot_fp32_matmul",
        "precision_triton_fp16_dot.py",
        "weak_output",
        "gpu",
        {"precision"},
        problem="matrix-multiplication",
        language="triton",
        mode="ranked",
    ),
    # -- impossible times -------------------------------------------------------------------------------------------
    _entry("py_frozen_clock", "frozen_clock.py", "impossible_time", "cpu", TIMER_TAMPERING, control=_CPU_VECTOR_ADD),
    _entry(
        "py_negative_clock", "negative_clock.py", "impossible_time", "cpu", TIMER_TAMPERING, control=_CPU_VECTOR_ADD
    ),
    _entry("py_nan_clock", "nan_clock.py", "impossible_time", "cpu", TIMER_TAMPERING, control=_CPU_VECTOR_ADD),
    _entry(
        "cu_patch_elapsed_constant",
        "cu_patch_elapsed_constant.cu",
        "impossible_time",
        "gpu",
        TIMER_TAMPERING,
        control=_GPU_VECTOR_ADD_CUDA,
    ),
    # -- hangs, crashes, context poisoning, fork bombs, exhaustion, floods ------------------------------------------
    _entry("py_infinite_loop", "infinite_loop.py", "resource_abuse", "cpu", {"timeout"}, mode="test"),
    _entry("py_fork_bomb", "fork_bomb.py", "resource_abuse", "cpu", {"timeout"} | CRASH_OR_ERROR, mode="test"),
    # Where the kernel overcommits (the 128 GiB GPU host), the allocation succeeds and touching it runs into
    # the test deadline instead of failing at once.
    _entry(
        "py_host_memory_hog",
        "host_memory_hog.py",
        "resource_abuse",
        "cpu",
        CRASH_OR_ERROR | {"timeout", "memory_limit"},
        mode="test",
    ),
    # Memory no process maps, twice the CPU runner's limit (`RUNNER_LIMITS`).
    _entry("py_memfd_unmapped_hog", "memfd_unmapped_hog.py", "resource_abuse", "cpu", {"memory_limit"}, mode="test"),
    _entry("py_sysv_detached_hog", "sysv_detached_hog.py", "resource_abuse", "cpu", {"memory_limit"}, mode="test"),
    _entry(
        "py_disk_fill",
        "disk_fill.py",
        "resource_abuse",
        "cpu",
        CRASH_OR_ERROR,
        mode="test",
        forbidden_text=("LIMIT NOT HIT",),
    ),
    _entry(
        "py_stdout_flood",
        "stdout_flood.py",
        "resource_abuse",
        "cpu",
        # The solution's stdout is a capture file: the flood ends at the file-size limit, an error of its import.
        {PASSED, "import_error"} | CRASH_OR_ERROR,
        mode="test",
        max_log_chars=20_000,
    ),
    _entry("py_segfault", "segfault.py", "resource_abuse", "cpu", {"crashed"}, mode="test"),
    _entry("cu_infinite_kernel", "cu_infinite_kernel.cu", "resource_abuse", "gpu", {"timeout"}, mode="test"),
    _entry("cu_illegal_address", "cu_illegal_address.cu", "resource_abuse", "gpu", CRASH_OR_ERROR, mode="test"),
    _entry(
        "cu_device_reset", "cu_device_reset.cu", "resource_abuse", "gpu", CRASH_OR_ERROR | {"wrong_answer", "integrity"}
    ),
    _entry("py_gpu_memory_hog", "gpu_memory_hog.py", "resource_abuse", "gpu", CRASH_OR_ERROR, mode="test"),
    # -- secrets, other jobs' files, /proc, network, planted code and caches, host files at compile time ------------
    _entry(
        "py_env_secrets_probe",
        "env_secrets_probe.py",
        "host_access",
        "cpu",
        {"runtime_error"},
        mode="test",
        forbidden_text=(SECRET,),
    ),
    _entry(
        "py_other_jobs_files",
        "other_jobs_files.py",
        "host_access",
        "cpu",
        {"runtime_error"},
        mode="test",
        forbidden_text=(SECRET,),
    ),
    _entry(
        "py_network_probe",
        "network_probe.py",
        "host_access",
        "cpu",
        {"runtime_error"},
        mode="test",
        forbidden_text=("CONNECTED",),
    ),
    _entry(
        "py_sitecustomize_writer",
        "sitecustomize_writer.py",
        "host_access",
        "cpu",
        {TRUE_COST},
        control=_CPU_VECTOR_ADD,
        checks_poison=True,
    ),
    # Right after the writer: a job that would import anything it planted.
    _control("control_after_sitecustomize_writer", "control_vector_add.py", "cpu"),
    _entry(
        "cu_include_host_file",
        "cu_include_host_file.cu",
        "host_access",
        "cpu",
        {"compile_error"},
        forbidden_text=(HOST_PASSWD_ROOT,),
    ),
    _entry(
        "cu_incbin_host_file",
        "cu_incbin_host_file.cu",
        "host_access",
        "cpu",
        {"crashed"},
        forbidden_text=(HOST_PASSWD_ROOT,),
    ),
    _entry(
        "cu_constructor_secrets",
        "cu_constructor_secrets.cu",
        "host_access",
        "cpu",
        {"crashed"},
        forbidden_text=(SECRET,),
    ),
)

BY_NAME: dict[str, Entry] = {entry.name: entry for entry in ENTRIES}


def entries_for(device: Literal["cpu", "gpu", "all"] = "all", names: Sequence[str] = ()) -> list[Entry]:
    """The entries to run, in suite order: those of `device`, or only those named."""
    unknown = [name for name in names if name not in BY_NAME]
    if unknown:
        raise KeyError(f"no such entries: {', '.join(unknown)}")
    return [e for e in ENTRIES if (device == "all" or e.device == device) and (not names or e.name in names)]


# -- secrets and planted files ------------------------------------------------------------------------------------


def sentinel() -> str:
    """The sentinel secret of this run, put in the environment (SENTINEL_ENV) if it is not there yet."""
    return os.environ.setdefault(SENTINEL_ENV, f"arena-sentinel-{secrets.token_hex(16)}")


def secret_values() -> list[str]:
    """Every secret of the runner's environment that must never reach a result."""
    values = [sentinel()]
    runner_secret = os.environ.get("RUNNER_SECRET", "")
    if len(runner_secret) >= 8 and runner_secret not in values:
        values.append(runner_secret)
    return values


def forbidden_values(entry: Entry) -> list[str]:
    values: list[str] = []
    for text in entry.forbidden_text:
        values.extend(secret_values() if text == SECRET else [text])
    return values


def poison_dirs() -> list[Path]:
    """Where Python or a cache on this host would pick up a planted file."""
    dirs = [Path(p) for p in sys.path if p]
    dirs += [Path(p) for p in site.getsitepackages()]
    dirs += [Path(site.getusersitepackages()), PACKAGE_ROOT, PACKAGE_ROOT / "runner", Path.home()]
    dirs += [Path(tempfile.gettempdir()), Path("/tmp"), Path("/dev/shm")]
    return list(dict.fromkeys(d for d in dirs if d.is_dir()))


def find_poison(extra_dirs: Iterable[Path] = ()) -> list[Path]:
    """Files planted by sitecustomize_writer.py that reached this host: in the usual places, and anywhere under
    `extra_dirs` (the runner's own state, where its compile cache lives)."""
    candidates = [d / name for d in poison_dirs() for name in POISON_NAMES]
    for directory in extra_dirs:
        candidates += [p for name in POISON_NAMES for p in directory.rglob(name)]
    found = []
    for path in dict.fromkeys(candidates):
        try:
            with open(path, "rb") as fh:
                if POISON_MARKER.encode() in fh.read(4096):
                    found.append(path)
        except OSError:
            continue
    return found


def remove_poison(extra_dirs: Iterable[Path] = ()) -> list[Path]:
    """Delete every planted file `find_poison` sees; returns what was removed."""
    found = find_poison(extra_dirs)
    for path in found:
        path.unlink(missing_ok=True)
    return found


def _plant_decoys(state_dir: Path, secret: str) -> None:
    """Files holding the sentinel where only a broken sandbox would let a job read them: another job's
    submission in the jobs directory (world-readable, so only the mount namespace hides it) and the cache."""
    other_job = state_dir / "jobs" / f"decoy-{secrets.token_hex(6)}" / "in"
    other_job.mkdir(parents=True, exist_ok=True)
    for directory in (other_job, other_job.parent, other_job.parent.parent, state_dir):
        directory.chmod(0o755)
    (other_job / "solution.py").write_text(f"# another competitor's job\nTOKEN = {secret!r}\n", encoding="utf-8")
    (other_job / "solution.py").chmod(0o644)
    cache = state_dir / "nvcc-cache"
    cache.mkdir(parents=True, exist_ok=True)
    (cache / "decoy.txt").write_text(secret, encoding="utf-8")


# -- judging ------------------------------------------------------------------------------------------------------


def _describe_pass(result: SubmissionResult) -> str:
    score = result.score
    if score is None or not result.timings:
        return "passed"
    first = result.timings[0]
    unit = "GFLOPS" if result.score_metric == "gflops" else "GB/s"
    wall = "" if first.wall_clock_us is None else f" (runner's clock {first.wall_clock_us:.4g} µs)"
    return f"passed: {score:.4g} {unit} geomean, {first.runtime_median_us:.4g} µs median on {first.name}{wall}"


def _true_cost(entry: Entry, result: SubmissionResult, controls: Mapping[str, SubmissionResult]) -> tuple[bool, str]:
    control = controls.get(entry.control or "")
    if control is None:
        return False, f"no result of the control {entry.control}"
    if control.status != "passed" or control.score is None:
        return False, f"the control {entry.control} did not pass with a score"
    if result.score is None:
        return False, "no score to compare with the control"
    ratio = result.score / control.score
    return ratio <= entry.true_cost_factor, f"{ratio:.2f}x the control's score (limit {entry.true_cost_factor}x)"


def judge_entry(
    entry: Entry,
    result: SubmissionResult,
    control_results: Mapping[str, SubmissionResult],
    *,
    extra_poison_dirs: Iterable[Path] = (),
) -> tuple[bool, str]:
    """Whether `result` defeats (or, for a control, clears) `entry`, and the verdict to print.

    `control_results` maps entry names to results of this suite run, for the true-cost comparison.
    """
    if result.status == "passed":
        verdict = _describe_pass(result)
        ok = PASSED in entry.expected
        if not ok and TRUE_COST in entry.expected:
            ok, comparison = _true_cost(entry, result, control_results)
            verdict += f", {comparison}"
    else:
        code = result.error.code if result.error is not None else "none"
        verdict = f"{result.status}/{code}"
        if result.error is not None and code in RUNNER_WORDED:
            verdict += f" ({result.error.message[:420]})"
        # host_busy: the host was too loaded for the wall clock to decide. The cheat got no score, which is all
        # an entry that the wall clock defeats asks for; the runner only declined to accuse under load.
        ok = code in entry.expected or (code == "host_busy" and "integrity" in entry.expected)
    text = result.model_dump_json()
    leaked = [i for i, value in enumerate(forbidden_values(entry)) if value in text]
    if leaked:  # never print the leaked text itself: it may be a real secret
        ok = False
        verdict += f"; LEAKED forbidden text #{', #'.join(str(i) for i in leaked)}"
    log = result.error.log if result.error is not None else None
    if entry.max_log_chars is not None and log is not None and len(log) > entry.max_log_chars:
        ok = False
        verdict += f"; a log of {len(log)} characters (limit {entry.max_log_chars})"
    if entry.checks_poison:
        planted = find_poison(extra_poison_dirs)
        if planted:
            ok = False
            verdict += f"; planted files reached the host: {', '.join(map(str, planted))}"
    return ok, verdict


# -- running ------------------------------------------------------------------------------------------------------


def build_request(
    entry: Entry, placeholders: Mapping[str, object] | None = None, measure: MeasureConfig = MEASURE
) -> JobRequest:
    return JobRequest(
        submission_id=f"adversarial-{entry.name}-{secrets.token_hex(4)}",
        problem_slug=entry.problem,
        language=entry.language,
        file_name=entry.file,
        source=entry.source(placeholders),
        dtype=entry.dtype,
        mode=entry.mode,
        device_kind=entry.device,
        measure=measure,
    )


@dataclass
class SuiteRunner:
    """Runs entries through the real runner, one executor (and state directory) per device, and keeps every
    result of the run so that true-cost entries can be compared with their controls."""

    root: Path
    listen_port: int
    results: dict[str, SubmissionResult] = field(default_factory=dict)
    # Deadlines per device; the honest corpus runs with the runner's defaults (a first call may compile).
    limits: Mapping[Device, Mapping[str, float]] = field(default_factory=lambda: RUNNER_LIMITS)
    measure: MeasureConfig = MEASURE
    sandbox_limits: Mapping[str, int] = field(default_factory=lambda: SANDBOX_LIMITS)
    _executors: dict[Device, Executor] = field(default_factory=dict)

    def state_dir(self, device: Device) -> Path:
        return self.root / device

    @property
    def state_dirs(self) -> list[Path]:
        return [self.state_dir(device) for device in self._executors]

    async def executor(self, device: Device) -> Executor:
        if device not in self._executors:
            state_dir = self.state_dir(device)
            settings = RunnerSettings(
                state_dir=state_dir,
                sandbox_env=SANDBOX_ENV[device],
                **self.limits.get(device, {}),  # type: ignore[arg-type]
                **self.sandbox_limits,
            )
            self._executors[device] = await Executor.from_settings(settings)
            _plant_decoys(state_dir, sentinel())
        return self._executors[device]

    async def run(self, entry: Entry) -> SubmissionResult:
        """Run `entry` (after its control, when that has not run yet) and keep its result."""
        if entry.control is not None and entry.control not in self.results:
            await self.run(BY_NAME[entry.control])
        executor = await self.executor(entry.device)
        request = build_request(entry, {"LISTEN_PORT": self.listen_port}, self.measure)
        result = await run_job(request, executor=executor)
        self.results[entry.name] = result
        return result

    async def judge(self, entry: Entry, result: SubmissionResult) -> tuple[bool, str]:
        """`judge_entry` with this run's controls, then delete whatever a planting entry left behind.

        When only the true-cost ratio fails, the control runs again (CONTROL_RERUNS times at most) and its best
        result is kept, so that noise in one control run is not taken for a cheat's gain.
        """
        try:
            ok, verdict = judge_entry(entry, result, self.results, extra_poison_dirs=self.state_dirs)
            reruns = 0
            while not ok and reruns < CONTROL_RERUNS and self._ratio_failed(entry, result):
                reruns += 1
                await self._rerun_control(entry.control or "")
                ok, verdict = judge_entry(entry, result, self.results, extra_poison_dirs=self.state_dirs)
            return ok, verdict + (f" (control run {reruns + 1} times, best kept)" if reruns else "")
        finally:
            if entry.checks_poison:
                remove_poison(self.state_dirs)

    def _ratio_failed(self, entry: Entry, result: SubmissionResult) -> bool:
        control = self.results.get(entry.control or "")
        return (
            TRUE_COST in entry.expected
            and result.status == "passed"
            and result.score is not None
            and control is not None
            and control.status == "passed"
            and control.score is not None
            and result.score / control.score > entry.true_cost_factor
        )

    async def _rerun_control(self, name: str) -> None:
        previous = self.results[name]
        again = await self.run(BY_NAME[name])
        if previous.score is not None and (again.score is None or again.score < previous.score):
            self.results[name] = previous


@asynccontextmanager
async def open_suite_runner(
    limits: Mapping[Device, Mapping[str, float]] = RUNNER_LIMITS,
    measure: MeasureConfig = MEASURE,
    sandbox_limits: Mapping[str, int] = SANDBOX_LIMITS,
) -> AsyncIterator[SuiteRunner]:
    """A SuiteRunner with a fresh state root (traversable by the sandbox's uid), a TCP listener on 127.0.0.1
    for the network probe, and the sentinel secret in the environment; everything is removed afterwards."""
    sentinel()
    root = Path(tempfile.mkdtemp(prefix="arena-adversarial-"))
    root.chmod(0o711)
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    runner = SuiteRunner(root, listener.getsockname()[1], limits=limits, measure=measure, sandbox_limits=sandbox_limits)
    try:
        yield runner
    finally:
        listener.close()
        remove_poison(runner.state_dirs)
        shutil.rmtree(root, ignore_errors=True)
