"""The precision audit: the SASS reader against nvcc's real output (tests/fixtures/sass, tests/fixtures/ncu), each
problem's policy, the judge's verdict and notes, the daemon's sandboxed cuobjdump on a library nvcc builds and on
cubins laid out as in a Triton cache, and the gate's hand-off (`tested`, then `audited`) of a Python run."""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
import subprocess
import time
from pathlib import Path

import pytest

from contract.precision import OPERANDS, MatrixUse, SassAudit
from contract.wire import JobRequest
from problems.base import OPERANDS as PROBLEM_OPERANDS
from problems.registry import builtin_problems, get_problem
from runner.host import triton_cubins
from runner.host.compile import compile_cuda
from runner.host.executor import WarmWorker, default_executor
from runner.host.process import SandboxedProcess
from runner.host.sandbox import JobDir, SandboxLevel
from runner.host.sass_audit import cuobjdump_path, kernel_name, matrix_uses, operand_of
from runner.host.triton_cubins import CacheLocation
from runner.job.precision_audit import launcher_cache, write_audit, write_cubin_audit
from runner.judge import precision
from runner.judge.main import Gate, GateAudit, audits

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _uses(name: str) -> list[MatrixUse]:
    path = FIXTURES / "sass" / name if (FIXTURES / "sass" / name).is_file() else FIXTURES / "ncu" / name
    with path.open(encoding="utf-8") as lines:
        return matrix_uses(lines)


def test_each_matrix_type_is_read_off_its_instruction() -> None:
    found = {(u.kernel, u.instruction): u.operand for u in _uses("matrix_types_sm90a.sass")}
    assert found[("h16acc", "HMMA.16816.F16")] == "fp16"
    assert found[("bf16k", "HMMA.16816.F32.BF16")] == "bf16"
    assert found[("tf32k", "HMMA.1684.F32.TF32")] == "tf32"
    assert found[("i8k", "IMMA.16816.S8.S8")] == "int8"
    assert found[("f64k", "DMMA.8x8x4")] == "fp64"
    # Hopper runs mma.sync on FP8 as conversions into float16 and a float16 HMMA: both are seen.
    assert found[("fp8k", "F2FP.F16.E4M3.UNPACK_B")] == "fp8"
    assert found[("fp8k", "HMMA.16816.F32")] == "fp16"


def test_wgmma_and_fp8_conversions_are_read() -> None:
    found = {u.instruction: u.operand for u in _uses("wgmma_fp8_sm90a.sass")}
    assert found["QGMMA.64x8x32.F32.E4M3.E4M3"] == "fp8"
    assert found["HGMMA.64x8x16.F32.BF16"] == "bf16"
    assert found["F2FP.SATFINITE.E4M3.F32.PACK_AB_MERGE_C"] == "fp8"
    assert found["F2FP.SATFINITE.E5M2.F32.PACK_AB_MERGE_C"] == "fp8"


def test_plain_float32_kernels_hold_no_matrix_math() -> None:
    # The tiled kernel's HFMA2.MMA lines are register moves on the matrix pipe, not products.
    assert _uses("matmul_naive_sm90.sass") == []
    assert _uses("matmul_tiled_fp32_h100.sass") == []
    assert operand_of("HFMA2.MMA") is None
    assert [(u.instruction, u.count) for u in _uses("matmul_wmma_fp16_h100.sass")] == [("HMMA.16816.F32", 4)]


def test_predicated_instructions_count_and_names_are_demangled() -> None:
    lines = [
        "\t\tFunction : _ZN2ns6kernelEPf",
        "        /*0160*/              @!P0 HMMA.16816.F32.BF16 R4, R4, R16, RZ ;",
    ]
    assert matrix_uses(lines) == [
        MatrixUse(instruction="HMMA.16816.F32.BF16", operand="bf16", kernel="ns::kernel", count=1)
    ]
    assert kernel_name("_Z6matmulPKfS0_Pf") == "matmul"
    assert kernel_name("plain") == "plain"


