"""The GPU registry: one entry per model, and every lookup (board key, old slug, device name) finds the same one."""

from __future__ import annotations

import re

import pytest

from bot.bot_settings import GPU_TYPE_PATTERN, BotSettings, DeviceSpec
from runner.daemon.slots import cpu_slot, gpu_slots, slots_gpu_type
from runner.gpus import (
    CPU,
    GPU_MODELS,
    GPU_SPECS,
    canonical_gpu_type,
    gpu_type_for,
    model_for,
    nvcc_arch,
    same_gpu_type,
    spec_for,
)
from runner.host.compile import compile_flags, cuda_arch
from runner.host.devices import Gpu
from runner.timing.calibration import EMPTY_KERNEL_NCU_US, event_overhead_s

H100_NAME = "NVIDIA H100 80GB HBM3"
H200_NAME = "NVIDIA H200"


@pytest.mark.parametrize("model", GPU_MODELS, ids=lambda m: m.key)
def test_every_entry_is_consistent(model):
    # Each spelling is a valid runner gpu_type, and names this entry and no other.
    for label in model.labels():
        assert re.match(GPU_TYPE_PATTERN, label), label
        assert model_for(label) is model
    for name in model.device_names:
        assert model_for(name) is model
        assert gpu_type_for(name) == model.key
    assert model.display_name and model.device_names
    # A model with CUDA has both its capability and its nvcc flag, and the flag is that capability's.
    assert (model.capability is None) == (model.arch is None)
    if model.capability is not None:
        assert model.arch is not None and model.arch.startswith(f"sm_{model.capability[0]}{model.capability[1]}")
        assert nvcc_arch(model.capability) == model.arch
    if model.spec is not None:
        assert model.spec.name in model.device_names
        assert model.spec.bandwidth_gbps > 0 and "float32" in model.spec.peak_gflops
    # A calibration figure says where it was measured.
    assert (model.empty_kernel_ncu_us is None) == (model.calibration_source is None)


def test_keys_aliases_and_device_names_are_unique_across_the_registry():
    labels = [label for model in GPU_MODELS for label in model.labels()]
    names = [name for model in GPU_MODELS for name in model.device_names]
    assert len(labels) == len(set(labels))
    assert len(names) == len(set(names))


def test_h100_and_h200_device_names_map_to_their_board_keys():
    assert gpu_type_for(H100_NAME) == "h100"
    assert gpu_type_for(H200_NAME) == "h200"
    # A variant whose name extends a known one is that model until it gets an entry of its own.
    assert gpu_type_for("NVIDIA H200 NVL") == "h200"


def test_the_old_slug_of_stored_boards_finds_the_same_model_and_peaks():
    assert model_for("h100-80gb-hbm3") is model_for("h100") is model_for(H100_NAME)
    assert spec_for("h100-80gb-hbm3") is spec_for("h100") is spec_for(H100_NAME) is GPU_SPECS[H100_NAME]
    assert spec_for("h200") is GPU_SPECS[H200_NAME]
    assert canonical_gpu_type("h100-80gb-hbm3") == "h100"
    assert same_gpu_type("h100-80gb-hbm3", H100_NAME)
    assert not same_gpu_type("h100", "h200")


def test_datasheet_peaks_are_unchanged():
    h100, h200 = spec_for(H100_NAME), spec_for(H200_NAME)
    assert h100 is not None and h200 is not None
    assert h100.bandwidth_gbps == 3350.0 and h200.bandwidth_gbps == 4800.0
    for spec in (h100, h200):
        assert spec.peak_gflops == {"float32": 67_000.0, "float16": 989_000.0, "bfloat16": 989_000.0}
        assert spec.ceiling_gflops == {"float32": 494_700.0, "float16": 989_400.0, "bfloat16": 989_400.0}


def test_cpu_runners_have_the_cpu_entry_with_no_peaks_nvcc_or_calibration():
    assert gpu_type_for("CPU (x86_64)") == "cpu" == CPU.key
    assert model_for("cpu") is CPU
    assert spec_for("cpu") is None and spec_for("CPU (aarch64)") is None
    assert CPU.arch is None and CPU.empty_kernel_ncu_us is None


