"""Whether a contest can be entered: its targets name GPU types the arena knows and dtypes, and a runner serves
each GPU type.

A GPU type the arena does not know (`h1000`) is refused: no runner could ever report it, so the contest could never
be entered there. The known types are the GPU registry's board keys (`runner/gpus.py`), and any type a runner of the
caller serves (a model without a registry entry still gets boards under a slug of its name). The core reads neither
the registry nor the runners itself (it sees the runner only through its wire models and client interface): the
front end that has them hands them in as a `GpuCatalog`.

A known GPU type that no runner serves is not refused (the runner may come before the start) but warned about: the
front end shows `unserved_warning` on creation and on a change, and the bot's contest clock posts the same warning
once more within `START_WARNING_LEAD` of the start (`claim_start_warnings`).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Protocol

import asyncpg

from core.contests.clock import as_utc
from core.contests.lookup import ContestView, view_of
from core.errors import ContestError, InvalidOptionError
from core.problems import shown
from core.store import contests
from core.store.contests import Target
from core.submit.intake import DTYPES

START_WARNING_LEAD = timedelta(hours=1)
"""How long before its start a contest with a target no runner serves is warned about again."""
_GPU_TYPE = re.compile(r"[a-z0-9][a-z0-9_.-]{0,63}")


class GpuModelEntry(Protocol):
    """What the catalog reads of a registry entry (`runner.gpus.GpuModel` has it)."""

    @property
    def key(self) -> str: ...

    def labels(self) -> tuple[str, ...]: ...


@dataclass(frozen=True)
class GpuCatalog:
    """The GPU types a contest may target, and those the caller's runners serve.

    `keys` are the registry's board keys; `old_spellings` maps its other spellings (aliases) to their key;
    `served` holds the GPU types the caller's runners serve, or None where the caller does not know its runners
    (then nothing is warned about)."""

    keys: frozenset[str]
    old_spellings: Mapping[str, str] = field(default_factory=dict)
    served: frozenset[str] | None = None

    @classmethod
    def of(cls, models: Iterable[GpuModelEntry], served: Iterable[str] | None = None) -> GpuCatalog:
        """The catalog of these registry entries (`runner.gpus.GPU_MODELS`) and these runners' GPU types."""
        entries = list(models)
        old = {label: m.key for m in entries for label in m.labels() if label != m.key}
        return cls(frozenset(m.key for m in entries), old, None if served is None else frozenset(served))

    def known(self) -> list[str]:
        """Every GPU type a contest may target: the registry's keys and whatever a runner serves."""
        return sorted(self.keys | (self.served or frozenset()))


def _unknown_gpu_type(gpu_type: str, catalog: GpuCatalog) -> InvalidOptionError:
    known = catalog.known()
    key = catalog.old_spellings.get(gpu_type)
    if key is not None:
        return InvalidOptionError(
            f"`{gpu_type}` is an old spelling of the GPU type `{key}`; runs are judged and ranked as `{key}`, so "
            f"target `{key}`."
        )
    close = difflib.get_close_matches(gpu_type, known, n=3, cutoff=0.5)
    hint = f" Did you mean {', '.join(f'`{c}`' for c in close)}?" if close else ""
    return InvalidOptionError(
        f"`{shown(gpu_type)}` is not a GPU type the arena knows; choose among {', '.join(f'`{k}`' for k in known)}."
        + hint
    )


def check_targets(targets: Sequence[tuple[str, str]], catalog: GpuCatalog) -> list[Target]:
    """The (GPU type, dtype) targets as stored, or the error that says which one to fix. That each contest problem
    takes each dtype is checked where the problems are resolved (`drafts`)."""
    if not targets:
        raise ContestError("A contest needs at least one (GPU type, dtype) target whose ranked runs count.")
    known = set(catalog.known())
    checked: list[Target] = []
    for gpu_type, dtype in targets:
        if not _GPU_TYPE.fullmatch(gpu_type):
            raise InvalidOptionError(
                f"`{shown(gpu_type)}` is not a GPU type name (lower-case letters, digits, '.', '_' or '-')."
            )
        if gpu_type not in known:
            raise _unknown_gpu_type(gpu_type, catalog)
        if dtype not in DTYPES:
            raise InvalidOptionError(f"`{shown(dtype)}` is not a dtype; choose one of {', '.join(DTYPES)}.")
        target = Target(gpu_type, dtype)
        if target in checked:
            raise ContestError(f"The target {gpu_type}/{dtype} is listed twice; list each target once.")
        checked.append(target)
    return checked


def unserved_gpu_types(targets: Sequence[Target], catalog: GpuCatalog) -> list[str]:
    """The targets' GPU types that none of the caller's runners serves ([] where the caller does not know)."""
    if catalog.served is None:
        return []
    return sorted({t.gpu_type for t in targets} - catalog.served)


def unserved_warning(contest_view: ContestView, catalog: GpuCatalog) -> str | None:
    """What to tell the moderator when no runner serves some of the contest's GPU types; None when all are served."""
    unserved = unserved_gpu_types(contest_view.targets, catalog)
    if not unserved:
        return None
    named = ", ".join(f"`{g}`" for g in unserved)
    served = ", ".join(f"`{g}`" for g in sorted(catalog.served or ())) or "none"
    return (
        f"No runner serves {named}: nobody can enter `{contest_view.contest.slug}` there until one does. "
        f"Runners serve {served}; add a runner of that GPU type before the start, or change the contest's targets."
    )


@dataclass(frozen=True)
class StartWarning:
    """A contest that starts soon with GPU types no runner serves, and what to say about it."""

    view: ContestView
    unserved: list[str]
    text: str


async def claim_start_warnings(
    pool: asyncpg.Pool, now: datetime, catalog: GpuCatalog, *, lead: timedelta = START_WARNING_LEAD
) -> list[StartWarning]:
    """The contests starting within `lead` that have a GPU type no runner serves, each claimed in the store before
    it is returned, so that it is posted once however many bots run or restart. A contest whose every GPU type is
    served is not claimed: a bot with fewer runners would still warn about it."""
    if catalog.served is None:
        return []
    now = as_utc(now, "current time")
    found: list[StartWarning] = []
    async with pool.acquire() as conn:
        for contest in await contests.starting_unwarned(conn, now, now + lead):
            contest_view = await view_of(conn, contest)
            text = unserved_warning(contest_view, catalog)
            if text is not None and await contests.claim_start_warning(conn, contest.id, now):
                found.append(StartWarning(contest_view, unserved_gpu_types(contest_view.targets, catalog), text))
    return found