def test_the_problems_name_the_contracts_operands() -> None:
    assert PROBLEM_OPERANDS == OPERANDS


def test_every_float_board_refuses_what_is_below_its_inputs() -> None:
    for problem in builtin_problems().values():
        for dtype in problem.dtypes:
            accepted = problem.accepted_operands(dtype)
            if accepted is None:
                continue
            assert "fp64" in accepted, (problem.slug, dtype)
            if (
                dtype == "float32"
                and "int8" not in accepted
                and "float16" not in {p.element_type(dtype) for p in problem.parameters if p.role == "input"}
            ):
                assert not accepted & {"fp16", "bf16", "fp8"}, (problem.slug, dtype, accepted)


def test_gemm_boards_admit_tf32_where_their_float32_check_does() -> None:
    matmul = get_problem("matrix-multiplication")
    assert matmul.accepted_operands("float32") == {"fp64", "tf32"}
    assert matmul.accepted_operands("float16") == {"fp64", "tf32", "fp16"}
    assert "bf16" in matmul.accepted_operands("bfloat16")
    assert "fp8" not in matmul.accepted_operands("bfloat16")
    assert get_problem("vector_add").accepted_operands("float32") == {"fp64"}
    assert get_problem("int8-gemm").accepted_operands("float32") is None  # integer inputs: the check is exact


def _audit(*pairs: tuple[str, str]) -> SassAudit:
    return SassAudit(
        available=True,
        uses=[MatrixUse(instruction=i, operand=o, kernel="k", count=2) for i, o in pairs],  # type: ignore[arg-type]
    )


def test_fp16_tensor_cores_on_the_float32_board_are_refused_naming_the_instruction() -> None:
    matmul = get_problem("matrix-multiplication")
    message = precision.refusal(matmul, "float32", _audit(("HMMA.16816.F32", "fp16")))
    assert message is not None
    assert "HMMA.16816.F32 (float16, in k)" in message and "float32 board" in message and "TF32" in message
    assert precision.refusal(matmul, "float16", _audit(("HMMA.16816.F32", "fp16"))) is None
    assert precision.refusal(matmul, "float32", _audit(("HMMA.1684.F32.TF32", "tf32"))) is None


def test_fp8_on_the_bfloat16_board_is_refused() -> None:
    matmul = get_problem("matrix-multiplication")
    audit = _audit(("F2FP.SATFINITE.E4M3.F32.PACK_AB_MERGE_C", "fp8"), ("HMMA.16816.F32", "fp16"))
    message = precision.refusal(matmul, "bfloat16", audit)
    assert message is not None and "FP8" in message and "HMMA" not in message


def test_an_unranked_run_is_told_what_a_ranked_one_would_meet() -> None:
    matmul = get_problem("matrix-multiplication")
    notes = precision.notes(matmul, "float32", _audit(("HMMA.16816.F32", "fp16")), ranked=False)
    assert notes[0].startswith("Matrix instructions in the compiled code: HMMA.16816.F32")
    assert "would be refused" in notes[1]
    assert len(precision.notes(matmul, "float32", _audit(("HMMA.16816.F32", "fp16")), ranked=True)) == 1
    assert precision.notes(matmul, "float16", SassAudit(available=True), ranked=False) == []


def test_an_audit_that_could_not_read_the_code_refuses_nothing() -> None:
    matmul = get_problem("matrix-multiplication")
    unread = SassAudit(available=False, reason="cuobjdump is not installed")
    assert precision.refusal(matmul, "float32", unread) is None
    assert precision.notes(matmul, "float32", unread, ranked=True) == [
        "The precision audit could not read the compiled code on this runner: cuobjdump is not installed."
    ]


needs_tools = pytest.mark.skipif(
    shutil.which("nvcc") is None or cuobjdump_path() is None, reason="needs nvcc and cuobjdump"
)


