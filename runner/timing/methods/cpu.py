"""`cpu`: a monotonic clock around the call, for CPU-only runners (development), stopped on the median's relative
error as the GPU's `arena` method is. No events, flush or spin; the readings still face the judge's wall clock."""

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

# The seed's stop (the CV of the samples under `target_cv`) measures the spread, which does not shrink with more
# samples: on a CPU shared with the judge it was never met, and every case ran to the 1000-sample cap (vector_add's
# three cases on a quiet 2-core host: CV 18-31 %, 5.8 s of a 9.2 s job). The median's error does shrink, but a
# CPU's clock and scheduler move a case's median by 10-20 % from one run to the next (the same host: 6.1-7.2 µs at
# n=7, 48-78 µs at n=65539), so a target under 2 % only buys samples: at the GPU's 0.5 % the two small cases took
# 350-930 samples, at 2 % 41-192. The n=65539 case reads bimodal on that host (CV 35-87 %) and reached the cap in 5
# of 6 runs at 2 %: the cap, not the target, still bounds such a case.
CPU_TARGET_RSE = 0.02

CPU = TimingMethod(
    name="cpu",
    device="cpu",
    criterion="median-rse",
    criterion_params=("target_rse", "min_samples", "min_time_s"),
    criterion_floors=(("target_rse", CPU_TARGET_RSE),),
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
