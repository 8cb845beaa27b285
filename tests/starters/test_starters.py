"""Every starter compiles: nvcc for CUDA (and its symbol loads with the declared argtypes), compile() for Python."""

from __future__ import annotations

import ctypes
import shutil
import subprocess
from pathlib import Path

import pytest

from problems.base import C_TYPES
from problems.registry import builtin_problems
from problems.starter import STARTER_LANGUAGES, generate_starter, starter_filename
from runner.host.compile import compile_flags

PROBLEMS = builtin_problems()
PAIRS = [(slug, dtype) for slug, problem in PROBLEMS.items() for dtype in problem.dtypes]


@pytest.mark.parametrize("language", ["python", "triton"])
@pytest.mark.parametrize(("slug", "dtype"), PAIRS)
def test_python_starter_compiles_and_defines_solution_with_signature_names(slug: str, dtype: str, language: str):
    problem = PROBLEMS[slug]
    source = generate_starter(problem, language, dtype)
    code = compile(source, starter_filename(problem, language), "exec")
    names = [p.name for p in problem.ordered_parameters()]
    assert "solution" in code.co_names
    assert f"def solution({names[0]}: torch.Tensor" in source
    for name in names:
        assert name in source


def test_starter_rejects_an_unsupported_dtype():
    problem = next((p for p in PROBLEMS.values() if len(p.dtypes) < 3), None)
    if problem is None:
        pytest.skip("every problem supports every dtype")
    missing = next(d for d in ("float32", "float16", "bfloat16") if d not in problem.dtypes)
    with pytest.raises(ValueError, match="does not support"):
        generate_starter(problem, "cuda", missing)


@pytest.mark.parametrize(("slug", "dtype"), PAIRS)
def test_cuda_starter_uses_the_seed_signature_form(slug: str, dtype: str):
    problem = PROBLEMS[slug]
    source = generate_starter(problem, "cuda", dtype)
    signature = next(line for line in source.splitlines() if line.startswith('extern "C" void solution('))
    params = [p.strip() for p in signature[len('extern "C" void solution(') :].rstrip(") {").split(",")]
    ordered = problem.ordered_parameters()
    assert len(params) == len(ordered)
    for text, param in zip(params, ordered, strict=True):
        c_type = C_TYPES[param.element_type(dtype)]  # type: ignore[arg-type]
        if param.role in ("input", "array"):
            assert text == f"const {c_type}* {param.name}"
        elif param.role == "output":
            assert text == f"{c_type}* {param.name}"
        else:
            assert text == f"{param.scalar_type} {param.name}"


def _build(source: str, out_dir: Path) -> tuple[int, str, Path]:
    out_dir.mkdir(parents=True)
    (out_dir / "starters.cu").write_text(source)
    target = out_dir / "starters.so"
    proc = subprocess.run(
        ["nvcc", *compile_flags("sm_80"), "-o", str(target), "starters.cu"],
        cwd=out_dir,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    return proc.returncode, proc.stdout + proc.stderr, target


@pytest.mark.nvcc
@pytest.mark.timeout(900)
def test_every_cuda_starter_compiles_and_its_symbol_loads_with_declared_argtypes(tmp_path: Path):
    # Every starter goes into one translation unit, each with `solution` renamed by the preprocessor: one nvcc run
    # instead of one per problem and dtype (hundreds), with each starter's own text compiled as written.
    assert shutil.which("nvcc")
    names = {key: f"solution_{i}" for i, key in enumerate(PAIRS)}
    parts = [
        f"#define solution {names[(slug, dtype)]}\n{generate_starter(PROBLEMS[slug], 'cuda', dtype)}\n#undef solution\n"
        for slug, dtype in PAIRS
    ]
    rc, log, library = _build("\n".join(parts), tmp_path / "all")
    assert rc == 0, log[-4000:]
    lib = ctypes.CDLL(str(library))
    for (slug, dtype), name in names.items():
        fn = getattr(lib, name)
        signature = PROBLEMS[slug].get_function_signature(dtype)
        fn.argtypes = signature["argtypes"]
        fn.restype = signature["restype"]
        assert len(fn.argtypes) == len(PROBLEMS[slug].parameters)


def test_every_language_has_a_starter():
    assert set(STARTER_LANGUAGES) == {"cuda", "python", "triton"}
