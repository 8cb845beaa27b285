"""`arena mcp`: the arena as tools of the Model Context Protocol, served over stdio to an agent framework that
starts the command. Every tool speaks to one arena server's public API with the user's personal token
(`arena login`, or ARENA_SERVER and ARENA_TOKEN), so an agent's runs are the user's: their quota, their board rows.

The tools (docs/agents.md): `problems`, `show`, `starter`, `submit` (one file, or a batch of up to 16 variants,
ranked), `result`, `leaderboard`, `profile` and `profile_diff` (two profiled runs side by side), answering the API's
own models as structured content. `submit` and
`profile` wait for the result, with a progress notification for each step of the run; a request the client
cancels withdraws its submissions. A refusal is a tool error whose text starts with the API's stable code
(`problem_not_found: …`), never a failed server. The login is read at each call: a token `arena login` keeps
after the framework started the server is used from the next call on, and a missing one is a tool error.
"""

from __future__ import annotations

import contextlib
import logging
import uuid
from collections.abc import Iterator
from typing import Annotated, Any

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import BaseModel, Field

from api.batch_models import BatchAccepted, BatchView
from api.read_models import Leaderboard, ProblemDetail, ProblemList
from api.submission_models import SubmissionEventView, SubmissionView
from arena.event_lines import describe_event
from arena.mcp_api import leaderboard_page, problem_detail, problem_list
from arena.server_client import ArenaServer, ServerError, load_login, server_url
from contract.names import DEFAULT_DTYPE, DEFAULT_MODE, DType, Language, LanguageFilter, Mode
from contract.wire import ProfileDiff
from core.errors import UserFacingError
from core.submit.batches import MAX_VARIANTS, Variant, check_variants
from core.submit.uploads import check_upload
from problems.registry import UnknownProblemError, get_problem
from problems.starter import generate_starter, starter_filename

log = logging.getLogger(__name__)

SERVER_NAME = "kernel-arena"
# How long a cancelled request waits for the server to withdraw its submissions before it gives up on them.
WITHDRAW_TIMEOUT_S = 10.0
INSTRUCTIONS = (
    "Kernel Arena verifies and times GPU kernels (CUDA, PyTorch or Triton) for a catalogue of problems and ranks "
    "them on leaderboards. Start with `problems`, read one with `show`, get a file to fill in with `starter`, then "
    "`submit` it (mode test: verify only; benchmark: verify and time; ranked: counts on the board). Submit several "
    "variants at once as a batch to have them ranked against each other. Tool errors start with a stable code."
)

Slug = Annotated[str, Field(min_length=1, max_length=200, description="the problem's slug, e.g. `vector-addition`")]
FileName = Annotated[
    str, Field(min_length=1, description="the file's name, e.g. `solution.cu`: `.cu` is CUDA, `.py` PyTorch or Triton")
]
Source = Annotated[str, Field(description="the file's whole source text")]
Gpu = Annotated[str | None, Field(description="the GPU pool to run on (default: the server's only or first pool)")]


class VariantSource(BaseModel):
    """One file of a batch."""

    file_name: FileName
    source: Source


class StarterCode(BaseModel):
    """A starter solution: a file that compiles (or parses) and writes nothing yet, to be filled in."""

    problem: str
    language: Language
    dtype: DType
    file_name: str = Field(description="the name to submit it under")
    text: str


# -- errors -----------------------------------------------------------------------------------------------------


def error_text(code: str, message: str, retry_after_s: float | None = None) -> str:
    """A tool error's text: the API's stable code first, so an agent can branch on it, then what to do."""
    retry = f" Try again in {retry_after_s:.0f} s." if retry_after_s else ""
    return f"{code}: {message}{retry}"


