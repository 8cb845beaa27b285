"""Tensara's semantics, not only its signatures: where each shape array lives, the output shapes of the reductions,
and the references that differ from the obvious formula (docs/tensara-semantics.md lists what was checked)."""

from __future__ import annotations

import pytest
import torch

from problems.base import Param
from problems.inputs import constant_arrays
from problems.registry import get_problem
from problems.starter import generate_starter, param_summary

# Tensara passed these shapes from a CPU tensor: its competitors read `shape[d]` on the host.
HOST_SHAPES = ("argmax", "argmin", "min-dim", "mse-loss")
DEVICE_SHAPES = ("max-dim", "mean-dim", "product-dim", "softmax", "sum-dim")


@pytest.mark.parametrize("slug", HOST_SHAPES + DEVICE_SHAPES)
def test_each_shape_array_declares_the_memory_tensara_used(slug: str) -> None:
    problem = get_problem(slug)
    (shape,) = [p for p in problem.parameters if p.role == "array"]
    assert shape.memory == ("host" if slug in HOST_SHAPES else "device")
    assert f"({shape.memory} memory)" in param_summary(shape, "float32")


@pytest.mark.parametrize("slug", HOST_SHAPES + DEVICE_SHAPES)
def test_a_host_array_is_a_cpu_tensor_whatever_the_device(slug: str) -> None:
    # "meta" stands in for the GPU: an array built on the call's device lands there, a host array never does.
    problem = get_problem(slug)
    case = problem.generate_test_cases("float32", "cpu")[0]
    extras = problem.get_extra_params(case)
    arrays = [v for v in constant_arrays(problem, extras, "meta") if isinstance(v, torch.Tensor)]
    assert len(arrays) == 1
    assert arrays[0].device.type == ("cpu" if slug in HOST_SHAPES else "meta")
    if slug in HOST_SHAPES:
        assert arrays[0].tolist() == next(v for v in extras if isinstance(v, list))


def test_the_cuda_starter_names_the_host_array() -> None:
    text = generate_starter(get_problem("mse-loss"), "cuda")
    assert "except `shape`, which is in host memory" in text
    assert "Every pointer is a device pointer." in generate_starter(get_problem("max-dim"), "cuda")


def test_only_a_constant_array_may_live_in_host_memory() -> None:
    with pytest.raises(ValueError, match="only a constant array"):
        Param("x", "input", memory="host")
    with pytest.raises(ValueError, match="memory must be"):
        Param("shape", "array", memory="pinned")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("slug", "keeps"),
    [
        ("max-dim", True),
        ("min-dim", True),
        ("mean-dim", True),
        ("sum-dim", True),
        ("product-dim", True),
        ("argmax", False),
        ("argmin", False),
    ],
)
def test_value_reductions_keep_the_reduced_dimension(slug: str, keeps: bool) -> None:
    problem = get_problem(slug)
    case = problem.generate_test_cases("float32", "cpu")[0]
    dim, *shape = case["dims"]
    expected = [1 if i == dim else s for i, s in enumerate(shape)] if keeps else shape[:dim] + shape[dim + 1 :]
    assert list(problem.buffer_shapes(case)["output"]) == expected
    x = torch.randn(shape, dtype=torch.float32)
    (out,) = problem.reference_outputs((x,), problem.get_extra_params(case))
    assert list(out.shape) == expected


def test_gelu_is_the_tanh_approximation() -> None:
    problem = get_problem("gelu")
    x = torch.linspace(-4, 4, 101, dtype=torch.float32).reshape(1, 101)
    (out,) = problem.reference_outputs((x,), [1, 101])
    tanh_form = torch.nn.functional.gelu(x.double(), approximate="tanh")
    assert torch.allclose(out, tanh_form, rtol=0, atol=1e-12)
    assert not problem.verify_result(out, torch.nn.functional.gelu(x), "float32")[0], "the erf form must fail"


