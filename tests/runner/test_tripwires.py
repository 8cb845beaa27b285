"""Static tripwires: notes for reviewers on what a source reaches for; never a verdict."""

from __future__ import annotations

from pathlib import Path

from runner.judge.tripwires import cuda_notes, python_notes, source_notes

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
ADVERSARIAL = Path(__file__).resolve().parents[1] / "adversarial" / "submissions"


def test_the_examples_raise_no_note():
    # The single-GPU examples; examples/distributed/ holds hostile ranks on purpose, and its own tests judge them.
    for example in sorted(p for p in EXAMPLES.iterdir() if p.is_file()):
        language = "cuda" if example.suffix == ".cu" else "python"
        assert source_notes(language, example.read_text(encoding="utf-8")) == [], example.name


def test_python_introspection_and_hooks_are_noted_once_each():
    source = (
        "import gc, sys\n"
        "from torch.utils._python_dispatch import TorchDispatchMode\n"
        "import torch.library\n"
        "def solution(a, b, c, n):\n"
        "    gc.get_objects(); gc.collect(); sys.modules['runner.launcher.harness']\n"
    )
    notes = python_notes(source)
    assert len(notes) == len(set(notes))
    assert {"walks the interpreter's objects (gc)", "reaches other modules through sys.modules"} <= set(notes)
    assert "installs torch dispatch modes" in notes and "overrides torch operators (torch.library)" in notes


def test_a_python_source_that_does_not_parse_gets_no_note():
    assert python_notes("def solution(:\n") == []


def test_cuda_side_streams_constructors_and_incbin_are_noted():
    notes = cuda_notes((ADVERSARIAL / "cu_nonblocking_side_stream.cu").read_text(encoding="utf-8"))
    assert "creates a non-blocking stream" in notes
    notes = cuda_notes((ADVERSARIAL / "cu_incbin_host_file.cu").read_text(encoding="utf-8"))
    assert "embeds a file at compile time (.incbin)" in notes
    notes = cuda_notes("__attribute__((constructor)) static void f() {}\n")
    assert notes == ["runs code when the library loads (constructor)"]