@contextlib.contextmanager
def refusals_as_tool_errors() -> Iterator[None]:
    """A refusal (the server's, or a check made here before sending) raised as the tool error the model reads; a
    bug stays a bug, which the SDK reports as a failed call without its detail, and logs."""
    try:
        yield
    except ServerError as exc:
        raise ToolError(error_text(exc.code, exc.message, exc.retry_after_s)) from exc
    except UserFacingError as exc:
        raise ToolError(error_text(exc.code, exc.message)) from exc
    except UnknownProblemError as exc:  # the local catalogue's (problems/ raises no UserFacingError)
        raise ToolError(error_text("problem_not_found", str(exc))) from exc


def _refused(code: str, message: str) -> ToolError:
    return ToolError(error_text(code, message))


# -- progress ---------------------------------------------------------------------------------------------------


class Progress:
    """The request's progress notifications: a count that only grows (the protocol asks for that), with a line
    for each step. A client that asked for no progress gets none (the SDK drops them)."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.count = 0

    async def say(self, message: str) -> None:
        self.count += 1
        await self.ctx.report_progress(self.count, None, message)

    async def event(self, event: SubmissionEventView, name: str = "") -> None:
        if (line := describe_event(event, name)) is not None:
            await self.say(line)


async def _withdraw(server: ArenaServer, submission_ids: list[int]) -> None:
    """After the client cancelled its request: take back what has not finished, so that no runner works for
    nobody. Shielded, as the request's own scope is cancelled; bounded, as it must not keep the server."""
    with anyio.CancelScope(shield=True), anyio.move_on_after(WITHDRAW_TIMEOUT_S):
        for submission_id in submission_ids:
            with contextlib.suppress(ServerError):
                await server.cancel(submission_id)
    log.info("request cancelled: asked the server to withdraw submissions %s", submission_ids)


# -- the tools ---------------------------------------------------------------------------------------------------


