"""`seed`: the seed project's loop, kept for comparison. Synchronise, start event, call, stop event, synchronise, on
one input set, with a warm L2; stop once the CV of per-sample GFLOPS is under `target_cv`. The readings are not
checked: the seed's numbers are reproduced as the seed took them."""

from __future__ import annotations

from runner.timing.methods.base import TimingMethod

SEED = TimingMethod(
    name="seed",
    device="gpu",
    criterion="cv",
    criterion_params=("target_cv", "min_samples"),
    criterion_floors=(),
    flushes_l2=False,
    covering_spin=False,
    syncs_before_sample=True,
    calibration_check=False,
    wall_tolerance=None,
    gross_shortfall=None,
    event_overhead_correction=False,
    input_sets=1,
    seed_warmup=True,
    batch_budget_s=20e-3,
)
