"""Wire models of the batch routes (POST /v1/submissions/batches and what follows a batch): the OpenAPI document
is generated from these, and the CLI reads the answers back with them."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field

from api.submission_models import SubmissionAccepted, SubmissionSummary
from contract.names import DType, Mode, StoredStatus
from core.submit.batches import BatchState, BatchStatus, BatchTicket


class _Wire(BaseModel):
    model_config = ConfigDict(extra="forbid")


class BatchAccepted(_Wire):
    """202 to POST /v1/submissions/batches: every variant stored with its queued job before this answer."""

    id: int = Field(description="the batch's id")
    problem: str
    mode: Mode
    dtype: DType
    gpu_type: str
    variants: list[SubmissionAccepted] = Field(description="each variant's own submission, in the order sent")
    events: str = Field(description="the path of the batch's events (Server-Sent Events of every variant)")
    status: str = Field(description="the path of the batch's status and ranked table")

    @classmethod
    def of(cls, ticket: BatchTicket, variants: list[SubmissionAccepted]) -> BatchAccepted:
        path = f"/v1/submissions/batches/{ticket.batch.id}"
        first = ticket.tickets[0]
        return cls(
            id=ticket.batch.id,
            problem=first.slug,
            mode=ticket.batch.mode,
            dtype=ticket.batch.dtype,
            gpu_type=ticket.batch.gpu_type,
            variants=variants,
            events=f"{path}/events",
            status=path,
        )


class BatchVariantView(_Wire):
    """One row of a batch's table."""

    position: int = Field(ge=0, description="its place in the order the variants were sent, from 0")
    rank: int | None = Field(
        None, description="its place among the variants that passed, by score (1: best; ties share one); None else"
    )
    submission: SubmissionSummary


class BatchView(_Wire):
    """GET /v1/submissions/batches/{id}: the batch's state and its variants, ranked (and the `data` of the `batch`
    event that ends its event stream)."""

    id: int
    problem: str
    mode: Mode
    dtype: DType
    gpu_type: str
    created_at: datetime
    state: BatchState = Field(description="queued: none started; running; done: every variant has its result")
    counts: dict[StoredStatus, int] = Field(description="the variants by status")
    variants: list[BatchVariantView] = Field(
        description="the ranked variants first, best first, then the others in the order they were sent"
    )

    @classmethod
    def of(cls, status: BatchStatus) -> BatchView:
        batch = status.batch
        return cls(
            id=batch.id,
            problem=status.slug,
            mode=batch.mode,
            dtype=batch.dtype,
            gpu_type=batch.gpu_type,
            created_at=batch.created_at,
            state=status.state,
            counts=status.counts,
            variants=[
                BatchVariantView(position=v.position, rank=v.rank, submission=SubmissionSummary.of(v.submission))
                for v in status.variants
            ],
        )


MODELS: list[type[BaseModel]] = [BatchAccepted, BatchVariantView, BatchView]
