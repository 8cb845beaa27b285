"""The honest corpus: code that real competitors write, which the judge must always accept.

Every entry here must pass, on each device it names, with the host quiet or loaded. They are the counterexamples
to the integrity checks of runner/judge/judged_timer.py: a check that rejects one of them accuses an honest user,
which is the worst bug the platform can ship. `test_honest.py` runs them through the real runner (the CPU ones in
CI, the GPU ones on a GPU), and `bench/false_rejections.py` runs them with CPU burners loading the host.

Entries reuse the adversarial suite's `Entry` (cheat class "control", expected verdict "passed"), so both corpora
run through the same `SuiteRunner`.
"""

from __future__ import annotations

from pathlib import Path

from tests.adversarial.suite import CONTROL, PASSED, Device, Entry

HONEST_SUBMISSIONS = Path(__file__).resolve().parent / "submissions"
BOTH: tuple[Device, ...] = ("cpu", "gpu")
GPU: tuple[Device, ...] = ("gpu",)
CPU: tuple[Device, ...] = ("cpu",)

# (file, problem, devices, what it exercises): one line per pattern.
PATTERNS: tuple[tuple[str, str, tuple[Device, ...], str], ...] = (
    ("py_item_check.py", "vector_add", BOTH, "a device-to-host sync (.item()) inside the call"),
    ("py_cpu_copy.py", "vector_add", BOTH, "a blocking copy to the host (.cpu().tolist())"),
    ("py_alloc_inside.py", "vector_add", BOTH, "allocation inside the call"),
    ("py_many_small_ops.py", "vector_add", BOTH, "many small launches"),
    ("py_host_loop_rows.py", "softmax", BOTH, "a host-side loop over blocks of softmax rows"),
    ("py_manual_softmax.py", "softmax", BOTH, "a chain of in-place operations"),
    ("py_numpy_matmul.py", "matrix-multiplication", CPU, "NumPy on tensor views"),
    ("py_einsum_matmul.py", "matrix-multiplication", BOTH, "einsum and a copy"),
    ("py_no_grad.py", "vector_add", BOTH, "a no_grad context inside the call"),
    ("py_thread_pool_joined.py", "vector_add", BOTH, "a thread pool, every task awaited"),
    ("py_thread_per_call_joined.py", "vector_add", BOTH, "a thread per call, joined"),
    ("py_workspace_cache.py", "vector_add", BOTH, "a workspace reused across calls"),
    ("py_write_twice.py", "vector_add", BOTH, "the output written twice"),
    ("py_exception_inside.py", "vector_add", BOTH, "an exception raised and caught"),
    ("py_print_first_call.py", "vector_add", BOTH, "output printed on the first call"),
    ("py_print_every_call.py", "vector_add", BOTH, "output printed on every call, timed ones included"),
    ("py_renamed_params.py", "vector_add", BOTH, "parameter names of its own"),
    ("py_star_args.py", "vector_add", BOTH, "*args unpacked in the body"),
    ("py_defaulted_extra.py", "vector_add", BOTH, "an extra parameter and a keyword-only one, both with defaults"),
    ("py_swapped_inputs.py", "vector_add", BOTH, "the problem's input names swapped in a commutative sum"),
    ("py_torch_compile.py", "vector_add", BOTH, "torch.compile on the first call"),
    ("py_leaky_relu.py", "leaky-relu", BOTH, "a float parameter"),
    ("py_reduction_item.py", "reduction_sum", BOTH, "a scalar read back with .item() and written with fill_"),
    ("py_prefix_sum.py", "prefix_sum", BOTH, "cumsum"),
    ("py_layernorm.py", "layer-norm", BOTH, "functional layer norm"),
    ("py_conv2d.py", "conv2d-nchw", BOTH, "a lazily created cuDNN handle"),
    ("py_transpose.py", "transpose", BOTH, "a copy from a strided view"),
    ("py_matrix_vector.py", "matrix_vector", BOTH, "torch.mv"),
    ("py_gemm_relu.py", "gemm-relu", BOTH, "matmul, then bias and ReLU in place (lazy cuBLAS handle)"),
    ("py_relu_clamp.py", "relu", BOTH, "clamp_min"),
    ("py_gc_first_call.py", "vector_add", BOTH, "gc.collect() on the first call"),
    ("py_matmul_k_chunks.py", "matrix-multiplication", BOTH, "addmm over chunks of K"),
    ("py_unrelated_random.py", "vector_add", BOTH, "random numbers drawn and unused"),
    ("py_numpy_softmax.py", "softmax", CPU, "NumPy in place on tensor views"),
    ("py_cuda_synchronize.py", "vector_add", GPU, "torch.cuda.synchronize() inside the call"),
    ("py_matmul_item.py", "matrix-multiplication", GPU, "matmul checked with .item()"),
    ("py_side_stream_joined.py", "vector_add", GPU, "a side stream joined back with wait_stream"),
    ("py_cuda_graph_replay.py", "vector_add", GPU, "a CUDA graph captured on first use and replayed"),
    ("py_triton_autotune.py", "vector_add", GPU, "Triton autotune on the first call"),
    ("py_triton_matmul_tf32x3.py", "matrix-multiplication", GPU, "Triton tl.dot in 3xTF32 (the board admits TF32)"),
    ("py_own_events.py", "vector_add", GPU, "its own CUDA events, synchronised"),
    ("py_cupy_kernel.py", "vector_add", GPU, "a CuPy raw kernel"),
    ("cu_device_sync.cu", "vector_add", GPU, "cudaDeviceSynchronize() after the launch"),
    ("cu_stream_sync.cu", "vector_add", GPU, "cudaStreamSynchronize(0) after the launch"),
    ("cu_error_check.cu", "vector_add", GPU, "error checks with a synchronise"),
    ("cu_malloc_free_inside.cu", "vector_add", GPU, "cudaMalloc/cudaMemcpy/cudaFree in every call"),
    ("cu_malloc_async.cu", "vector_add", GPU, "stream-ordered allocation"),
    ("cu_streams_joined_events.cu", "vector_add", GPU, "two non-blocking streams joined with events"),
    ("cu_graph_first_call.cu", "vector_add", GPU, "a CUDA graph built on first use and launched"),
    ("cu_many_launches.cu", "vector_add", GPU, "sixteen launches per call"),
    ("cu_memset_then_accumulate.cu", "vector_add", GPU, "cudaMemsetAsync then accumulate"),
    ("cu_occupancy_api.cu", "vector_add", GPU, "the occupancy API on the first call"),
    ("cu_per_thread_stream_sync.cu", "vector_add", GPU, "the per-thread stream, synchronised"),
    ("cu_static_workspace.cu", "vector_add", GPU, "a workspace allocated once"),
    ("cu_printf_first_call.cu", "vector_add", GPU, "host printf on the first call"),
    ("cu_host_final_sum.cu", "reduction_sum", GPU, "blocking copies and host arithmetic"),
    ("cu_dynamic_smem_atomic.cu", "reduction_sum", GPU, "dynamic shared memory and atomics"),
    ("cu_softmax_row_blocks.cu", "softmax", GPU, "a host loop of launches over blocks of slices"),
    ("cu_cublas_sgemm.cu", "matrix-multiplication", GPU, "an .so that calls cuBLAS"),
    ("cu_matmul_wmma_tf32.cu", "matrix-multiplication", GPU, "TF32 tensor cores through WMMA (the board admits TF32)"),
    ("py_ntt_poly_multiply.py", "poly-multiply-ff", BOTH, "NTTs over three primes: less work than the FLOP formula"),
    ("cu_ntt_poly_multiply.cu", "poly-multiply-ff", GPU, "NTTs in four launches, shared-memory stages, Garner CRT"),
    *(
        (file, "vector_add", devices, f"host-bound: {what}")
        for file, devices, what in (
            ("py_host_threads_quarters.py", BOTH, "four Python threads, each a quarter, joined inside the call"),
            ("py_slice_loop_64.py", BOTH, "a Python loop of 64 slice launches"),
            ("py_numpy_preprocess.py", BOTH, "NumPy works out the chunks before each call's launches"),
            ("py_pinned_staging.py", BOTH, "inputs staged through pinned host memory and added on the host"),
            ("cu_std_thread_joined.cu", GPU, "four std::threads launch a quarter each, joined"),
            ("cu_host_loop_512.cu", GPU, "a host loop of 512 launches"),
            ("cu_event_synchronize.cu", GPU, "cudaEventSynchronize inside the call"),
            ("cu_pinned_staging.cu", GPU, "inputs staged through pinned host memory and added on the host"),
        )
    ),
)
# The host-bound class (issue: the judge times every honest call at what it really costs): calls whose host part
# outlasts their GPU work. The torch.compile entry above belongs to it too. `bench/host_bound.py` sets each one's
# reported time beside an outside timing.
HOST_BOUND_FILES: tuple[str, ...] = (
    *(f for f, _, _, what in PATTERNS if what.startswith("host-bound: ")),
    "py_torch_compile.py",
)


