"""`arena submit SLUG a.cu b.cu … --server`: several variants of one problem as one batch on an arena server
(POST /v1/submissions/batches). Each variant is its own submission; the CLI follows the batch's one event stream,
says each variant's progress in a line on stderr, and prints the table that ranks them.

`--json` prints the server's `BatchView`; `--stream` prints every event as one JSON line, the last the `BatchView`
(with `"type": "batch"`). The exit code is 0 when every variant passed, 1 when one did not, else
`arena.server_client`'s. Ctrl-C withdraws the variants that have not finished.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import sys
import uuid
from pathlib import Path

from api.batch_models import BatchAccepted, BatchView
from arena.event_lines import describe_event
from arena.render import format_rate, table
from arena.server_client import EXIT_FAILED, ArenaServer, ServerError, load_login, report
from core.errors import CancelledByUserError, UserFacingError
from core.submit.batches import MAX_VARIANTS, Variant, check_variants


def read_variants(paths: list[str]) -> list[Variant]:
    """The files, read and checked as the server will check them (the count, the names, each upload)."""
    variants = []
    for text in paths:
        path = Path(text)
        try:
            variants.append(Variant(path.name, path.read_bytes()))
        except OSError as exc:
            raise UserFacingError(f"Cannot read {path}: {exc.strerror or exc}.") from exc
    check_variants(variants)
    return variants


def render_batch(view: BatchView) -> str:
    rows = []
    for variant in view.variants:
        sub = variant.submission
        unit = "GB/s" if sub.score_metric == "gbps" else "GFLOPS"
        score = f"{format_rate(sub.score)} {unit}" if sub.score is not None else "—"
        rows.append([str(variant.rank) if variant.rank else "—", sub.file_name, sub.status, score, f"#{sub.id}"])
    counts = ", ".join(f"{n} {status}" for status, n in sorted(view.counts.items()))
    return (
        f"Batch #{view.id}: {len(view.variants)} variants of {view.problem} ({view.mode}, {view.dtype}, "
        f"{view.gpu_type}) · {counts}\n" + table(["rank", "variant", "status", "score", "submission"], rows)
    )


async def _run(args: argparse.Namespace, variants: list[Variant], accepted: list[BatchAccepted]) -> BatchView:
    login = load_login(args.server or None)
    async with ArenaServer(login) as server:
        batch = await server.submit_batch(
            args.slug,
            [(v.file_name, v.data) for v in variants],
            dtype=args.dtype,
            mode=args.mode,
            gpu=args.gpu,
            idempotency_key=f"cli-batch-{uuid.uuid4().hex}",
        )
        accepted.append(batch)
        names = {v.id: v.file_name for v in batch.variants}
        if not args.stream:
            print(
                f"Batch #{batch.id}: {len(batch.variants)} variants of {batch.problem} on {login.server}, "
                f"pool {batch.gpu_type}; queued at places {', '.join(str(v.queue_position) for v in batch.variants)}",
                file=sys.stderr,
            )
        try:
            async for item in server.follow_batch(batch.id):
                if isinstance(item, BatchView):
                    if args.stream:
                        print(json.dumps({"type": "batch", **item.model_dump(mode="json")}), flush=True)
                    return item
                if args.stream:
                    print(item.model_dump_json(exclude_none=True), flush=True)
                elif (line := describe_event(item, names.get(item.submission_id, ""))) is not None:
                    print(line, file=sys.stderr, flush=True)
        except asyncio.CancelledError:
            await _withdraw(server, batch)
            raise
        return await server.batch(batch.id)  # the stream ended without its table: read it


async def _withdraw(server: ArenaServer, batch: BatchAccepted) -> None:
    for variant in batch.variants:
        with contextlib.suppress(ServerError):
            await server.cancel(variant.id)


def submit_batch_on_server(args: argparse.Namespace) -> int:
    as_json = args.json or args.stream
    accepted: list[BatchAccepted] = []
    try:
        if args.server is None:
            raise UserFacingError(
                f"Several files make a batch (up to {MAX_VARIANTS} variants), which runs on an arena server: add "
                "--server (after `arena login`), or submit the files here one at a time."
            )
        if args.runner or args.fleet or args.no_store:
            raise UserFacingError("--server runs on the server: leave out --runner, --fleet and --no-store.")
        if args.mode == "profile" or args.profile_case is not None or args.profile_dir is not None:
            raise UserFacingError("A batch is not profiled: submit one variant with --mode profile.")
        variants = read_variants(args.files)
        try:
            view = asyncio.run(_run(args, variants, accepted))
        except KeyboardInterrupt:
            where = f"batch #{accepted[0].id}" if accepted else "the batch"
            raise CancelledByUserError(f"Stopped; the unfinished variants of {where} were withdrawn.") from None
    except UserFacingError as exc:
        return report(exc, as_json)
    if args.json and not args.stream:
        print(view.model_dump_json(indent=2))
    elif not args.stream:
        print(render_batch(view))
    return 0 if all(v.submission.status == "passed" for v in view.variants) else EXIT_FAILED
