"""The judge's side of a distributed run on the CPU: draws every rank's inputs, starts one process per rank over
gloo, computes the expected outputs while they run, verifies every rank's outputs of every sample, and scores each
sample by its slowest rank.

The expected outputs exist only in this process: the rank processes are started fresh (not forked from it) and
read only their own inputs. Their results are read back with `weights_only`, so a result file cannot run code here.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from problems.distributed.base import DistributedCase, DistributedProblem, RankTensors
from problems.inputs import torch_dtype
from problems.verification import describe_mismatch
from runner.distributed.cuda_build import build_solution
from runner.distributed.device_release import create_flag
from runner.distributed.exchange import (
    PEER_STOPPED,
    RANK_EXITED,
    RANK_TIMED_OUT,
    CaseResult,
    CaseWork,
    LayoutEntry,
    error_path,
    result_path,
    spec_path,
    work_path,
)

if TYPE_CHECKING:
    import torch

    from problems.base import DeviceKind, DType

logger = logging.getLogger(__name__)
ROOT = Path(__file__).resolve().parents[2]
# Far apart, so that no seed of one (case, sample, rank) is another's.
_CASE_STRIDE, _SAMPLE_STRIDE, _RANK_STRIDE = 1_000_003, 10_007, 101


@dataclass(frozen=True)
class RankFailure:
    """One rank's output that did not verify, or a rank that stopped: where, and how it was wrong. `verdict` is
    the run error's code (contract.errors): `integrity` where the harness caught the call breaking its rules
    (an output written after the call returned, an output's storage swapped), not just a wrong value."""

    case: str
    rank: int
    sample: int
    output: str
    message: str
    verdict: Literal["wrong_answer", "integrity"] = "wrong_answer"


@dataclass
class CaseRun:
    """One case's timing and verdicts. `rank_seconds[r][s]` is rank r's own clock for timed sample s."""

    name: str
    rank_seconds: list[list[float]]
    failures: list[RankFailure] = field(default_factory=list)
    release: str = "host barrier"  # how the ranks were released for each sample (device_release.py)

    @property
    def sample_seconds(self) -> list[float]:
        """Each sample's time: the slowest rank's, since the operation is done only when every rank is."""
        return [max(per_rank) for per_rank in zip(*self.rank_seconds, strict=True)]

    @property
    def slowest_ranks(self) -> list[int]:
        return [
            max(range(len(per_rank)), key=per_rank.__getitem__) for per_rank in zip(*self.rank_seconds, strict=True)
        ]

    @property
    def seconds(self) -> float:
        """The case's score: the median of the slowest-rank sample times."""
        return statistics.median(self.sample_seconds)


@dataclass
class DistributedRun:
    """A whole run: every case's timing and verdicts, and the ranks that failed to run at all."""

    slug: str
    world_size: int
    dtype: str
    cases: list[CaseRun] = field(default_factory=list)
    rank_errors: dict[int, str] = field(default_factory=dict)

    @property
    def first_errors(self) -> dict[int, str]:
        """The ranks that stopped of their own accord, not because a peer did (the cause, when one rank fails)."""
        own = {r: e for r, e in self.rank_errors.items() if PEER_STOPPED not in e}
        return own or dict(self.rank_errors)

    @property
    def failures(self) -> list[RankFailure]:
        return [f for case in self.cases for f in case.failures]

    @property
    def passed(self) -> bool:
        return not self.rank_errors and bool(self.cases) and not self.failures

    @property
    def verdict(self) -> Literal["wrong_answer", "integrity"] | None:
        """The run's error code where outputs failed: integrity outranks a wrong answer, as for one GPU."""
        kinds = {f.verdict for f in self.failures}
        return "integrity" if "integrity" in kinds else ("wrong_answer" if kinds else None)


def sample_generator(seed: int, case: int, sample: int, rank: int) -> torch.Generator:
    import torch

    return torch.Generator().manual_seed(seed + _CASE_STRIDE * case + _SAMPLE_STRIDE * sample + _RANK_STRIDE * rank)


def argument_layout(problem: DistributedProblem, extras: Sequence[Any]) -> tuple[list[LayoutEntry], list[Any]]:
    """The call's layout in ABI order and its constant arrays as tensors (a host array stays on the CPU, where a
    GPU run keeps it too; a device array would move to the rank's device there)."""
    import torch

    layout: list[LayoutEntry] = []
    arrays: list[Any] = []
    values = iter(extras)
    counts = {"input": 0, "output": 0}
    for param in problem.parameters:
        if param.role in counts:
            layout.append((param.role, counts[param.role]))
            counts[param.role] += 1
        elif param.role == "array":
            arrays.append(torch.tensor(list(next(values)), dtype=torch_dtype(param.element_type("float32"))))
            layout.append(("array", len(arrays) - 1))
        else:
            layout.append(("value", next(values)))
    return layout, arrays


def case_work(
    problem: DistributedProblem,
    case: DistributedCase,
    index: int,
    world_size: int,
    samples: int,
    warmup: int,
    seed: int,
) -> tuple[list[CaseWork], list[RankTensors]]:
    """Each rank's work for one case, and every sample's inputs of every rank (for the reference)."""
    dtype = case["dtype"]
    drawn: list[RankTensors] = [
        [problem.rank_inputs(case, r, world_size, sample_generator(seed, index, s, r)) for r in range(world_size)]
        for s in range(warmup + samples)
    ]
    works: list[CaseWork] = []
    for rank in range(world_size):
        layout, arrays = argument_layout(problem, problem.get_extra_params(case, rank, world_size))
        outputs = [
            (list(shape), str(torch_dtype(element)).removeprefix("torch."))
            for shape, element in zip(
                problem.output_shapes(case, rank, world_size), problem.output_elements(dtype), strict=True
            )
        ]
        inputs = [[t.clone() for t in sample[rank]] for sample in drawn]  # the reference keeps its own copies
        works.append(
            {
                "name": case["name"],
                "inputs": inputs,
                "outputs": outputs,
                "arrays": arrays,
                "layout": layout,
                "warmup": warmup,
                "value_types": [p.scalar_type for p in problem.parameters if p.role == "scalar"],
                "array_memory": [p.memory for p in problem.parameters if p.role == "array"],
            }
        )
    return works, drawn


def rank_environment() -> dict[str, str]:
    """The ranks' environment: this interpreter's project on the path, one thread each, nothing else inherited
    that could steer torch (the judge's own variables stay here)."""
    keep = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG", "TMPDIR", "VIRTUAL_ENV")}
    return {**keep, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1", "PYTHONDONTWRITEBYTECODE": "1"}


def start_ranks(job: Path, world_size: int) -> list[subprocess.Popen[bytes]]:
    env = rank_environment()
    return [
        subprocess.Popen(
            [sys.executable, "-m", "runner.distributed.rank", str(job), str(rank)],
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        for rank in range(world_size)
    ]


def wait_for_ranks(processes: list[subprocess.Popen[bytes]], deadline: float) -> dict[int, str]:
    """Wait for every rank until `deadline` (monotonic); a rank still running then is killed, with the others."""
    errors: dict[int, str] = {}
    for rank, process in enumerate(processes):
        try:
            _, stderr = process.communicate(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            for other in processes:
                other.kill()
            process.communicate()
            errors[rank] = f"{RANK_TIMED_OUT}a rank still ran at the deadline (a collective no peer joined?)"
            continue
        if process.returncode == -signal.SIGKILL:
            # Only the status: a rank killed from outside is told apart by it (runner.job.distributed), whatever
            # it printed before.
            errors[rank] = f"{RANK_EXITED}{process.returncode}"
        elif process.returncode != 0:
            errors[rank] = stderr.decode(errors="replace")[-2000:] or f"{RANK_EXITED}{process.returncode}"
    return errors


def changed_elements(returned: torch.Tensor, after: torch.Tensor) -> int:
    """How many elements differ, byte for byte, between a buffer when its call returned and after the case (a
    byte compare, since the poison is a NaN pattern that no float compare finds equal to itself)."""
    import torch

    if returned.shape != after.shape or returned.dtype != after.dtype:
        return returned.numel()
    width = returned.element_size()
    old = returned.contiguous().reshape(-1).view(torch.uint8).reshape(-1, width)
    new = after.contiguous().reshape(-1).view(torch.uint8).reshape(-1, width)
    return int((old != new).any(dim=1).sum())


def integrity_failures(case: str, names: list[str], rank: int, result: CaseResult) -> list[RankFailure]:
    """What the call did outside its rules, per sample and output: swapped an output's storage, or left work
    that wrote the output after the call returned (its own thread, or a peer through memory it mapped)."""
    failures = []
    for sample, (swaps, returned, after) in enumerate(
        zip(result["replaced"], result["outputs"], result["after"], strict=True)
    ):
        for name, swapped, old, new in zip(names, swaps, returned, after, strict=True):
            if swapped:
                message = "the call replaced the output's storage: only the buffer the harness gave counts"
                failures.append(RankFailure(case, rank, sample, name, message, "integrity"))
            late = changed_elements(old, new)
            if late:
                message = (
                    f"{late} of {old.numel()} elements changed after this rank's call returned: work outlived the "
                    "call (a thread of its own or a peer finishing its part), and only what was written by the "
                    "return counts"
                )
                failures.append(RankFailure(case, rank, sample, name, message, "integrity"))
    return failures


def verify_case(
    problem: DistributedProblem, case: DistributedCase, expected: list[RankTensors], results: list[CaseResult]
) -> list[RankFailure]:
    """Every rank's outputs of every sample, as they stood when its call returned, against the reference (one
    failure per wrong output), and every integrity breach of each call."""
    names = [p.name for p in problem.output_params()]
    failures = []
    for rank, result in enumerate(results):
        failures += integrity_failures(case["name"], names, rank, result)
        for sample, (want, got) in enumerate(zip(expected, result["outputs"], strict=True)):
            for name, exp, actual in zip(names, want[rank], got, strict=True):
                passed, details = problem.verify_result(exp, actual, case["dtype"])
                if not passed:
                    failures.append(RankFailure(case["name"], rank, sample, name, describe_mismatch(details)))
    return failures


def run_distributed(
    problem: DistributedProblem,
    solution: Path,
    world_size: int,
    dtype: DType,
    *,
    device_kind: DeviceKind = "cpu",
    cases: Sequence[int] | None = None,
    samples: int = 3,
    warmup: int = 1,
    seed: int = 20260301,
    timeout_s: float = 60.0,
    arch: str = "",
) -> DistributedRun:
    """Run `solution` on `world_size` ranks over the chosen cases of `problem` and judge every rank.

    On the CPU the ranks join a gloo group and time by their host clocks. On GPUs (`device_kind="gpu"`) rank r
    runs on device r mod the host's count, the group is NCCL's, the ranks are released together on their devices
    and each is timed by events on its own (runner/distributed/device_release.py). A `.cu` solution is built here
    with NCCL (`arch`, runner/distributed/cuda_build.py) and called with the harness's communicator."""
    problem.check_world_size(world_size)
    listed = problem.generate_test_cases(dtype, device_kind)
    chosen = [listed[i] for i in (cases if cases is not None else range(len(listed)))]
    run = DistributedRun(problem.slug, world_size, dtype)
    with tempfile.TemporaryDirectory(prefix="arena-distributed-") as tmp:
        job = Path(tmp)
        import torch

        drawn_inputs = []
        for index, case in enumerate(chosen):
            works, drawn = case_work(problem, case, index, world_size, samples, warmup, seed)
            drawn_inputs.append(drawn)
            for rank, work in enumerate(works):
                work_path(job, rank, index).parent.mkdir(exist_ok=True)
                torch.save(work, work_path(job, rank, index))
        language = "cuda" if solution.suffix == ".cu" else "python"
        built = solution.resolve()
        if language == "cuda":
            if device_kind != "gpu":
                raise ValueError("a CUDA solution runs only on GPU ranks")
            built = build_solution(solution.resolve(), job / "solution.so", arch)
        if device_kind == "gpu":
            create_flag(job)
        spec = {
            "world_size": world_size,
            "timeout_s": timeout_s,
            "solution": str(built),
            "cases": len(chosen),
            "device": "cuda" if device_kind == "gpu" else "cpu",
            "language": language,
            # One buffer per rank for the whole run: as large as any chosen case needs.
            "symmetric_bytes": max(
                (problem.symmetric_bytes(tuple(c["dims"]), c["dtype"], world_size) for c in chosen), default=0
            ),
        }
        spec_path(job).write_text(json.dumps(spec), encoding="utf-8")
        deadline = time.monotonic() + timeout_s + 30.0  # the ranks' own collective timeout comes first
        processes = start_ranks(job, world_size)
        # The reference runs while the ranks start: its outputs never leave this process.
        try:
            expected = [
                [problem.expected_outputs(case, sample, world_size) for sample in per_sample]
                for case, per_sample in zip(chosen, drawn_inputs, strict=True)
            ]
        except BaseException:
            for process in processes:  # no rank outlives a judge that could not judge it
                process.kill()
                process.wait()
            raise
        run.rank_errors = wait_for_ranks(processes, deadline)
        for rank in range(world_size):
            if error_path(job, rank).is_file():
                run.rank_errors[rank] = error_path(job, rank).read_text(encoding="utf-8")[-2000:]
        for index, case in enumerate(chosen):
            paths = [result_path(job, rank, index) for rank in range(world_size)]
            if not all(p.is_file() for p in paths):
                break  # a rank stopped before this case: its error says why
            results: list[CaseResult] = [torch.load(p, weights_only=True) for p in paths]
            seconds = [[ns / 1e9 for ns in r["times_ns"]] for r in results]
            failures = verify_case(problem, case, expected[index], results)
            run.cases.append(CaseRun(case["name"], seconds, failures, str(results[0].get("release", ""))))
    for failure in run.failures:
        logger.info(
            "%s at %d ranks: %s rank %d sample %d: %s",
            problem.slug,
            world_size,
            failure.case,
            failure.rank,
            failure.sample,
            failure.message,
        )
    return run
