"""Starter code generated from a problem's signature, for CUDA, PyTorch and Triton."""

from __future__ import annotations

from typing import Literal

from problems.base import C_HEADERS, C_TYPES, DType, Param, Problem

StarterLanguage = Literal["cuda", "python", "triton"]
STARTER_LANGUAGES: tuple[StarterLanguage, ...] = ("cuda", "python", "triton")
FILE_EXTENSIONS: dict[StarterLanguage, str] = {"cuda": ".cu", "python": ".py", "triton": ".py"}


def starter_filename(problem: Problem, language: StarterLanguage) -> str:
    suffix = "_triton" if language == "triton" else ""
    return f"{_identifier(problem)}{suffix}{FILE_EXTENSIONS[language]}"


def _identifier(problem: Problem) -> str:
    """The slug as a C and Python identifier: `matrix-multiplication` -> `matrix_multiplication`."""
    return problem.slug.replace("-", "_")


def generate_starter(problem: Problem, language: StarterLanguage, dtype: DType = "float32") -> str:
    """Source text of a starter solution that compiles (or parses) and writes nothing yet."""
    if dtype not in problem.dtypes:
        raise ValueError(f"{problem.slug} does not support {dtype}; it supports {', '.join(problem.dtypes)}")
    if language == "cuda":
        return _cuda_starter(problem, dtype)
    if language == "python":
        return _python_starter(problem, dtype)
    if language == "triton":
        return _triton_starter(problem, dtype)
    raise ValueError(f"unknown starter language {language!r}; choose one of {', '.join(STARTER_LANGUAGES)}")


def _c_param(param: Param, dtype: DType) -> str:
    if param.role == "scalar":
        return f"{param.scalar_type} {param.name}"
    const = "" if param.role == "output" else "const "
    return f"{const}{C_TYPES[param.element_type(dtype)]}* {param.name}"


def param_summary(param: Param, dtype: DType) -> str:
    """What one parameter is, in a line: its kind, element type and the problem's own words."""
    element = param.element_type(dtype)
    kind = {
        "input": f"input buffer of {element}",
        "output": f"output buffer of {element} (write every element)",
        "scalar": f"{param.scalar_type} value",
        "array": f"constant array of {param.scalar_type} ({param.memory} memory)",
    }[param.role]
    return f"{kind}: {param.doc}" if param.doc else kind


def tolerance_summary(problem: Problem, dtype: DType) -> str:
    """How outputs are checked in `dtype`, in a line."""
    if all(e.startswith(("int", "uint", "size")) for e in problem.output_elements(dtype)):
        return "outputs are compared exactly"
    tol = problem.tolerances[dtype]
    return f"|out - ref| <= {tol.atol:g} * rms(ref) + {tol.rtol:g} * |ref|, elementwise"


def _doc_lines(problem: Problem, dtype: DType, comment: str) -> list[str]:
    lines = [f"{comment} {problem.title} ({problem.slug}, {dtype})", f"{comment}"]
    lines += [f"{comment} {line}" for line in problem.description.splitlines()]
    lines.append(f"{comment}")
    for p in problem.ordered_parameters():
        lines.append(f"{comment}   {p.name}: {param_summary(p, dtype)}")
    lines.append(f"{comment}")
    lines.append(f"{comment} Checked: {tolerance_summary(problem, dtype)}.")
    return lines


def _headers(problem: Problem, dtype: DType) -> list[str]:
    wanted = {C_HEADERS.get(p.element_type(dtype), "") for p in problem.ordered_parameters() if p.is_pointer}
    return sorted(h for h in wanted if h)


def _host_arrays(problem: Problem) -> list[str]:
    return [p.name for p in problem.ordered_parameters() if p.role == "array" and p.memory == "host"]


def _pointer_note(problem: Problem) -> str:
    """Which pointers are device pointers: all of them, or all but the host arrays, named."""
    host = _host_arrays(problem)
    if not host:
        return "Every pointer is a device pointer."
    names = ", ".join(f"`{name}`" for name in host)
    return f"Every pointer is a device pointer except {names}, which is in host memory: read it on the host."


def _cuda_starter(problem: Problem, dtype: DType) -> str:
    params = ", ".join(_c_param(p, dtype) for p in problem.ordered_parameters())
    includes = ["#include <cuda_runtime.h>"]
    includes += [f"#include <{header}>" for header in _headers(problem, dtype)]
    doc = _doc_lines(problem, dtype, "//")
    return "\n".join(
        [
            *includes,
            "",
            *doc,
            "//",
            f"// {_pointer_note(problem)} Launch on the default stream; the harness synchronises.",
            f'extern "C" void solution({params}) {{',
            "    // TODO: launch your kernel here.",
            "}",
            "",
        ]
    )


def _py_signature(problem: Problem) -> str:
    parts = []
    for p in problem.ordered_parameters():
        annotation = "torch.Tensor" if p.is_pointer else ("float" if p.scalar_type == "float" else "int")
        parts.append(f"{p.name}: {annotation}")
    return ", ".join(parts)


def _outputs(problem: Problem) -> list[str]:
    return [p.name for p in problem.ordered_parameters() if p.role == "output"]


def _python_starter(problem: Problem, dtype: DType) -> str:
    doc = _doc_lines(problem, dtype, "#")
    outputs = ", ".join(_outputs(problem))
    return "\n".join(
        [
            *doc,
            "#",
            f"# Tensors are on the GPU (or the CPU on a CPU runner). Write the result into {outputs} in place.",
            *(
                [f"# {', '.join(_host_arrays(problem))}: a CPU tensor on every runner (host memory)."]
                if _host_arrays(problem)
                else []
            ),
            "import torch",
            "",
            "",
            f"def solution({_py_signature(problem)}) -> None:",
            f"    # TODO: compute the result and write it into {outputs}, e.g. {_outputs(problem)[0]}.copy_(...)",
            "    pass",
            "",
        ]
    )


def _triton_starter(problem: Problem, dtype: DType) -> str:
    doc = _doc_lines(problem, dtype, "#")
    ordered = problem.ordered_parameters()
    kernel_args = ", ".join(f"{p.name}_ptr" if p.is_pointer else p.name for p in ordered)
    call_args = ", ".join(p.name for p in ordered)
    first_output = _outputs(problem)[0]
    return "\n".join(
        [
            *doc,
            "import torch",
            "import triton",
            "import triton.language as tl",
            "",
            "",
            "@triton.jit",
            f"def {_identifier(problem)}_kernel({kernel_args}, BLOCK_SIZE: tl.constexpr):",
            "    pid = tl.program_id(axis=0)",
            "    # TODO: load a block of the inputs, compute, and tl.store the result.",
            "",
            "",
            f"def solution({_py_signature(problem)}) -> None:",
            "    BLOCK_SIZE = 1024",
            f"    grid = (triton.cdiv({first_output}.numel(), BLOCK_SIZE),)",
            f"    {_identifier(problem)}_kernel[grid]({call_args}, BLOCK_SIZE=BLOCK_SIZE)",
            "",
        ]
    )
