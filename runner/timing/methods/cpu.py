"""`cpu`: the seed's stopping rule with a monotonic clock around the call, for CPU-only runners (development). No
events, flush or spin; the readings still face the judge's wall clock."""

from __future__ import annotations

from runner.timing.methods.base import TimingMethod

# On the CPU the two processes share cores and there is no spin to hide host noise behind, so the wall-clock
# tolerance is wider than on the GPU; CPU runs are for development.
WALL_TOLERANCE = (0.25, 20e-6)
# Readings under this fraction of the judge's estimate, short by more than this many seconds, are a lie whatever
# the absolute bound says: an honest call's reading is most of what the clock sees (the harness's own per-call
# overhead is about a microsecond).
GROSS_SHORTFALL = (0.10, 3e-6)

# The CPU keeps 20 ms batches: its calls share cores with the judge, and a wider batch averages that away.
BATCH_BUDGET_S = 20e-3

CPU = TimingMethod(
    name="cpu",
    device="cpu",
    criterion="cv",
    criterion_params=("target_cv", "min_samples"),
    flushes_l2=False,
    covering_spin=False,
    syncs_before_sample=False,
    calibration_check=True,
    wall_tolerance=WALL_TOLERANCE,
    gross_shortfall=GROSS_SHORTFALL,
    event_overhead_correction=False,
    input_sets=None,
    seed_warmup=False,
    batch_budget_s=BATCH_BUDGET_S,
)