@needs_tools
@pytest.mark.nvcc
def test_the_daemon_reads_the_built_librarys_sass_in_the_sandbox(tmp_path: Path) -> None:
    built = compile_cuda((EXAMPLES / "matmul_wmma.cu").read_text(), tmp_path / "build", "sm_90a")

    async def audited() -> SassAudit:
        executor = await default_executor()
        job = await asyncio.to_thread(JobDir.create, tmp_path / "jobs", "audit", None)
        library = job.in_dir / "prebuilt" / "solution.so"
        library.parent.mkdir(parents=True)
        shutil.copyfile(built.path, library)
        target = tmp_path / "sass_audit.json"
        audit = await write_audit(executor, job, library, target)
        assert SassAudit.model_validate_json(target.read_text()) == audit
        return audit

    audit = asyncio.run(audited())
    assert audit.available, audit.reason
    assert [(u.instruction, u.operand, u.kernel) for u in audit.uses] == [("HMMA.16816.F32", "fp16", "matmul_wmma")]


# -- the cubins Triton compiles for a Python submission -----------------------------------------------------------

# Two kernels as Triton would leave them (extern "C": Triton's names are not mangled): float16 WMMA, and plain
# float32 arithmetic.
_FP16_KERNEL = """
#include <mma.h>
#include <cuda_fp16.h>
using namespace nvcuda;
extern "C" __global__ void matmul_fp16_dot(const __half* a, const __half* b, float* c) {
  wmma::fragment<wmma::matrix_a,16,16,16,__half,wmma::row_major> fa;
  wmma::fragment<wmma::matrix_b,16,16,16,__half,wmma::row_major> fb;
  wmma::fragment<wmma::accumulator,16,16,16,float> acc; wmma::fill_fragment(acc,0.f);
  wmma::load_matrix_sync(fa,a,16); wmma::load_matrix_sync(fb,b,16);
  wmma::mma_sync(acc,fa,fb,acc); wmma::store_matrix_sync(c,acc,16,wmma::mem_row_major);
}
"""
_PLAIN_KERNEL = 'extern "C" __global__ void add_kernel(const float* a, float* c) { c[threadIdx.x] += a[threadIdx.x]; }'


def _cubin(source: str, directory: Path, name: str) -> Path:
    nvcc = shutil.which("nvcc")
    assert nvcc is not None
    cu = directory / f"{name}.cu"
    cu.write_text(source)
    out = directory / f"{name}.cubin"
    subprocess.run([nvcc, "-cubin", "-arch=sm_90", "-o", str(out), str(cu)], check=True, capture_output=True)
    return out


def _launcher_job(tmp_path: Path) -> tuple[JobDir, Path]:
    job = JobDir.create(tmp_path / "jobs", "launcher", None)
    cache = job.scratch / "cache" / "triton"
    cache.mkdir(parents=True)
    return job, cache


def _put(cache: Path, key: str, name: str, data: bytes) -> Path:
    (cache / key).mkdir(parents=True, exist_ok=True)
    path = cache / key / name
    path.write_bytes(data)
    return path


def test_cubins_are_copied_out_of_the_cache_without_following_links(tmp_path: Path) -> None:
    job, cache = _launcher_job(tmp_path)
    _put(cache, "aa", "kernel.cubin", b"first")
    _put(cache, "aa", "kernel.json", b"{}")
    _put(cache, "bb", "other.cubin", b"second")
    outside = tmp_path / "host_file.cubin"
    outside.write_bytes(b"a file of the host")
    (cache / "cc").mkdir()
    (cache / "cc" / "linked.cubin").symlink_to(outside)  # a link out of the cache: never read
    os.link(outside, cache / "cc" / "hard.cubin")  # a second name of a host file: never read
    (cache / "dd").symlink_to(cache / "aa", target_is_directory=True)  # a linked folder: not entered
    dest = tmp_path / "dest"
    dest.mkdir()
    copied = triton_cubins.copy_cubins(CacheLocation.on_host(job.root), dest)
    assert copied is not None
    assert [f.read_bytes() for f in copied.files] == [b"first", b"second"]
    assert [f.name for f in copied.files] == ["triton-000.cubin", "triton-001.cubin"]
    assert copied.unread == 2