def test_threshold_writes_255_above_and_0_elsewhere() -> None:
    problem = get_problem("threshold")
    x = torch.tensor([[10.0, 200.0, 127.5, 128.0, 250.0]])
    (out,) = problem.reference_outputs((x,), [127.5, 1, 5])
    assert out.tolist() == [[0.0, 255.0, 0.0, 255.0, 255.0]]


def test_edge_detect_scales_the_central_difference_to_255() -> None:
    problem = get_problem("edge-detect")
    x = torch.zeros(4, 5)
    x[:, 3] = 1.0  # a vertical step: interior pixels beside it see gx = 0.5
    (out,) = problem.reference_outputs((x,), [4, 5])
    assert float(out.max()) == 255.0
    assert out[0].abs().sum() == 0 and out[:, 0].abs().sum() == 0, "the border stays 0"
    assert out[1].tolist() == [0.0, 0.0, 255.0, 0.0, 0.0]


# -- test data that tests: promised garbage is poison ---------------------------------------------------------------


def test_decode_attention_cache_rows_past_each_length_are_nan() -> None:
    problem = get_problem("decode-attention")
    for case in problem.generate_test_cases("float32", "cpu"):
        _, k, v, lengths = case["create_inputs"](torch.Generator().manual_seed(7))
        cap = k.shape[2]
        for b, n in enumerate(lengths.tolist()):
            assert torch.isfinite(k[b, :, :n]).all() and torch.isfinite(v[b, :, :n]).all()
            assert torch.isnan(k[b, :, n:]).all() and torch.isnan(v[b, :, n:]).all()
        assert (lengths < cap).any(), f"{case['name']}: no sequence has padding"


def test_a_decode_kernel_that_reads_the_padding_fails() -> None:
    from tests.problems.selfcheck import SOLUTIONS_DIR, check_solution, python_call

    problem = get_problem("decode-attention")
    reads_padding = python_call(SOLUTIONS_DIR / "attention" / "decode_attention_reads_padding.py")
    result = check_solution(problem, reads_padding, "float32", "cpu")
    assert result.cases and not any(c.passed for c in result.cases)
    assert any("NaN" in c.message for c in result.cases), [c.message for c in result.cases]
    # Its only fault is reading the garbage: on a cache whose padding holds numbers, it gives the right answer.
    case = problem.generate_test_cases("float32", "cpu")[1]
    q, k, v, lengths = case["create_inputs"](torch.Generator().manual_seed(3))
    k, v = torch.nan_to_num(k, nan=0.5), torch.nan_to_num(v, nan=0.5)
    extras = problem.get_extra_params(case)
    (expected,) = problem.reference_outputs((q, k, v, lengths), extras)
    out = torch.empty(expected.shape, dtype=torch.float32)
    reads_padding([q, k, v, lengths, out, *extras])
    assert problem.verify_result(expected, out, "float32")[0]


# -- integer problems show their real dtypes ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("slug", "shown"),
    [
        ("vector-multiply-ff", "uint32"),
        ("poly-multiply-ff", "uint32"),
        ("ecc-point-negation", "uint64"),
        ("array-sort", "int32"),
        ("argmax", "float32"),
        ("matrix-multiplication", "float32"),
        ("nvfp4-gemm", "uint8/float8_e4m3/float16"),
    ],
)
def test_the_cli_names_the_real_data_types(slug: str, shown: str) -> None:
    from arena.render import result_data_types
    from problems.catalog import data_types, dtype_labels

    problem = get_problem(slug)
    assert data_types(problem, "float32") == shown
    assert dtype_labels(problem).split(", ")[0] == shown
    assert result_data_types(slug, "float32") == shown


def test_a_multi_dtype_problem_shows_each_key() -> None:
    from problems.catalog import dtype_labels

    assert dtype_labels(get_problem("gelu")) == "float32, float16, bfloat16"