def test_an_unknown_gpu_gets_a_slug_of_its_name_and_no_peaks():
    assert model_for("NVIDIA A100-SXM4-80GB") is None
    assert gpu_type_for("NVIDIA A100-SXM4-80GB") == "a100-sxm4-80gb"
    assert spec_for("NVIDIA A100-SXM4-80GB") is None
    assert re.match(GPU_TYPE_PATTERN, gpu_type_for("NVIDIA RTX 6000 Ada Generation"))
    # Whatever a driver reports, the lookup answers instead of raising.
    assert gpu_type_for("") == "gpu"
    assert gpu_type_for("¿?" * 80) == "gpu"
    assert len(gpu_type_for("X" * 200)) <= 64
    assert same_gpu_type("a100-sxm4-80gb", "NVIDIA A100-SXM4-80GB")


def test_compile_flags_for_hopper_build_sm_90a_machine_code_in_one_pass():
    assert cuda_arch((9, 0)) == "sm_90a"
    assert compile_flags(cuda_arch((9, 0))) == [
        "-O3",
        "-std=c++17",
        "--shared",
        "-Xcompiler",
        "-fPIC",
        "-lineinfo",
        "--threads",
        "2",
        "-gencode=arch=compute_90a,code=sm_90a",
    ]


@pytest.mark.parametrize(
    ("capability", "arch"),
    [
        (None, "sm_90"),
        ((9, 0), "sm_90a"),
        ((10, 0), "sm_100a"),
        ((8, 0), "sm_80"),
        ((8, 9), "sm_89"),
        ((12, 0), "sm_120"),
    ],
)
def test_capabilities_without_an_entry_keep_the_generic_rule(capability, arch):
    assert cuda_arch(capability) == arch


def test_calibration_figures_are_unchanged_and_apply_to_exact_names_only():
    assert EMPTY_KERNEL_NCU_US == {H100_NAME: 2.11, H200_NAME: 1.34}
    assert event_overhead_s(3.11e-6, H100_NAME) == pytest.approx(1e-6)
    assert event_overhead_s(2.34e-6, H200_NAME) == pytest.approx(1e-6)
    assert event_overhead_s(10e-6, H100_NAME) == pytest.approx(3e-6)  # capped
    # A variant's clocks differ from the part the figure was measured on: no correction.
    assert event_overhead_s(3e-6, "NVIDIA H200 NVL") == 0.0
    assert event_overhead_s(3e-6, "h100") == 0.0


HOST = [
    Gpu(0, "GPU-0", H100_NAME, (9, 0), "580.159.04", 81559),
    Gpu(1, "GPU-1", H200_NAME, (9, 0), "580.159.04", 143771),
]


def test_a_daemon_serves_the_one_gpu_type_of_its_slots():
    assert slots_gpu_type([cpu_slot()]) == "cpu"
    assert slots_gpu_type(gpu_slots(HOST, ["0"])) == "h100"
    assert [slot.gpu_type for slot in gpu_slots(HOST, None)] == ["h100", "h200"]
    # Slots of two models serve no single board: the daemon says so, and the bot refuses it.
    assert slots_gpu_type(gpu_slots(HOST, None)) is None


def test_the_bot_finds_peaks_by_board_key_old_slug_or_device_name_and_its_overrides_come_first():
    settings = BotSettings(
        token="t",
        device_specs={"NVIDIA A100": DeviceSpec(bandwidth_gbps=2039.0, peak_gflops={"float32": 19_500.0})},
    )
    assert settings.spec_for("h100") is settings.spec_for("h100-80gb-hbm3") is GPU_SPECS[H100_NAME]
    a100 = settings.spec_for("NVIDIA A100-SXM4-80GB")
    assert a100 is not None and a100.bandwidth_gbps == 2039.0
    assert settings.spec_for("NVIDIA L4") is None
