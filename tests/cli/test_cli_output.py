"""`arena submit` shows what the solution printed after the result, and carries it in `--json`; a Python
solution whose parameters cannot take the call is refused in one line naming the expected signature. A real
`arena` subprocess with its own embedded store and the real sandboxed runner."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from tests.cli.harness import arena, arena_env

DATA_DIR = tempfile.mkdtemp(prefix="arena-cli-output-")

PRINTS = """
import torch


def solution(a, b, out, n):
    print(f"adding {n} elements")
    torch.add(a, b, out=out)
"""

SWAPPED = """
def solution(d_output, d_input1, d_input2, n):
    d_output.copy_(d_input1 + d_input2)
"""


def _submit(tmp_path: Path, source: str, *extra: str) -> tuple[int, str, str]:
    path = tmp_path / "solution.py"
    path.write_text(source, encoding="utf-8")
    proc = arena(
        "submit", "vector_add", str(path), "--mode", "test", "--device", "cpu", *extra, env=arena_env(DATA_DIR)
    )
    return proc.returncode, proc.stdout, proc.stderr


def test_submit_shows_the_printed_lines_after_the_result(tmp_path: Path) -> None:
    code, out, err = _submit(tmp_path, PRINTS)
    assert code == 0, err
    shown = out[out.index("what the solution printed:") :]
    assert shown.startswith("what the solution printed:\n--- stdout during the correctness tests ---\nadding ")


def test_submit_json_carries_the_output(tmp_path: Path) -> None:
    code, out, err = _submit(tmp_path, PRINTS, "--json")
    assert code == 0, err
    document = json.loads(out)
    (test,) = document["output"]
    assert test["phase"] == "test" and test["stdout"].startswith("adding ") and test["stdout_cut_bytes"] == 0


def test_a_signature_in_another_order_is_refused_in_one_line(tmp_path: Path) -> None:
    code, out, _err = _submit(tmp_path, SWAPPED, "--json")
    assert code != 0
    error = json.loads(out)["error"]
    assert error["code"] == "signature_mismatch"
    assert error["message"].startswith("Expected solution(d_input1: torch.Tensor, d_input2: torch.Tensor")
    assert "\n" not in error["message"]
