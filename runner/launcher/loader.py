"""Loads a submission into a callable: a Python module's `solution`, or a CUDA library's `solution` symbol.

This is the launcher's side of the trust boundary (it runs next to the submission): it resolves the problem for
its signature and loads the code, and imports nothing of the judge (`tests/runner/test_trust_boundary.py`).
"""

from __future__ import annotations

import ast
import ctypes
import importlib.util
import subprocess
import sys
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from contract.wire import JobRequest
from runner.errors import (
    MissingSolutionError,
    NoGpuError,
    SourceSyntaxError,
    SubmissionImportError,
)
from runner.host.compile import compile_cuda, cuda_arch
from runner.launcher.signature import check_signature

if TYPE_CHECKING:
    import torch

    from problems.base import DeviceKind, DType, Problem

BoundCall = Callable[[], object]


def check_python_syntax(source: str, file_name: str) -> None:
    """Raise SourceSyntaxError pointing at the line, before anything is imported."""
    try:
        ast.parse(source, filename=file_name)
    except SyntaxError as exc:
        line = (exc.text or "").rstrip("\n")
        caret = " " * max((exc.offset or 1) - 1, 0) + "^"
        raise SourceSyntaxError(
            f"{file_name} line {exc.lineno}: {exc.msg}.", log=f"{line}\n{caret}" if line else None
        ) from exc


@dataclass
class Solution:
    """A loaded submission. `bind` fixes the arguments so that a timed call does only the call itself."""

    language: str
    _call: Callable[..., Any]
    _convert: Callable[[Sequence[Any]], list[Any]]

    def bind(
        self,
        problem: Problem,
        inputs: Sequence[torch.Tensor],
        outputs: Sequence[torch.Tensor],
        extras: Sequence[Any],
        device: str,
    ) -> BoundCall:
        """The call with its arguments in the problem's ABI order; constant arrays become device tensors."""
        from problems.inputs import constant_arrays

        values = problem.arguments(inputs, outputs, constant_arrays(problem, extras, device))
        args = self._convert(values)
        call = self._call

        def bound() -> object:
            # `values` is named here so that the constant arrays live as long as the call: a CUDA solution gets
            # only their addresses, and a freed array's memory is soon reused.
            _ = values
            return call(*args)

        return bound

    def call(self, values: Sequence[Any]) -> object:
        """One call with `values` in ABI order (for the library's own checks; the judge binds instead)."""
        return self._call(*self._convert(values))


def relative_to_job(text: str, path: Path) -> str:
    """`text` with the host folders of the job's scratch area taken out: the user sees "solution.py", not where
    this runner keeps its jobs. `path` is the submission's file, up to three folders below the job's scratch root."""
    for folder in path.parents[:3]:
        if len(folder.parts) > 2:  # never a top folder such as /tmp, whose name is no secret and is everywhere
            text = text.replace(f"{folder}/", "").replace(str(folder), ".")
    return text


def load_python_solution(path: Path, module_name: str = "submission") -> Solution:
    """Import the file at `path` as a module and take its `solution` function."""
    source = path.read_text(encoding="utf-8")
    check_python_syntax(source, path.name)
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise SubmissionImportError(f"{path.name} could not be loaded as a Python module.")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        tb = relative_to_job("".join(traceback.format_exception(exc)), path)
        message = relative_to_job(f"Importing {path.name} raised {type(exc).__name__}: {exc}", path)
        raise SubmissionImportError(message, log=tb) from exc
    fn = getattr(module, "solution", None)
    if not callable(fn):
        raise MissingSolutionError(f"{path.name} defines no function named `solution`. Define `def solution(...)`.")
    return Solution("python", fn, list)


def load_cuda_solution(library: Path, problem: Problem, dtype: DType) -> Solution:
    """Load `solution` from a compiled library with the problem's ctypes signature."""
    lib = ctypes.CDLL(str(library))
    try:
        fn = lib.solution
    except AttributeError:
        hint = ""
        if _has_mangled_solution(library):
            hint = ' The library has a C++ (mangled) `solution`: declare it `extern "C"`.'
        raise MissingSolutionError(f'No `extern "C" void solution(...)` symbol in the compiled source.{hint}') from None
    signature = problem.get_function_signature(dtype)
    fn.argtypes = signature["argtypes"]
    fn.restype = signature["restype"]
    argtypes: list[Any] = signature["argtypes"]

    def convert(values: Sequence[Any]) -> list[Any]:
        out: list[Any] = []
        for value, argtype in zip(values, argtypes, strict=True):
            if hasattr(value, "data_ptr"):
                out.append(ctypes.cast(ctypes.c_void_p(value.data_ptr()), argtype))
            else:
                out.append(argtype(value))
        return out

    return Solution("cuda", fn, convert)


def _has_mangled_solution(library: Path) -> bool:
    try:
        out = subprocess.run(["nm", "-D", str(library)], capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return "8solution" in out.stdout


def load_solution(request: JobRequest, problem: Problem, workdir: Path, device_kind: DeviceKind) -> Solution:
    """Compile (or take the runner's prebuilt library) and load the submission: the launcher's first step."""
    import torch

    src_dir = workdir / "src"
    src_dir.mkdir(parents=True, exist_ok=True)
    if request.language == "cuda":
        capability = torch.cuda.get_device_capability() if device_kind == "gpu" else None
        built = compile_cuda(request.source, workdir / "build", cuda_arch(capability))
        # Loading needs no GPU, so a missing `solution` symbol is reported even on a CPU runner.
        solution = load_cuda_solution(built.path, problem, request.dtype)
        if device_kind != "gpu":
            raise NoGpuError(
                "The CUDA source compiled, but this runner has no GPU to run it on. "
                "Submit to a GPU runner, or send a .py solution to run on the CPU."
            )
        return solution
    if request.language == "triton" and device_kind != "gpu":
        raise NoGpuError(
            "Triton kernels need a GPU, and this runner has none. Submit a plain PyTorch .py for CPU runs."
        )
    path = src_dir / "submission.py"
    path.write_text(request.source, encoding="utf-8")
    solution = load_python_solution(path)
    check_signature(solution._call, problem, request.dtype)  # before any case runs
    return solution
