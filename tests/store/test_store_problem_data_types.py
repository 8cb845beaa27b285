"""What a problem's dtypes read as: the store keeps, per dtype key, the label of the data a problem computes on
(`uint32` for a finite-field problem stored under float32), written when the problem is registered, refreshed for
a row stored before the labels were, and absent (the key reads as itself) where they are the same."""

from __future__ import annotations

import asyncpg

from contract.wire import ValidateReport
from core.admission import Candidate, publish_problem, read_problem_module
from core.problems import ProblemSpec, require_problem, sync_problem
from core.store import problems
from problems.registry import get_problem
from tests.store.store_helpers import MATMUL, MOD

# A module as a moderator attaches it: its buffers hold uint32, whatever the float32 key says.
XOR_MODULE = """
from problems.base import Param, Problem


class VectorXor(Problem):
    slug = "vector_xor"
    title = "Vector XOR"
    description = "output[i] = a[i] ^ b[i]"
    version = VERSION
    dtypes = ("float32",)
    parameters = (
        Param("a", "input", element="uint32"),
        Param("b", "input", element="uint32"),
        Param("output", "output", element="uint32"),
        Param("n", "scalar", "size_t"),
    )
"""


async def test_a_finite_field_problem_is_stored_and_read_back_as_uint32(pool: asyncpg.Pool) -> None:
    spec = ProblemSpec.builtin(get_problem("poly-multiply-ff"))
    assert dict(spec.data_types) == {"float32": "uint32"}

    created = await sync_problem(pool, spec)

    assert created.dtypes == ("float32",)
    assert created.data_type("float32") == "uint32"
    assert created.dtype_labels == ("uint32",)
    async with pool.acquire() as conn:
        again = await require_problem(conn, "poly-multiply-ff")
    assert dict(again.data_types) == {"float32": "uint32"}
    stored = await pool.fetchval(
        "SELECT data_types FROM problem_versions WHERE problem_id = $1 AND version = $2",
        created.problem_id,
        created.version,
    )
    assert stored == {"float32": "uint32"}


async def test_a_float_problem_stores_no_label_and_shows_its_keys(pool: asyncpg.Pool) -> None:
    spec = ProblemSpec.builtin(get_problem("matrix-multiplication"))
    assert dict(spec.data_types) == {}
    created = await sync_problem(pool, spec)
    assert created.dtype_labels == created.dtypes
    plain = (await sync_problem(pool, MATMUL)).data_type("float16")
    assert plain == "float16"


async def test_a_row_stored_without_labels_reads_as_its_keys_until_registered_again(pool: asyncpg.Pool) -> None:
    builtin = get_problem("poly-multiply-ff")
    # As a store written before V011 holds it: the same version, no labels.
    unlabelled = ProblemSpec(builtin.slug, builtin.title, builtin.version, tuple(builtin.dtypes))
    old = await sync_problem(pool, unlabelled)
    assert old.data_type("float32") == "float32"

    refreshed = await sync_problem(pool, ProblemSpec.builtin(builtin))

    assert (refreshed.problem_id, refreshed.version) == (old.problem_id, old.version)
    assert refreshed.data_type("float32") == "uint32"
    assert await pool.fetchval("SELECT count(*) FROM problem_versions WHERE problem_id = $1", old.problem_id) == 1
    async with pool.acquire() as conn:
        assert not await problems.set_data_types(conn, refreshed, {"float32": "uint32"}), "nothing left to change"


async def test_labels_of_dtypes_the_version_lacks_or_equal_to_their_key_are_not_kept(pool: asyncpg.Pool) -> None:
    spec = ProblemSpec("labelled", "Labelled", 1, ("float32",), data_types={"float32": "float32", "float16": "int16"})
    created = await sync_problem(pool, spec)
    assert dict(created.data_types) == {}
    assert created.data_type("float16") == "float16"


async def test_a_problem_module_published_from_chat_keeps_its_labels_new_and_replaced(pool: asyncpg.Pool) -> None:
    for version in (1, 2):
        source = XOR_MODULE.replace("VERSION", str(version))
        _, info = read_problem_module("vector_xor.py", source.encode())
        existing = await problems.get_problem(pool, "vector_xor")
        # The runner's self-test is not what this checks: its report is given, as a runner that passed sends it.
        report = ValidateReport(ok=True, slug="vector_xor", title=info.title, version=version)
        published = await publish_problem(pool, MOD, Candidate(info, source, report, existing, "local-cpu"))
        assert published.version == version
        assert published.data_type("float32") == "uint32"