def _name(file: str, device: Device) -> str:
    stem = file.rsplit(".", 1)[0]
    return f"honest_{stem}" + ("_gpu" if device == "gpu" and not file.endswith(".cu") else "")


def _entry(file: str, problem: str, device: Device) -> Entry:
    language = "cuda" if file.endswith(".cu") else ("triton" if "triton" in file else "python")
    return Entry(
        name=_name(file, device),
        file=file,
        problem=problem,
        cheat_class=CONTROL,
        device=device,
        expected=frozenset({PASSED}),
        language=language,
        directory=HONEST_SUBMISSIONS,
    )


HONEST: tuple[Entry, ...] = tuple(
    _entry(file, problem, device) for file, problem, devices, _ in PATTERNS for device in devices
)
BY_NAME: dict[str, Entry] = {entry.name: entry for entry in HONEST}
DESCRIPTIONS: dict[str, str] = {_name(file, device): what for file, _, devices, what in PATTERNS for device in devices}


def honest_for(device: str = "all", names: tuple[str, ...] | list[str] = ()) -> list[Entry]:
    unknown = [name for name in names if name not in BY_NAME]
    if unknown:
        raise KeyError(f"no such honest entries: {', '.join(unknown)}")
    return [e for e in HONEST if (device == "all" or e.device == device) and (not names or e.name in names)]
