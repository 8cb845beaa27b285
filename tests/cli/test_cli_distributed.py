"""`arena problems`, `show`, `starter` and `submit` on distributed problems, in process (no daemon, no ranks):
the sheet carries world sizes, one rank's parameters, the signatures with rank, world size and group, and the
bus arithmetic; the starter is Python; a submission on a path that cannot run one (a local run, --runner, a batch),
or without a world size the problem declares, is refused in words before any path is tried."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from arena.cli import main
from problems.distributed.registry import distributed_problems

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "distributed" / "all_gather.py"


def _json(capsys: pytest.CaptureFixture[str], *words: str) -> tuple[int, dict]:
    code = main([*words, "--json"])
    return code, json.loads(capsys.readouterr().out)


def test_problems_lists_the_distributed_ones_apart(capsys: pytest.CaptureFixture[str]) -> None:
    code, data = _json(capsys, "problems")
    assert code == 0
    listed = {d["slug"]: d for d in data["distributed"]}
    assert set(listed) == set(distributed_problems())
    assert all(d["world_sizes"] == [2, 4, 8] and d["submittable"] is True for d in listed.values())
    # The single-GPU listing keeps only single-GPU problems, as the boards and the judge see them.
    assert not set(listed) & {p["slug"] for p in data["problems"]}
    assert main(["problems", "--category", "distributed"]) == 0
    text = capsys.readouterr().out
    assert "--world-size N --fleet POOL" in text and "all-to-all-moe-dispatch" in text and "2, 4, 8" in text


def test_show_gives_world_sizes_signatures_and_bus_bytes(capsys: pytest.CaptureFixture[str]) -> None:
    code, sheet = _json(capsys, "show", "all-to-all-moe-dispatch", "--dtype", "bfloat16")
    assert code == 0
    assert sheet["distributed"] is True and sheet["submittable"] is True
    assert "--world-size N" in sheet["how_to_submit"] and "--fleet POOL" in sheet["how_to_submit"]
    assert sheet["world_sizes"] == [2, 4, 8] and sheet["dtype"] == "bfloat16"
    assert sheet["signatures"]["python"].endswith(
        "rank: int, world_size: int, group: torch.distributed.ProcessGroup) -> None"
    )
    assert "ncclComm_t comm, void* const* peer_buffers" in sheet["signatures"]["cuda"]
    assert "const __nv_bfloat16* d_input" in sheet["signatures"]["cuda"]
    assert sheet["bus_factor"] == {"2": 0.5, "4": 0.75, "8": 0.875}
    assert [p["name"] for p in sheet["parameters"]][:3] == ["d_input", "d_output", "send_splits"]
    cases = sheet["test_cases"]["cpu"]
    assert {c["world_size"] for c in cases} == {2, 4, 8}
    four = next(c for c in cases if c["world_size"] == 4)
    assert [r["rank"] for r in four["ranks"]] == [0, 1, 2, 3]
    # Uneven splits: the ranks' shapes and split values differ, and each rank's splits are world_size long.
    assert len({r["shapes"] for r in four["ranks"]}) > 1
    assert all(len(r["values"]["send_splits"]) == 4 for r in four["ranks"])
    assert four["bus_mb"] == pytest.approx(four["algorithm_mb"] * 0.75)

    assert main(["show", "all-reduce"]) == 0
    text = capsys.readouterr().out
    assert "cannot run them yet" in text and "2 ranks ×1, 4 ranks ×1.5, 8 ranks ×1.75" in text
    assert "def solution(d_input: torch.Tensor, d_output: torch.Tensor, n: int, rank: int" in text


def test_the_starter_is_python_and_parses(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, data = _json(capsys, "starter", "reduce-scatter")
    assert code == 0 and data["lang"] == "python" and data["slug"] == "reduce-scatter"
    compile(data["code"], "starter.py", "exec")
    assert "group: torch.distributed.ProcessGroup) -> None:" in data["code"]
    out = tmp_path / "solution.py"
    assert main(["starter", "all-gather-gemm", "--dtype", "float16", "-o", str(out)]) == 0
    assert "all-gather-gemm, float16" in out.read_text(encoding="utf-8")
    # A single-GPU problem's starter is still CUDA unless asked.
    assert main(["starter", "vector-addition"]) == 0
    assert 'extern "C" void solution(' in capsys.readouterr().out


def test_a_cuda_starter_of_a_distributed_problem_is_refused_in_words(capsys: pytest.CaptureFixture[str]) -> None:
    code, data = _json(capsys, "starter", "all-gather", "--lang", "cuda")
    assert code == 2 and data["error"]["code"] == "invalid_option"
    assert "Python only" in data["error"]["message"]


@pytest.mark.parametrize(
    ("where", "words"),
    [
        ([], "this path cannot run it"),
        (["--runner", "http://127.0.0.1:9"], "this path cannot run it"),
        (["--fleet", "h100"], "the command has no --world-size: give --world-size 2"),
        (["--server", "http://127.0.0.1:9", "--world-size", "3"], "the command has --world-size 3"),
        ([str(EXAMPLE), "--server", "http://127.0.0.1:9", "--world-size", "2"], "a batch cannot run it"),
    ],
)
def test_a_distributed_submission_a_path_cannot_run_is_refused_before_any_path(
    where: list[str], words: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # A server at a closed port: a refusal that came after trying it would be a connection error instead.
    code, data = _json(capsys, "submit", "all-gather", str(EXAMPLE), *where)
    assert code == 2
    assert data["error"]["code"] == "validation_failed"
    assert "distributed problem" in data["error"]["message"] and words in data["error"]["message"]


def test_a_world_size_for_a_single_device_problem_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    code, data = _json(capsys, "submit", "vector_add", str(EXAMPLE), "--world-size", "2", "--fleet", "cpu")
    assert code == 2
    assert "runs on one device: leave out --world-size" in data["error"]["message"]


def test_a_distributed_problems_board_says_its_world_size_from_its_rank_pool() -> None:
    from core.submit.distributed import board_world_size

    assert board_world_size("all-gather", "cpux2") == 2
    assert board_world_size("all-gather", "h200x8") == 8
    assert board_world_size("all-gather", "cpu") == 1
    # A single-device problem's board is of one device whatever its pool is called.
    assert board_world_size("vector_add", "gfx2") == 1
