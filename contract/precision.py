"""The precision audit's wire format: which matrix instructions a compiled submission holds (a CUDA library, or the
cubins Triton compiled for a Python one), and in which operand types.

The runner's daemon reads their SASS (`runner.host.sass_audit`) and hands the judge a `SassAudit`; the judge sets
it against the problem's precision policy for the board's dtype (`problems.base.Problem.accepted_operands`).
Imports pydantic only.
"""

from __future__ import annotations

from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict

# The operand types a matrix instruction (or a conversion into a narrow type) can work in, widest first.
Operand = Literal["fp64", "tf32", "fp16", "bf16", "fp8", "int8", "int4"]
OPERANDS: tuple[Operand, ...] = get_args(Operand)

OPERAND_LABELS: dict[Operand, str] = {
    "fp64": "float64",
    "tf32": "TF32",
    "fp16": "float16",
    "bf16": "bfloat16",
    "fp8": "FP8 (E4M3/E5M2)",
    "int8": "int8",
    "int4": "int4",
}


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class MatrixUse(_Model):
    """One instruction form found in the compiled code: `HMMA.16816.F32.BF16` in kernel `matmul_bf16`, 8 times."""

    instruction: str
    operand: Operand
    kernel: str
    count: int


class SassAudit(_Model):
    """What the audit read; `available` false (with `reason`) when the runner could not read the code. `unread`:
    compiled files it left unread (past its bounds, or that cuobjdump could not read), which it cannot speak for."""

    available: bool
    reason: str | None = None
    uses: list[MatrixUse] = []
    unread: int = 0
