"""The precision audit: the SASS reader against nvcc's real output (tests/fixtures/sass, tests/fixtures/ncu), each
problem's policy, the judge's verdict and notes, and the daemon's sandboxed cuobjdump on a library nvcc builds."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import pytest

from contract.precision import OPERANDS, MatrixUse, SassAudit
from problems.base import OPERANDS as PROBLEM_OPERANDS
from problems.registry import builtin_problems, get_problem
from runner.host.compile import compile_cuda
from runner.host.executor import default_executor
from runner.host.sandbox import JobDir
from runner.host.sass_audit import cuobjdump_path, kernel_name, matrix_uses, operand_of
from runner.job.precision_audit import write_audit
from runner.judge import precision

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
