"""docs/cli.md against the code it describes: every field `--json` and `--stream` print (the result, its cases, its
printed output, its contests, the events), every error code a result can carry, every exit code the server
commands use, and every `arena submissions` subcommand is named there. A field or a code added to the wire models
without a word in the guide fails here."""

from __future__ import annotations

import argparse
import re
from typing import get_args

from pydantic import BaseModel

from api.submission_models import CaseProgressView, SubmissionCancelled, SubmissionEventView
from arena import server_client
from arena.commands import submissions
from contract import wire
from contract.errors import ErrorCode
from contract.names import SUBMISSION_EVENT_TYPES
from contract.wire import CaseTiming, ErrorInfo, PhaseOutput, SubmissionResult
from core.contests.entry import ContestEntries, ContestEntry, EntryStatus
from tests.cli.harness import ROOT

GUIDE = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
# Code blocks, and spans in double backticks (text that holds backticks itself, a contest line), name no field.
_PROSE = re.sub(r"``.+?``", "", re.sub(r"```.*?```", "", GUIDE, flags=re.DOTALL), flags=re.DOTALL)
NAMED = set(re.findall(r"`([^`]+)`", _PROSE))


def missing(names: object) -> list[str]:
    return [name for name in names if name not in NAMED]  # type: ignore[attr-defined]


def fields(model: type[BaseModel]) -> list[str]:
    return list(model.model_fields)


def test_every_json_field_is_in_the_guide() -> None:
    for model in (
        SubmissionResult,
        wire.TestOutcome,
        CaseTiming,
        ErrorInfo,
        PhaseOutput,
        ContestEntries,
        ContestEntry,
        SubmissionEventView,
        CaseProgressView,
        SubmissionCancelled,
    ):
        assert not missing(fields(model)), f"docs/cli.md does not name {model.__name__}'s {missing(fields(model))}"


def test_every_code_and_event_type_is_in_the_guide() -> None:
    assert not missing(get_args(ErrorCode)), "error codes of a result"
    assert "signature_mismatch" in NAMED and "output" in NAMED
    assert not missing(SUBMISSION_EVENT_TYPES), "event types of --stream"
    assert not missing(get_args(EntryStatus)), "what a contest makes of a ranked run"


def test_every_exit_code_is_in_the_guide() -> None:
    codes = {
        value for name, value in vars(server_client).items() if name.startswith("EXIT_") and isinstance(value, int)
    }
    assert codes >= {1, 2, 3, 4, 5}
    table = {int(m) for m in re.findall(r"^\| (\d+) \|", GUIDE, flags=re.MULTILINE)}
    assert table == {0, 130} | codes, f"docs/cli.md's exit table lists {sorted(table)}"


def test_every_submissions_subcommand_is_in_the_guide() -> None:
    parser = argparse.ArgumentParser()
    submissions.register(parser.add_subparsers())
    [group] = [a for a in parser._subparsers._group_actions]  # type: ignore[union-attr]
    [command] = group.choices.values()
    [which] = [a for a in command._subparsers._group_actions]  # type: ignore[union-attr]
    names = set(which.choices)
    assert names == {"list", "show", "code", "cancel"}
    assert f"## `arena submissions {'|'.join(['list', 'show', 'code', 'cancel'])}`" in GUIDE
    assert all(f"arena submissions {name}" in GUIDE for name in names)