def test_the_cache_is_reached_through_a_process_root(tmp_path: Path) -> None:
    job, cache = _launcher_job(tmp_path)
    _put(cache, "aa", "kernel.cubin", b"cubin")
    dest = tmp_path / "dest"
    dest.mkdir()
    # What the daemon does for a launcher in the full sandbox, here with this process's own root.
    copied = triton_cubins.copy_cubins(CacheLocation.inside(os.getpid(), job.scratch), dest)
    assert copied is not None and [f.read_bytes() for f in copied.files] == [b"cubin"]
    # A process that shares the host's root is not inside a sandbox: its root says nothing of the job's tmpfs.
    assert triton_cubins.sandbox_location([os.getpid()], job.scratch) is None


def test_the_audit_reads_within_its_bounds_and_counts_the_rest(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(triton_cubins, "MAX_CUBINS", 2)
    monkeypatch.setattr(triton_cubins, "MAX_CUBIN_BYTES", 8)
    job, cache = _launcher_job(tmp_path)
    for key in ("a", "b", "c"):
        _put(cache, key, "k.cubin", b"small")
    _put(cache, "0", "big.cubin", b"more than eight bytes")
    dest = tmp_path / "dest"
    dest.mkdir()
    copied = triton_cubins.copy_cubins(CacheLocation.on_host(job.root), dest)
    assert copied is not None and len(copied.files) == 2 and copied.unread == 2


def test_no_triton_cache_means_no_audit_and_no_file(tmp_path: Path) -> None:
    job = JobDir.create(tmp_path / "jobs", "launcher", None)  # a pure-PyTorch run: Triton compiled nothing
    target = tmp_path / "sass_audit.json"

    async def audited() -> SassAudit | None:
        executor = await default_executor()
        return await write_cubin_audit(executor, job, CacheLocation.on_host(job.root), target)

    assert asyncio.run(audited()) is None
    assert not target.exists()


def test_a_cache_replaced_by_a_link_is_not_read_and_refuses_nothing(tmp_path: Path) -> None:
    job = JobDir.create(tmp_path / "jobs", "launcher", None)
    elsewhere = tmp_path / "elsewhere"
    _put(elsewhere, "aa", "kernel.cubin", b"cubin")
    (job.scratch / "cache").mkdir()
    (job.scratch / "cache" / "triton").symlink_to(elsewhere, target_is_directory=True)
    target = tmp_path / "sass_audit.json"

    async def audited() -> SassAudit | None:
        executor = await default_executor()
        return await write_cubin_audit(executor, job, CacheLocation.on_host(job.root), target)

    audit = asyncio.run(audited())
    assert audit is not None and not audit.available and "Triton cache" in (audit.reason or "")
    assert SassAudit.model_validate_json(target.read_text()) == audit
    assert precision.refusal(get_problem("matrix-multiplication"), "float32", audit) is None


@needs_tools
@pytest.mark.nvcc
def test_the_daemon_reads_the_triton_caches_cubins_in_the_sandbox(tmp_path: Path) -> None:
    build = tmp_path / "build"
    build.mkdir()
    job, cache = _launcher_job(tmp_path)
    _put(cache, "1f2e", "matmul_fp16_dot.cubin", _cubin(_FP16_KERNEL, build, "fp16").read_bytes())
    _put(cache, "1f2e", "matmul_fp16_dot.json", b"{}")
    _put(cache, "9c8d", "add_kernel.cubin", _cubin(_PLAIN_KERNEL, build, "plain").read_bytes())
    _put(cache, "7b6a", "broken.cubin", b"not a cubin")  # cuobjdump fails on it: unread, never an accusation
    target = tmp_path / "sass_audit.json"

    async def audited() -> SassAudit | None:
        executor = await default_executor()
        return await write_cubin_audit(executor, job, CacheLocation.on_host(job.root), target)

    audit = asyncio.run(audited())
    assert audit is not None and audit.available, audit
    assert SassAudit.model_validate_json(target.read_text()) == audit
    assert [(u.instruction, u.operand, u.kernel) for u in audit.uses] == [("HMMA.16816.F32", "fp16", "matmul_fp16_dot")]
    assert audit.unread == 1
    matmul = get_problem("matrix-multiplication")
    message = precision.refusal(matmul, "float32", audit)
    assert message is not None and "HMMA.16816.F32 (float16, in matmul_fp16_dot)" in message
    assert precision.refusal(matmul, "float16", audit) is None
    notes = precision.notes(matmul, "float16", audit, ranked=True)
    assert any("left 1 compiled file(s) unread" in note for note in notes)


# -- the gate's hand-off: `tested` from the judge, `audited` back -------------------------------------------------


def read_audit(gate: Gate, target: Path) -> SassAudit | None:
    """The judge's whole hand-off of a Python run: `tested`, then the wait for `audited`."""
    audit = GateAudit(gate, target, tested=True)
    audit.ask()
    return audit.read()


def _gate_pair() -> tuple[WarmWorker, Gate]:
    ours, judges = socket.socketpair()
    warm = WarmWorker(processes=None, go_fd=ours.detach(), slot_index=0, gpu_visible=True)  # type: ignore[arg-type]
    return warm, Gate(judges.detach())


def test_the_judge_says_tested_and_reads_the_audit_once_audited(tmp_path: Path) -> None:
    warm, gate = _gate_pair()
    target = tmp_path / "sass_audit.json"
    found = _audit(("HMMA.16816.F32", "fp16"))

    def judge() -> SassAudit | None:
        assert gate.passed(b"go") and gate.passed(b"built")
        return read_audit(gate, target)

    async def daemon() -> SassAudit | None:
        judging = asyncio.ensure_future(asyncio.to_thread(judge))
        warm.go()
        warm.built(audit_follows=True)
        assert await asyncio.wait_for(warm.tested(), 10)
        assert not judging.done(), "the judge waits for `audited`"
        target.write_text(found.model_dump_json())
        warm.audited()
        return await asyncio.wait_for(judging, 10)

    assert asyncio.run(daemon()) == found
    assert warm.go_fd == -1


def test_the_judge_asks_for_the_audit_before_timing_and_reads_it_after(tmp_path: Path) -> None:
    # `ask` returns at once, so the runner's cuobjdump runs while the judge times the cases; `read` then finds the
    # audit the runner wrote meanwhile.
    warm, gate = _gate_pair()
    target = tmp_path / "sass_audit.json"
    found = _audit(("HMMA.16816.F32", "fp16"))

    async def daemon() -> SassAudit | None:
        warm.go()
        warm.built(audit_follows=True)
        assert gate.passed(b"go") and gate.passed(b"built")
        audit = GateAudit(gate, target, tested=True)
        audit.ask()  # no wait: the judge goes on to its benchmark
        assert await asyncio.wait_for(warm.tested(), 10)
        target.write_text(found.model_dump_json())
        warm.audited()
        return await asyncio.to_thread(audit.read)

    assert asyncio.run(daemon()) == found


def test_a_cuda_build_s_audit_is_read_without_asking(tmp_path: Path) -> None:
    warm, gate = _gate_pair()
    target = tmp_path / "sass_audit.json"
    found = _audit(("HMMA.16816.F32", "fp16"))
    warm.go()
    warm.built(audit_follows=True)
    assert gate.passed(b"go") and gate.passed(b"built")
    target.write_text(found.model_dump_json())
    warm.audited()
    audit = GateAudit(gate, target, tested=False)
    audit.ask()  # nothing to tell: the build's SASS is read while the tests run
    assert audit.read() == found


def test_with_nothing_to_audit_the_round_trip_is_quick_and_reads_no_file(tmp_path: Path) -> None:
    warm, gate = _gate_pair()
    target = tmp_path / "sass_audit.json"  # never written: Triton compiled nothing

    async def daemon() -> tuple[SassAudit | None, float]:
        warm.go()
        warm.built(audit_follows=True)
        assert gate.passed(b"go") and gate.passed(b"built")

        async def audit() -> None:
            if await warm.tested():
                warm.audited()

        auditing = asyncio.ensure_future(audit())
        start = time.perf_counter()
        read = await asyncio.to_thread(read_audit, gate, target)
        seconds = time.perf_counter() - start
        await auditing
        return read, seconds

    read, seconds = asyncio.run(daemon())
    assert read is None
    assert seconds < 0.5, f"the judge waited {seconds * 1000:.1f} ms with nothing to audit"


def test_a_gate_closed_after_built_lets_the_judge_through_at_once(tmp_path: Path) -> None:
    # A runner that audits nothing (no GPU) closes the gate after `built`: the judge's `tested` finds it closed.
    warm, gate = _gate_pair()
    warm.go()
    warm.built()
    assert gate.passed(b"go") and gate.passed(b"built")
    assert read_audit(gate, tmp_path / "sass_audit.json") is None


def test_the_daemon_stops_waiting_when_the_judge_closes_the_gate() -> None:
    warm, gate = _gate_pair()

    async def daemon() -> bool:
        warm.go()
        warm.built(audit_follows=True)
        assert gate.passed(b"go") and gate.passed(b"built", last=True)  # the judge ends without `tested`
        return await asyncio.wait_for(warm.tested(), 10)

    assert asyncio.run(daemon()) is False
    warm.audited()  # a write to a gate the judge closed: no error


def test_which_runs_wait_for_an_audit() -> None:
    def request(language: str, device_kind: str) -> JobRequest:
        return JobRequest.model_validate(
            {
                "submission_id": "s",
                "problem_slug": "vector_add",
                "language": language,
                "file_name": "s.py",
                "source": "",
                "device_kind": device_kind,
            }
        )

    assert audits(request("cuda", "cpu")) and audits(request("cuda", "auto"))
    assert audits(request("python", "auto")) and audits(request("triton", "gpu"))
    assert not audits(request("python", "cpu")), "a CPU run's gate closes after `built`, as before"


def test_the_daemon_reads_a_sandboxed_launchers_cache_on_its_own_tmpfs(tmp_path: Path) -> None:
    """The launcher's scratch is a tmpfs of its own mount namespace in the full sandbox: the host's folder stays
    empty, and the daemon reads the cache through a process inside that root."""
    script = (
        "import os, pathlib, time; d = pathlib.Path(os.environ['TRITON_CACHE_DIR']) / 'abc'; "
        "d.mkdir(parents=True); (d / 'k.cubin.tmp').write_bytes(b'cubin'); "
        "os.replace(d / 'k.cubin.tmp', d / 'k.cubin'); print('ready', flush=True); time.sleep(60)"
    )

    async def copied() -> tuple[list[bytes], bool, bool]:
        executor = await default_executor()
        job = await asyncio.to_thread(JobDir.create, tmp_path / "jobs", "launcher", None)
        dest = tmp_path / "dest"
        dest.mkdir()
        python = executor.sandbox.policy.python
        async with await SandboxedProcess.start(
            executor.sandbox, job, lambda _fd: [python, "-c", script], slot_env={}, with_pipe=False
        ) as proc:
            found: triton_cubins.CopiedCubins | None = None
            for _ in range(200):
                location = launcher_cache(executor, proc, job)
                found = triton_cubins.copy_cubins(location, dest) if location is not None else None
                if found is not None and found.files:
                    break
                await asyncio.sleep(0.05)
            assert found is not None, await proc.output()
            hidden = not (job.scratch / "cache" / "triton").exists()
            return [f.read_bytes() for f in found.files], executor.sandbox.level is SandboxLevel.FULL, hidden

    files, full, hidden = asyncio.run(copied())
    assert files == [b"cubin"]
    assert hidden or not full, "in the full sandbox the host's folder must not show the launcher's tmpfs"
