"""The adversarial regression suite (DESIGN.md §6) against the real runner and its real sandbox.

`test_entry_gets_its_expected_verdict` runs every entry of `suite.ENTRIES` through `runner.job.run.run_job`:
cheats must be rejected, or timed at no better than their honest control's cost; controls must pass. Entries
that need a GPU are marked `gpu`, CUDA sources `nvcc`; both skip themselves where the machine lacks them.
The other tests check the suite itself, without running anything.
"""

from __future__ import annotations

import ast
import os
import re
import secrets
import shutil
import subprocess
import tempfile
from collections.abc import AsyncIterator, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from contract import wire
from runner.host.compile import compile_flags, cuda_arch
from tests.adversarial import suite
from tests.adversarial.suite import ENTRIES, Entry, SuiteRunner, judge_entry

MIN_ADVERSARIAL_ENTRIES = 24
KNOWN_VERDICTS = {
    suite.PASSED,
    suite.TRUE_COST,
    "integrity",
    "wrong_answer",
    "runtime_error",
    "crashed",
    "timeout",
    "implausible_time",
    "compile_error",
    "import_error",
    "missing_solution",
    "memory_limit",
    "precision",
}


def _marks(entry: Entry) -> list[pytest.MarkDecorator]:
    marks = [pytest.mark.gpu] if entry.device == "gpu" else []
    return marks + ([pytest.mark.nvcc] if entry.needs_nvcc else [])


@pytest.fixture(scope="module")
def sentinel_env() -> Iterator[str]:
    """The sentinel secret in this process's environment (the runner process), restored afterwards."""
    with pytest.MonkeyPatch.context() as patch:
        value = os.environ.get(suite.SENTINEL_ENV) or f"arena-sentinel-{secrets.token_hex(16)}"
        patch.setenv(suite.SENTINEL_ENV, value)
        patch.setenv("RUNNER_SECRET", value)
        yield value


@pytest.fixture(scope="module")
async def suite_runner(sentinel_env: str) -> AsyncIterator[SuiteRunner]:
    async with suite.open_suite_runner() as runner:
        yield runner


@pytest.mark.parametrize("entry", [pytest.param(e, id=e.name, marks=_marks(e)) for e in ENTRIES])
async def test_entry_gets_its_expected_verdict(entry: Entry, suite_runner: SuiteRunner) -> None:
    result = await suite_runner.run(entry)
    ok, verdict = await suite_runner.judge(entry, result)
    expected = " or ".join(sorted(entry.expected))
    assert ok, f"{entry.name} ({entry.cheat_class}): expected {expected}, got {verdict}"


# -- the suite itself ---------------------------------------------------------------------------------------------


def test_every_design_class_has_a_regression_submission() -> None:
    covered = {entry.cheat_class for entry in ENTRIES}
    assert set(suite.CHEAT_CLASSES) <= covered


def test_the_suite_holds_enough_adversarial_submissions_in_both_languages() -> None:
    cheats = [entry for entry in ENTRIES if not entry.is_control]
    assert len(cheats) >= MIN_ADVERSARIAL_ENTRIES
    assert {"cuda", "python"} <= {entry.language for entry in cheats}


def test_entry_names_are_unique_and_classes_known() -> None:
    assert len({entry.name for entry in ENTRIES}) == len(ENTRIES)
    for entry in ENTRIES:
        assert entry.cheat_class in {*suite.CHEAT_CLASSES, suite.CONTROL}, entry.name
        assert entry.expected and entry.expected <= KNOWN_VERDICTS, entry.name


def test_every_submission_file_names_its_class_in_its_first_lines() -> None:
    for entry in ENTRIES:
        head = "\n".join(entry.path.read_text(encoding="utf-8").splitlines()[:3])
        assert re.match(r"^(#|//) Class: ", head), f"{entry.file} must open with a `Class:` comment"
        assert f"Class: {entry.cheat_class}" in head, f"{entry.file} does not name the class {entry.cheat_class}"


def test_every_submission_file_belongs_to_an_entry() -> None:
    listed = {entry.file for entry in ENTRIES}
    on_disk = {path.name for path in suite.SUBMISSIONS.iterdir() if path.suffix in {".py", ".cu"}}
    assert on_disk == listed


def test_python_submissions_parse() -> None:
    for entry in ENTRIES:
        if entry.path.suffix == ".py":
            ast.parse(entry.source({"LISTEN_PORT": 1}), filename=entry.file)