class ArenaTools:
    """The tools, each a method; `server` is `--server` (None: ARENA_SERVER, else the one `arena login` kept)."""

    def __init__(self, server: str | None) -> None:
        self.server = server

    def _connect(self) -> ArenaServer:
        return ArenaServer(load_login(self.server))

    async def problems(self) -> ProblemList:
        """Every problem the arena lists now: slug, title, category, difficulty, dtypes, score metric, aliases."""
        with refusals_as_tool_errors():
            async with self._connect() as server:
                return await problem_list(server)

    async def show(
        self,
        slug: Slug,
        dtype: Annotated[DType | None, Field(description="the dtype (default: the problem's first)")] = None,
    ) -> ProblemDetail:
        """One problem's statement and interface: description, CUDA and Python signatures, each parameter, the
        test and timing cases' shapes, the correctness check (tolerances), FLOP and byte formulas, and starters."""
        with refusals_as_tool_errors():
            async with self._connect() as server:
                return await problem_detail(server, slug, dtype)

    async def starter(
        self,
        slug: Slug,
        lang: Annotated[Language, Field(description="cuda, python (PyTorch) or triton")] = "python",
        dtype: DType = DEFAULT_DTYPE,
    ) -> StarterCode:
        """A starter solution for a problem in one language and dtype, with the name to submit it under."""
        with refusals_as_tool_errors():
            try:
                problem = get_problem(slug)
            except UnknownProblemError:
                return await self._server_starter(slug, lang, dtype)  # a problem stored as a module on the server
            if dtype not in problem.dtypes:
                raise _refused("unsupported_dtype", f"`{problem.slug}` takes {', '.join(problem.dtypes)}, not {dtype}.")
            try:
                text = generate_starter(problem, lang, dtype)
            except ValueError as exc:
                raise _refused("invalid_option", str(exc)) from exc
            return StarterCode(
                problem=problem.slug, language=lang, dtype=dtype, file_name=starter_filename(problem, lang), text=text
            )

    async def _server_starter(self, slug: str, lang: Language, dtype: DType) -> StarterCode:
        async with self._connect() as server:
            detail = await problem_detail(server, slug, dtype)
        for starter in detail.starters:
            if starter.language == lang:
                return StarterCode(
                    problem=detail.slug, language=lang, dtype=dtype, file_name=starter.file_name, text=starter.text
                )
        raise _refused("invalid_option", f"`{detail.slug}` has no {lang} starter in {dtype}.")

    async def submit(
        self,
        ctx: Context,
        slug: Slug,
        file_name: Annotated[str | None, Field(description="one file: its name (with `source`)")] = None,
        source: Annotated[str | None, Field(description="one file: its whole source text (with `file_name`)")] = None,
        variants: Annotated[
            list[VariantSource] | None,
            Field(
                min_length=1,
                max_length=MAX_VARIANTS,
                description=f"a batch instead of one file: 1 to {MAX_VARIANTS} files, each its own submission, "
                "ranked against each other by score",
            ),
        ] = None,
        mode: Annotated[Mode, Field(description="test, benchmark, ranked (on the board) or profile")] = DEFAULT_MODE,
        dtype: DType = DEFAULT_DTYPE,
        gpu: Gpu = None,
    ) -> dict[str, Any]:
        """Submit a solution and wait for its result: one file (`file_name` and `source`) answers the submission
        with its result (every case's verdict and timing); a batch (`variants`) answers the batch's table, ranked
        best first, each variant with its status, score and submission id (`result` reads one in full). Progress
        notifications say each step while it runs."""
        with refusals_as_tool_errors():
            if variants is not None:
                if file_name is not None or source is not None:
                    raise _refused("invalid_option", "Give either `file_name` and `source`, or `variants`, not both.")
                batch = [Variant(v.file_name, v.source.encode("utf-8")) for v in variants]
                return (await self._run_batch(ctx, slug, batch, mode, dtype, gpu)).model_dump(mode="json")
            if file_name is None or source is None:
                raise _refused("invalid_option", "Give `file_name` and `source` (one file), or `variants` (a batch).")
            view = await self._run_one(ctx, slug, file_name, source, mode=mode, dtype=dtype, gpu=gpu)
            return view.model_dump(mode="json")

    async def profile(
        self,
        ctx: Context,
        slug: Slug,
        file_name: FileName,
        source: Source,
        dtype: DType = DEFAULT_DTYPE,
        gpu: Gpu = None,
        case: Annotated[
            int | None, Field(ge=0, description="the index of the timing case to profile (default: the server's)")
        ] = None,
    ) -> SubmissionView:
        """Verify a solution, then run one case once under Nsight Compute (never ranked) and answer the result
        with what the profiler measured (`result.profile`); needs a GPU pool whose runners profile."""
        with refusals_as_tool_errors():
            return await self._run_one(ctx, slug, file_name, source, mode="profile", dtype=dtype, gpu=gpu, case=case)

    async def result(
        self, submission_id: Annotated[int, Field(ge=1, description="the submission's id")]
    ) -> SubmissionView:
        """A submission of yours by id: its status, score and, once finished, its whole result."""
        with refusals_as_tool_errors():
            async with self._connect() as server:
                return await server.submission(submission_id)

    async def leaderboard(
        self,
        slug: Slug,
        gpu_type: Annotated[
            str | None, Field(description="the GPU pool, e.g. `H100` (default: the fullest board)")
        ] = None,
        dtype: DType | None = None,
        language: Annotated[LanguageFilter | None, Field(description="`any` (default) or one language")] = None,
        page: Annotated[int, Field(ge=1, description="the page, from 1 (50 rows each)")] = 1,
    ) -> Leaderboard:
        """One page of a problem's leaderboard, your own row wherever it ranks, and the boards the problem has."""
        with refusals_as_tool_errors():
            async with self._connect() as server:
                return await leaderboard_page(
                    server, slug, gpu_type=gpu_type, dtype=dtype, language=language, page=page
                )

    async def profile_diff(
        self,
        a: Annotated[int, Field(ge=1, description="the profiled run compared from (a submission id)")],
        b: Annotated[
            int | None,
            Field(ge=1, description="the run compared to (default: your fastest other profile of the same target)"),
        ] = None,
    ) -> ProfileDiff:
        """Two profiled runs (mode `profile`) of one problem and GPU type side by side, kernel by kernel (matched by
        name): each figure in A, in B, and its change (absolute and in % of A), and the totals. Without `b`, B is your
        fastest other profile of the problem, GPU type, dtype and case, else a board leader's revealed one."""
        with refusals_as_tool_errors():
            async with self._connect() as server:
                return await server.profile_diff(a, b)

    # -- waiting for runs ----------------------------------------------------------------------------------------

    async def _run_one(
        self,
        ctx: Context,
        slug: str,
        file_name: str,
        source: str,
        *,
        mode: Mode,
        dtype: DType,
        gpu: str | None,
        case: int | None = None,
    ) -> SubmissionView:
        data = source.encode("utf-8")
        upload = check_upload(file_name, data)  # the server checks again; this one costs no round trip
        progress = Progress(ctx)
        async with self._connect() as server:
            accepted = await server.submit(
                slug,
                upload.file_name,
                data,
                dtype=dtype,
                mode=mode,
                gpu=gpu,
                profile_case=case,
                # A retry of this very upload (the connection dropped before the answer) gets the same submission.
                idempotency_key=f"mcp-{uuid.uuid4().hex}",
            )
            await progress.say(
                f"submission #{accepted.id}: {accepted.problem} ({accepted.mode}, {accepted.dtype}) for pool "
                f"{accepted.gpu_type}"
            )
            try:
                async for event in server.follow(accepted.id):
                    await progress.event(event)
            except anyio.get_cancelled_exc_class():
                await _withdraw(server, [accepted.id])
                raise
            view = await server.submission(accepted.id)
        if view.result is None:
            raise ServerError("unexpected_answer", f"Submission #{accepted.id} ended without a stored result.", 500)
        return view

    async def _run_batch(
        self, ctx: Context, slug: str, variants: list[Variant], mode: Mode, dtype: DType, gpu: str | None
    ) -> BatchView:
        check_variants(variants)
        progress = Progress(ctx)
        async with self._connect() as server:
            batch: BatchAccepted = await server.submit_batch(
                slug,
                [(v.file_name, v.data) for v in variants],
                dtype=dtype,
                mode=mode,
                gpu=gpu,
                idempotency_key=f"mcp-batch-{uuid.uuid4().hex}",
            )
            names = {v.id: v.file_name for v in batch.variants}
            await progress.say(
                f"batch #{batch.id}: {len(batch.variants)} variants of {batch.problem} ({batch.mode}, {batch.dtype}) "
                f"for pool {batch.gpu_type}"
            )
            try:
                async for item in server.follow_batch(batch.id):
                    if isinstance(item, BatchView):
                        return item
                    await progress.event(item, names.get(item.submission_id, f"#{item.submission_id}"))
            except anyio.get_cancelled_exc_class():
                await _withdraw(server, list(names))
                raise
            return await server.batch(batch.id)  # the stream ended without its table: read it


TOOL_NAMES = ("problems", "show", "starter", "submit", "result", "leaderboard", "profile", "profile_diff")
RUN_TOOLS = frozenset({"submit", "profile"})  # each call is a new run (and a charge on a quota); the others read
READS = ToolAnnotations(read_only_hint=True)
RUNS = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False)


def build_server(server: str | None) -> MCPServer:
    """The MCP server with the arena's tools, speaking to `server` (None: the configured one)."""
    if server is not None:
        server_url(server)  # a malformed --server is the user's to fix now, not each tool's to report
    tools = ArenaTools(server)
    mcp = MCPServer(name=SERVER_NAME, title="Kernel Arena", instructions=INSTRUCTIONS)
    for name in TOOL_NAMES:
        mcp.add_tool(getattr(tools, name), name=name, annotations=RUNS if name in RUN_TOOLS else READS)
    return mcp


def serve(server: str | None) -> None:
    """Serve the tools over stdin and stdout until the client closes stdin."""
    mcp = build_server(server)
    log.info("serving the arena's tools over stdio (server %s)", server or "from the login")
    mcp.run("stdio")
