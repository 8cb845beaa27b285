"""Every `arena` command answers `--json`: the parser is walked, so a new command without it fails here, and each
one's usage mistakes come back as the JSON error a script reads, with the API's codes."""

from __future__ import annotations

import argparse
import json
import logging
from pathlib import Path

import pytest

from arena.cli import build_parser, main
from contract.logs import JsonLineFormatter, configure_logging


def _commands(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Every leaf command, as the words that name it (`("contest", "show")`)."""
    groups = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not groups:
        return [path]
    return [leaf for name, sub in groups[0].choices.items() for leaf in _commands(sub, (*path, name))]


COMMANDS = _commands(build_parser())


def _takes_json(words: tuple[str, ...]) -> bool:
    parser = build_parser()
    for word in words:
        group = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        parser = group.choices[word]
    return any("--json" in a.option_strings for a in parser._actions)


def test_the_walk_finds_every_command_group() -> None:
    named = {words[0] for words in COMMANDS}
    assert {"problems", "show", "starter", "quota", "contest", "ratings", "db", "runner", "submit"} <= named
    assert ("contest", "list") in COMMANDS and ("db", "status") in COMMANDS and len(COMMANDS) >= 30


def test_every_command_takes_json() -> None:
    missing = [" ".join(words) for words in COMMANDS if not _takes_json(words)]
    assert not missing, f"these commands lack --json: {', '.join(missing)}"


@pytest.mark.parametrize("words", COMMANDS, ids=[" ".join(w) for w in COMMANDS])
def test_a_usage_mistake_with_json_is_a_json_error(words: tuple[str, ...], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stopped:
        main([*words, "--json", "--no-such-option"])
    assert stopped.value.code == 2
    out = capsys.readouterr()
    error = json.loads(out.out)["error"]
    assert error["code"] == "bad_request" and "--help" in error["message"]
    assert out.err == ""


def test_a_refusal_with_json_carries_the_apis_code(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["show", "no-such-problem", "--json"]) == 2
    error = json.loads(capsys.readouterr().out)["error"]
    assert error["code"] == "problem_not_found" and "arena problems" in error["message"]
    with pytest.raises(SystemExit):
        main(["show", "matmul", "--dtype", "int8", "--json"])
    assert json.loads(capsys.readouterr().out)["error"]["code"] == "bad_request"  # argparse's choices


def test_problems_show_and_starter_print_their_data_as_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["problems", "--difficulty", "easy", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)["problems"]
    assert listed and {p["difficulty"] for p in listed} == {"easy"}
    assert "vector-addition" in {p["slug"] for p in listed}

    assert main(["show", "matmul", "--dtype", "float16", "--json"]) == 0
    sheet = json.loads(capsys.readouterr().out)
    assert sheet["slug"] == "matrix-multiplication" and sheet["dtype"] == "float16"
    assert sheet["signatures"]["cuda"].startswith('extern "C" void solution(')
    assert [p["name"] for p in sheet["parameters"]][:2] == ["input_a", "input_b"]
    assert sheet["test_cases"]["gpu"] and all(c["gflop"] > 0 for c in sheet["test_cases"]["gpu"])

    assert main(["starter", "vector_add", "--lang", "python", "--json"]) == 0
    starter = json.loads(capsys.readouterr().out)
    assert "def solution(" in starter["code"] and starter["lang"] == "python"
    target = tmp_path / "solution.cu"
    assert main(["starter", "vector_add", "-o", str(target), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["wrote"] == str(target)
    assert 'extern "C" void solution(' in target.read_text()


def test_a_services_json_log_is_one_object_per_line(capsys: pytest.CaptureFixture[str]) -> None:
    configure_logging(json_lines=True)
    try:
        logging.getLogger("arena.test").info("runner %s joined", "r1", extra={"pool": "cpu"})
        try:
            raise ValueError("boom")
        except ValueError:
            logging.getLogger("arena.test").exception("failed")
    finally:
        logging.basicConfig(force=True, handlers=[logging.NullHandler()])
    lines = [json.loads(line) for line in capsys.readouterr().err.splitlines()]
    assert lines[0]["message"] == "runner r1 joined" and lines[0]["pool"] == "cpu"
    assert lines[0]["level"] == "INFO" and lines[0]["logger"] == "arena.test" and lines[0]["time"].endswith("+00:00")
    assert lines[1]["level"] == "ERROR" and "ValueError: boom" in lines[1]["exception"]
    assert isinstance(JsonLineFormatter().format(logging.makeLogRecord({"msg": "x", "odd": object()})), str)
