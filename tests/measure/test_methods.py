"""The timing methods and stopping criteria registries: every method answers the whole interface, the wire's
method names and the registry agree, and a name nothing registered fails with a message that lists the names."""

from __future__ import annotations

import dataclasses
import inspect
from typing import get_args

import pytest

from contract.names import Method
from contract.wire import MeasureConfig
from runner.timing.criteria import CRITERIA, StoppingCriterion, UnknownCriterionError, criterion_named, register
from runner.timing.measurement import make_criterion
from runner.timing.methods import (
    DEFAULT_FOR_DEVICE,
    METHODS,
    TimingMethod,
    UnknownMethodError,
    method_for,
    method_named,
)


def test_the_wire_method_names_and_the_registry_are_the_same_set() -> None:
    assert set(get_args(Method)) == set(METHODS)
    assert MeasureConfig().method in METHODS


@pytest.mark.parametrize("name", sorted(METHODS))
def test_every_method_answers_the_whole_interface(name: str) -> None:
    method = METHODS[name]
    assert isinstance(method, TimingMethod) and method.name == name
    for f in dataclasses.fields(TimingMethod):
        assert hasattr(method, f.name), f.name
    assert method.device in ("gpu", "cpu")
    # Its criterion is registered, and takes exactly the MeasureConfig fields the method passes it.
    accepted = set(inspect.signature(CRITERIA[method.criterion]).parameters)
    assert set(method.criterion_params) <= accepted
    assert set(method.criterion_params) <= set(MeasureConfig.model_fields)
    # A floor bounds a parameter the criterion is built from.
    assert {name for name, _ in method.criterion_floors} <= set(method.criterion_params)
    criterion = method.make_criterion(MeasureConfig(method=name))  # type: ignore[arg-type]
    assert isinstance(criterion, StoppingCriterion) and criterion.name == method.criterion
    assert method.sets_for(MeasureConfig(input_sets=7)) in (7, method.input_sets)
    # What a GPU sample does needs a GPU, and the checks come with the batches that feed them. The CPU's calibration
    # is known work in the calibration call (runner.timing.calibration.known_work), with no spin to cover.
    if not method.on_gpu:
        assert not (method.flushes_l2 or method.covering_spin)
    if method.calibration_check:
        assert method.checks_readings and (method.covering_spin or not method.on_gpu)


def test_the_measurement_loop_builds_the_criterion_its_method_names() -> None:
    arena = make_criterion(MeasureConfig(method="arena", target_rse=0.02, min_samples=12, min_time_s=0.5))
    assert arena.name == "median-rse"
    assert (arena.target_rse, arena.min_samples, arena.min_time_s) == (0.02, 12, 0.5)  # type: ignore[attr-defined]
    seed = make_criterion(MeasureConfig(method="seed", target_cv=0.03, min_samples=6))
    assert seed.name == "cv"
    assert (seed.target_cv, seed.min_samples) == (0.03, 6)  # type: ignore[attr-defined]


def test_the_cpu_method_stops_on_the_medians_error_and_never_under_its_clocks_floor() -> None:
    from runner.timing.methods.cpu import CPU_TARGET_RSE

    coarse = make_criterion(MeasureConfig(method="cpu", target_rse=0.05, min_samples=7))
    assert coarse.name == "median-rse"
    assert (coarse.target_rse, coarse.min_samples) == (0.05, 10)  # type: ignore[attr-defined]
    fine = make_criterion(MeasureConfig(method="cpu", target_rse=0.001))
    assert fine.target_rse == CPU_TARGET_RSE  # type: ignore[attr-defined]
    # A spread of 20 % around a steady median, as a shared CPU shows: the CV never falls under its target, and
    # the median's error does, well inside the sample cap.
    samples = [7e-6 * (1 + 0.2 * ((i * 7919) % 11 - 5) / 5) for i in range(1000)]
    seeds_rule = criterion_named("cv", target_cv=0.01, min_samples=5)
    taken = 0
    while not fine.is_finished() and taken < len(samples):
        fine.add(samples[taken])
        seeds_rule.add(samples[taken])
        taken += 1
    assert fine.is_finished() and taken < MeasureConfig().max_samples // 2
    assert not seeds_rule.is_finished()


def test_an_unknown_method_name_says_which_names_exist() -> None:
    with pytest.raises(UnknownMethodError, match=r"'nvbench'.*arena, cpu, seed"):
        method_named("nvbench")


def test_an_unknown_criterion_name_says_which_names_exist() -> None:
    with pytest.raises(UnknownCriterionError, match=r"'entropy'.*cv, median-rse"):
        criterion_named("entropy")


def test_a_criterion_parameter_it_does_not_take_is_refused_by_name() -> None:
    with pytest.raises(TypeError, match="target_rse"):
        criterion_named("cv", target_rse=0.01)


def test_a_criterion_name_can_be_registered_only_once() -> None:
    with pytest.raises(ValueError, match="already registered"):
        register("cv")(type("Again", (StoppingCriterion,), {"is_finished": lambda self: True}))
    assert CRITERIA["cv"].__name__ == "CoefficientOfVariation"


def test_a_method_of_the_other_device_kind_gives_way_to_that_kinds_default() -> None:
    assert method_for("seed", "gpu").name == "seed"
    assert method_for("cpu", "gpu") is DEFAULT_FOR_DEVICE["gpu"]
    assert method_for("arena", "cpu") is DEFAULT_FOR_DEVICE["cpu"]
    assert method_for("seed", "cpu").name == "cpu"


def test_configure_keeps_every_setting_but_the_ones_the_method_fixes() -> None:
    config = MeasureConfig(method="seed", input_sets=32, target_cv=0.02)
    seed = method_named("seed").configure(config)
    assert (seed.method, seed.input_sets, seed.target_cv) == ("seed", 1, 0.02)
    arena = method_named("arena").configure(MeasureConfig(method="cpu", input_sets=32))
    assert (arena.method, arena.input_sets) == ("arena", 32)


def test_the_judge_checks_each_method_by_its_own_tolerances() -> None:
    from runner.judge.judged_timer import JudgedTimer

    def timer(name: str) -> JudgedTimer:
        return JudgedTimer(link=None, buffers=None, verify=lambda _k: None, method=METHODS[name], seed=1, index=0)  # type: ignore[arg-type]

    # 100 µs reported as 4 µs: over both tolerances.
    assert timer("arena")._short(96e-6, 100e-6) and timer("cpu")._short(96e-6, 100e-6)
    # 4 µs reported as 0.04 µs slips under the CPU's absolute bound; only the CPU's gross-shortfall rule sees it.
    assert timer("cpu")._short(3.96e-6, 4e-6)
    assert not timer("arena")._short(3.96e-6, 4e-6)
    # The seed's readings are reproduced, not checked: no batch is asked for (there is no launcher here).
    assert not timer("seed")._short(96e-6, 100e-6)
    timer("seed").check()


def test_the_launcher_harness_refuses_a_method_name_it_does_not_know() -> None:
    from runner.launcher.harness import Harness

    harness = Harness("cpu")
    assert harness.method("arena") is METHODS["arena"]
    with pytest.raises(UnknownMethodError, match="'nvbench'"):
        harness.method("nvbench")