@pytest.mark.nvcc
def test_gpu_cuda_submissions_compile_with_the_runners_flags() -> None:
    """GPU entries run only where a GPU is; a CUDA source that does not compile should fail here, wherever nvcc is.

    The runner's flags, with `--ptx` for the shared-library link: nvcc's front end still checks host and device
    code, in a sixth of the time. (Link-time outcomes are the CPU entries' business.)
    """
    nvcc = shutil.which("nvcc")
    assert nvcc is not None
    flags = [flag for flag in compile_flags(cuda_arch((9, 0))) if flag not in {"--shared", "-Xcompiler", "-fPIC"}]
    entries = [entry for entry in ENTRIES if entry.language == "cuda" and entry.device == "gpu"]

    def compile_one(entry: Entry, directory: Path) -> subprocess.CompletedProcess[str]:
        argv = [nvcc, *flags, "--ptx", "-o", str(directory / f"{entry.name}.ptx"), str(entry.path)]
        return subprocess.run(argv, capture_output=True, text=True, timeout=300, check=False)

    with tempfile.TemporaryDirectory() as tmp, ThreadPoolExecutor(max_workers=4) as pool:
        built = list(pool.map(lambda entry: compile_one(entry, Path(tmp)), entries))
    failures = {e.name: (r.stdout + r.stderr)[-2000:] for e, r in zip(entries, built, strict=True) if r.returncode}
    assert not failures


def test_a_cheat_may_pass_only_at_true_cost_or_where_nothing_is_timed() -> None:
    for entry in ENTRIES:
        if entry.is_control:
            assert entry.expected == {suite.PASSED}, entry.name
        elif suite.PASSED in entry.expected:
            assert entry.mode == "test", f"{entry.name} may pass only where no time is measured"


def test_true_cost_entries_name_a_benchmarked_control_of_the_same_problem_and_device() -> None:
    for entry in ENTRIES:
        if suite.TRUE_COST not in entry.expected:
            assert entry.control is None, entry.name
            continue
        control = suite.BY_NAME.get(entry.control or "")
        assert control is not None and control.is_control, entry.name
        assert entry.mode == control.mode == "benchmark", entry.name
        assert (control.problem, control.device, control.dtype) == (entry.problem, entry.device, entry.dtype)
        assert suite.ENTRIES.index(control) < suite.ENTRIES.index(entry), f"{entry.name} runs before its control"


def test_the_planting_entry_is_followed_by_a_control() -> None:
    for index, entry in enumerate(ENTRIES):
        if entry.checks_poison:
            following = ENTRIES[index + 1]
            assert following.is_control and following.device == entry.device


# -- judge_entry on made-up results -------------------------------------------------------------------------------


def _result(
    status: str = "passed", code: str | None = None, score: float | None = None, **error: str
) -> wire.SubmissionResult:
    values: dict[str, object] = {
        "submission_id": "s",
        "problem_slug": "vector_add",
        "problem_version": 1,
        "dtype": "float32",
        "language": "python",
        "mode": "benchmark",
        "status": status,
        "device": "test",
        "geomean_gflops": score,
        "tests": [wire.TestOutcome(index=0, name="n=1000", dims=[1000], passed=status == "passed", message="")],
    }
    if code is not None:
        values["error"] = wire.ErrorInfo(code=code, message=error.get("message", "it failed"), log=error.get("log"))  # type: ignore[arg-type]
    return wire.SubmissionResult.model_validate(values)


def test_judge_accepts_a_listed_error_code_and_refuses_another() -> None:
    entry = suite.BY_NAME["py_call_counter"]
    assert judge_entry(entry, _result("failed", "wrong_answer"), {}) == (True, "failed/wrong_answer")
    ok, verdict = judge_entry(entry, _result("error", "crashed"), {})
    assert not ok and verdict == "error/crashed"


def test_judge_refuses_a_cheat_that_passes() -> None:
    ok, verdict = judge_entry(suite.BY_NAME["py_call_counter"], _result(score=5.0), {})
    assert not ok and verdict.startswith("passed")


def test_judge_compares_a_true_cost_pass_with_its_control() -> None:
    entry = suite.BY_NAME["py_patch_measure_stats"]
    assert entry.control is not None and entry.true_cost_factor == suite.CPU_TRUE_COST_FACTOR
    controls = {entry.control: _result(score=10.0)}
    assert judge_entry(entry, _result(score=12.0), controls)[0]
    ok, verdict = judge_entry(entry, _result(score=1000.0), controls)
    assert not ok and "100.00x the control" in verdict
    assert not judge_entry(entry, _result(score=12.0), {})[0], "no control result, no verdict"


def test_judge_refuses_a_result_that_carries_a_forbidden_text_without_repeating_it(sentinel_env: str) -> None:
    entry = suite.BY_NAME["py_env_secrets_probe"]
    secret = sentinel_env
    ok, verdict = judge_entry(entry, _result("error", "runtime_error", message=f"FOUND {secret}"), {})
    assert not ok and "LEAKED" in verdict and secret not in verdict
    assert judge_entry(entry, _result("error", "runtime_error", message="FOUND nothing"), {})[0]


def test_judge_refuses_an_untruncated_log() -> None:
    entry = suite.BY_NAME["py_stdout_flood"]
    assert judge_entry(entry, _result("error", "crashed", log="flood " * 100), {})[0]
    assert not judge_entry(entry, _result("error", "crashed", log="flood " * 10_000), {})[0]
