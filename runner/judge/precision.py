"""The precision audit's verdict: the compiled code's matrix instructions (`contract.precision.SassAudit`, read by the
runner's daemon from a CUDA library or from the cubins Triton compiled) against the problem's policy for the board's
dtype (`Problem.accepted_operands`).

A ranked run whose code multiplies in a type below the policy is refused with a message that names the instruction;
test, benchmark and profile runs carry the same finding as a note, so that nobody learns of it first on the board.
A runner that could not read the code says so in a note and refuses nothing: the audit accuses only on what it read.
"""

from __future__ import annotations

from contract.names import DType
from contract.precision import OPERAND_LABELS, MatrixUse, SassAudit
from problems.base import Problem

# How many instruction forms a message names before it says "and N more".
NAMED_USES = 3


def below_policy(audit: SassAudit, accepted: frozenset[str] | None) -> list[MatrixUse]:
    """The uses of `audit` whose operand type the policy does not accept (none without a policy)."""
    if accepted is None:
        return []
    return [use for use in audit.uses if use.operand not in accepted]


def _named(uses: list[MatrixUse]) -> str:
    shown = ", ".join(f"{u.instruction} ({OPERAND_LABELS[u.operand]}, in {u.kernel})" for u in uses[:NAMED_USES])
    return shown + (f" and {len(uses) - NAMED_USES} more" if len(uses) > NAMED_USES else "")


def _policy(accepted: frozenset[str]) -> str:
    names = [OPERAND_LABELS[o] for o in OPERAND_LABELS if o in accepted]
    return ", ".join(["float32 arithmetic", *names])


def refusal(problem: Problem, dtype: DType, audit: SassAudit) -> str | None:
    """The message that refuses a ranked run, or None when the audit found nothing below the policy."""
    accepted = problem.accepted_operands(dtype)
    found = below_policy(audit, accepted)
    if not found or accepted is None:
        return None
    return (
        f"The compiled code does matrix math below the {dtype} board's precision: {_named(found)}. The {dtype} board "
        f"of {problem.slug} accepts {_policy(accepted)}; verification passes within a tolerance, but a ranked entry "
        "must compute in the board's precision. Compute in those types, or enter the board of the type you use "
        "(--dtype)."
    )


def notes(problem: Problem, dtype: DType, audit: SassAudit | None, *, ranked: bool) -> list[str]:
    """What a run's result says of the audit: the matrix instructions found, and for an unranked run the finding
    that a ranked run would be refused."""
    if audit is None:
        return []
    if not audit.available:
        return [f"The precision audit could not read the compiled code on this runner: {audit.reason}."]
    lines: list[str] = []
    if audit.uses:
        lines.append(f"Matrix instructions in the compiled code: {_named(audit.uses)}.")
    if audit.unread:
        # What was not read is never held against the run, and not vouched for either.
        lines.append(
            f"The precision audit left {audit.unread} compiled file(s) unread (past its bounds, or unreadable to "
            "cuobjdump) and says nothing of them."
        )
    accepted = problem.accepted_operands(dtype)
    found = below_policy(audit, accepted)
    if found and accepted is not None and not ranked:
        lines.append(
            f"Below the {dtype} board's precision ({_policy(accepted)}): {_named(found)}. A ranked run of this code "
            "would be refused."
        )
    return lines
