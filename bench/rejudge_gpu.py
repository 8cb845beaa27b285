"""Re-judging a board and a contest podium's second runs on a real GPU: an embedded store, `python -m api` (the
API service, dispatching) and one `python -m runner serve --join` daemon that joined the pool of the GPU's type.

    python3 bench/rejudge_gpu.py [--entrants 4] [--runners 2]   # --cpu: CPU runners, a smoke run without a GPU

`--runners 2` starts two daemons that share the GPU (gpu-a, gpu-b), so that each podium check is kept from the
runner of its first run and runs on the other one, as in a pool of two machines.

Each entrant sends a ranked vector_add run (the CUDA and Python examples in turn, each made a new source) during a
running contest. Then:

1. Re-judging. The entries' stored protocol is set to an older version, as after a change of the judge's timing
   code; `core.rejudge.rejudge_board` re-runs them on the pool, and the board is read again: every entry timed under
   the current protocol, the old jobs still holding their case rows.
2. The podium's second runs. The contest is made to end; the freeze queues a check of every podium run, the
   dispatcher runs them on another runner of the pool (on the one runner there is with --runners 1), and the next freeze
   stores the board. Each check's first and second score, runner and verdict are printed.

Prints the GPU, every entry before and after, each check, and a verdict line; exits 1 when a step did not happen.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import subprocess
import sys
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

import asyncpg

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.fleet_gpu import FINAL, ROOMY, free_port, gpus, start, stop_processes, wait_for  # noqa: E402
from core import fleet  # noqa: E402
from core.contests import ContestDraft, GpuCatalog, create_contest, edit_contest, freeze_if_due  # noqa: E402
from core.leaderboard import get_leaderboard, older_protocol  # noqa: E402
from core.moderation import Actor  # noqa: E402
from core.problems import ProblemSpec, sync_problem  # noqa: E402
from core.rejudge import rejudge_board  # noqa: E402
from core.store import fleet as fleet_store  # noqa: E402
from core.store import podium_checks  # noqa: E402
from core.store.embedded import start_embedded  # noqa: E402
from core.store.migrate import migrate  # noqa: E402
from core.store.pool import create_pool  # noqa: E402
from core.submit.intake import SubmitRequest, submit  # noqa: E402
from core.submit.uploads import check_upload  # noqa: E402
from problems.registry import builtin_problems  # noqa: E402
from runner.gpus import GPU_MODELS, gpu_type_for  # noqa: E402
from runner.protocol import protocol_version  # noqa: E402

MOD = Actor("local:mod", "mod")
EXAMPLES = ("vector_add.cu", "vector_add.py")
OLD_PROTOCOL = "tp-000000000000"


async def all_final(pool: asyncpg.Pool) -> bool:
    return all(r["state"] in FINAL for r in await pool.fetch("SELECT state FROM jobs"))


async def board_lines(pool: asyncpg.Pool, gpu_type: str) -> list[str]:
    board = await get_leaderboard(pool, "vector_add", gpu_type, "float32", limit=20)
    return [
        f"  #{row.rank} {row.display_name:<6} submission {row.submission_id:>2} {row.score:10.2f} GB/s "
        f"{row.protocol or 'unversioned'}{' (older)' if older_protocol(row) else ''}"
        for row in board.rows
    ]


async def main(entrants: int, cpu: bool, runners: int = 1) -> int:
    names = ["CPU"] if cpu else gpus()
    if not names:
        print("needs a GPU; nvidia-smi lists none")
        return 2
    pool_type = "cpu" if cpu else gpu_type_for(names[0])
    print(f"GPU: {names[0]}; pool `{pool_type}`; current protocol {protocol_version()}")
    root = Path(tempfile.mkdtemp(prefix="rejudge-gpu-"))
    server = await start_embedded(root / "pg")
    dsn = server.dsn()
    conn = await asyncpg.connect(dsn)
    await migrate(conn)
    await conn.close()
    procs: dict[str, subprocess.Popen[bytes]] = {}
    ok = True
    try:
        async with create_pool(dsn, min_size=1, max_size=4) as pool:
            for problem in builtin_problems().values():
                await sync_problem(pool, ProblemSpec.builtin(problem))
            made = await fleet.create_join_token(pool, pool_type, lifetime=timedelta(hours=1))
            token = root / "token"
            token.write_text(made.token)
            token.chmod(0o600)
            api_port = free_port()
            api_env = {
                "DATABASE_URL": dsn,
                "ARENA_API_PORT": str(api_port),
                "ARENA_FLEET_HEARTBEAT_S": "1",
                "ARENA_FLEET_HEARTBEAT_TIMEOUT_S": "5",
                "ARENA_FLEET_REFRESH_S": "0.5",
                "ARENA_DISPATCH_OWNER": "gpu-api",
            }
            procs["api"] = start([sys.executable, "-m", "api"], api_env, root / "api.log")
            names_of = [f"gpu-{chr(ord('a') + i)}" for i in range(runners)]
            argv = [sys.executable, "-m", "runner", "serve", "--join", f"http://127.0.0.1:{api_port}"]
            for name in names_of:
                env = {
                    "RUNNER_NAME": name,
                    "RUNNER_PORT": str(free_port()),
                    "RUNNER_DEVICE": "cpu" if cpu else "gpu",
                    "RUNNER_STATE_DIR": str(root / f"state-{name}"),
                }
                procs[name] = start([*argv, "--token-file", str(token)], env, root / f"{name}.log")

            async def joined() -> bool:
                return set(names_of) <= {r.name for r in await fleet_store.live_runners(pool, 5.0)}

            await wait_for(joined, 300, "the runners joined")
            now = datetime.now(UTC)
            draft = ContestDraft(
                "cup",
                "Cup",
                now - timedelta(seconds=5),
                now + timedelta(hours=1),
                ("vector_add",),
                ((pool_type, "float32"),),
            )
            gpus_known = GpuCatalog.of(GPU_MODELS)
            await create_contest(pool, MOD, draft, now=now - timedelta(seconds=10), gpus=gpus_known)
            examples = ("vector_add.py",) if cpu else EXAMPLES  # a CPU runner builds no CUDA
            for i in range(entrants):
                example = examples[i % len(examples)]
                source = (ROOT / "examples" / example).read_bytes()
                source += (b"\n// entrant %d\n" if example.endswith(".cu") else b"\n# entrant %d\n") % i
                user = f"user{i}"
                await submit(
                    pool,
                    SubmitRequest(
                        f"local:{user}", user, "vector_add", check_upload(example, source), pool_type, mode="ranked"
                    ),
                    ROOMY,
                )
            await wait_for(lambda: all_final(pool), 900, "every ranked run finished")
            print("board after the ranked runs:", *await board_lines(pool, pool_type), sep="\n")

            # 1. Re-judging: the entries were timed under an older protocol.
            await pool.execute("UPDATE submissions SET protocol = $1 WHERE mode = 'ranked'", OLD_PROTOCOL)
            print(f"every entry marked as timed under {OLD_PROTOCOL}:", *await board_lines(pool, pool_type), sep="\n")
            done = await rejudge_board(pool, MOD, "vector_add", pool_type, top=entrants)
            rerun = [d for d in done if d.job_id is not None]
            print(f"re-judged {len(rerun)} of {len(done)} entries: jobs {[d.job_id for d in rerun]}")
            await wait_for(lambda: all_final(pool), 900, "every re-judge finished")
            after = await get_leaderboard(pool, "vector_add", pool_type, "float32", limit=20)
            print("board after re-judging:", *await board_lines(pool, pool_type), sep="\n")
            for r in await pool.fetch(
                """SELECT j.id, j.submission_id, j.state, j.runner, j.last_error, s.status FROM jobs j
                JOIN submissions s ON s.id = j.submission_id ORDER BY j.id"""
            ):
                print(f"  job {r['id']} of {r['submission_id']}: {r['state']} on {r['runner']} ({r['last_error']})")
            stale = [row.submission_id for row in after.rows if older_protocol(row)]
            kept = await pool.fetchval(
                "SELECT count(DISTINCT job_id) FROM case_results WHERE job_id IN "
                "(SELECT min(id) FROM jobs GROUP BY submission_id)"
            )
            rejudged_ok = len(rerun) == entrants and not stale and len(after.rows) == entrants and kept == entrants
            print(f"re-judge: {len(rerun)} re-run, {len(stale)} still older, first jobs' case rows kept: {kept}")
            ok &= rejudged_ok

            # 2. The podium's second runs, before the freeze.
            end = datetime.now(UTC) + timedelta(seconds=2)
            await edit_contest(pool, MOD, "cup", now=datetime.now(UTC), gpus=gpus_known, ends_at=end, reason="bench")
            await asyncio.sleep(3)
            report = await freeze_if_due(pool, datetime.now(UTC))
            waiting = report.waiting[0] if report.waiting else None
            print(f"freeze: waits for {len(waiting.pending_jobs) if waiting else 0} podium check(s)")
            await wait_for(lambda: all_final(pool), 900, "every podium check finished")
            report = await freeze_if_due(pool, datetime.now(UTC))
            frozen = report.frozen[0] if report.frozen else None
            contest_id = int(await pool.fetchval("SELECT id FROM contests WHERE slug = 'cup'"))
            for c in await podium_checks.contest_checks(pool, contest_id):
                second = "-" if c.check_score is None else f"{c.check_score:.2f}"
                ratio = "" if c.check_score is None else f" ({c.check_score / c.first_score - 1:+.1%})"
                print(
                    f"  check of submission {c.submission_id}: first {c.first_score:.2f} on {c.first_runner}, "
                    f"second {second}{ratio} on {c.check_runner}: {c.verdict}"
                )
            podium_ok = frozen is not None and waiting is not None and waiting.podium_checks
            podium_ok = podium_ok and all(c.verdict == "agreed" for c in frozen.podium.checks)  # type: ignore[union-attr]
            if runners > 1 and frozen is not None:  # each check kept from its first run's runner, another being live
                moved = all(c.check_runner not in (None, c.first_runner) for c in frozen.podium.checks)  # type: ignore[union-attr]
                print(f"every check ran on another runner than its first run: {moved}")
                podium_ok = podium_ok and moved
            if frozen is not None:
                print("frozen podium:", ", ".join(f"#{line.place} {line.display_name}" for line in frozen.board.podium))
            ok &= bool(podium_ok)
            print(f"re-judge {'OK' if rejudged_ok else 'FAILED'}; podium checks {'OK' if podium_ok else 'FAILED'}")
            return 0 if ok else 1
    finally:
        stop_processes(procs, root, "rejudge_gpu")
        await server.stop()
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entrants", type=int, default=4)
    parser.add_argument("--runners", type=int, default=1, help="runner daemons sharing the GPU (2: checks move)")
    parser.add_argument("--cpu", action="store_true", help="CPU runners and the `cpu` pool: a smoke run without a GPU")
    args = parser.parse_args()
    sys.exit(asyncio.run(main(args.entrants, args.cpu, args.runners)))
