"""The typed judge↔launcher messages: what goes out comes back the same, and a malformed reply from the
process that runs the submission is refused by name."""

from __future__ import annotations

import math
import socket
import threading
from typing import Any

import pytest

from runner.errors import SolutionRuntimeError
from runner.ipc import messages
from runner.ipc.channel import Channel
from runner.judge.launcher_link import LauncherLink

REQUESTS: list[messages.Request] = [
    messages.Prepare(),
    messages.Load({"submission_id": "s", "source": "x"}),
    messages.Share(4096, [{"inputs": [[0, [4], "float32"]], "outputs": [], "snapshots": []}], [7, 1.5], True),
    messages.Call(3),
    messages.Time([0, 1, 2], "spin", 1000, 250, "arena"),
    messages.Threads(),
    messages.Warmup(),
    messages.Exit(),
]


@pytest.mark.parametrize("request_", REQUESTS, ids=lambda r: r.op)
def test_every_request_comes_back_as_it_was_sent(request_: messages.Request) -> None:
    assert messages.decode_request(messages.encode_request(request_)) == request_


TIME = {"op": "time", "sets": [0], "kind": "spin", "spin_cycles": 0, "known_cycles": 0, "protocol": "arena"}


@pytest.mark.parametrize(
    ("raw", "problem"),
    [
        ({"op": "format-disk"}, "unknown request"),
        ({"op": "call", "set": "0"}, "field set"),
        ({"op": "call", "set": True}, "field set"),
        ({**TIME, "kind": "other"}, "kind"),
        ({**TIME, "sets": ["0"]}, "set"),
        ({"op": "share", "size": 1, "sets": [], "extras": [], "reset_l2": "yes"}, "reset_l2"),
    ],
)
def test_a_malformed_request_is_refused_with_what_is_wrong(raw: dict[str, Any], problem: str) -> None:
    with pytest.raises(messages.MalformedMessageError, match=problem):
        messages.decode_request(raw)


def _reading(**changes: Any) -> dict[str, Any]:
    raw = {"elapsed_s": 1e-5, "covered_s": 2e-5, "host_span_s": 3e-5, "modes": 0, "call_s": 1e-6, "start_passed": False}
    return {**raw, **changes}


def test_a_timed_reply_round_trips_through_its_json_form() -> None:
    timed = messages.Timed([messages.Reading(**_reading()), messages.Reading(**_reading(covered_s=None))], (4, 5))
    assert messages.decode_timed(messages.encode_reply(timed), 2) == timed


@pytest.mark.parametrize(
    "raw",
    [
        {"ok": True, "readings": [_reading()], "threads": [1, 1]},  # one reading for two samples
        {"ok": True, "readings": [_reading(), _reading(elapsed_s="1e-5")], "threads": [1, 1]},
        {"ok": True, "readings": [_reading(), _reading(host_span_s=True)], "threads": [1, 1]},
        {"ok": True, "readings": [_reading(), _reading()], "threads": [1]},
        {"ok": True, "readings": [_reading(), _reading()], "threads": [1.0, 2]},
    ],
)
def test_a_malformed_timed_reply_is_refused(raw: dict[str, Any]) -> None:
    with pytest.raises(messages.MalformedMessageError):
        messages.decode_timed(raw, 2)


def test_impossible_times_pass_the_parser_for_the_measurement_to_reject_by_name() -> None:
    timed = messages.decode_timed({"readings": [_reading(elapsed_s=float("nan"))], "threads": [1, 1]}, 1)
    assert math.isnan(timed.readings[0].elapsed_s)


def test_a_mode_count_that_is_not_an_integer_reads_as_a_mode_left_active() -> None:
    timed = messages.decode_timed({"readings": [_reading(modes="0")], "threads": [1, 1]}, 1)
    assert timed.readings[0].modes == 1


def _answer_once(sock: socket.socket, reply: dict[str, Any]) -> threading.Thread:
    def serve() -> None:
        channel = Channel(sock)
        channel.receive(10)
        channel.send(reply)

    thread = threading.Thread(target=serve)
    thread.start()
    return thread


def test_the_judge_reports_an_unreadable_reply_as_the_submissions_fault() -> None:
    judge_end, launcher_end = socket.socketpair()
    try:
        thread = _answer_once(launcher_end, {"ok": True, "readings": [_reading(elapsed_s="fast")], "threads": [1, 1]})
        with pytest.raises(SolutionRuntimeError, match="unreadable reply"):
            LauncherLink(Channel(judge_end)).time([0], "solution", 0, 0, "arena")
        thread.join(10)
    finally:
        judge_end.close()
        launcher_end.close()


def test_the_judge_reads_a_well_formed_batch() -> None:
    judge_end, launcher_end = socket.socketpair()
    try:
        reply = messages.encode_reply(messages.Timed([messages.Reading(**_reading())], (2, 3)))
        thread = _answer_once(launcher_end, reply)
        batch = LauncherLink(Channel(judge_end)).time([0], "solution", 0, 0, "arena")
        thread.join(10)
    finally:
        judge_end.close()
        launcher_end.close()
    assert (batch.readings[0].elapsed_s, batch.threads_before, batch.threads_after) == (1e-5, 2, 3)
