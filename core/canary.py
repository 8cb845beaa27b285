"""Judging canaries: whether one runner's canary timings drifted from its pool's. Pure functions, no store.

Every runner times a fixed set of reference kernels (`runner/daemon/canary_kernels.py`) when it joins its pool
and then periodically, and sends a `CanaryReport`. `canary_drift` compares it with the latest reports of the
pool's other runners of the same `set_version` and GPU type: per kernel, the ratio of the runner's median to
the pool's median of medians, the runner's own included, so that with three runners or more one drifted
runner cannot drag the baseline towards itself. A kernel whose ratio is outside its limit, slower or faster,
drifts the verdict.

A drifted verdict quarantines a runner only once a second measurement drifts too (`needs_confirmation`): a
healthy GPU measured straight after heavy work, or a CPU machine busy with other processes, can read slow once.
With too few peers the report is compared with the reference table of its GPU type, measured on the machines
named in docs/canaries.md, with a looser limit; without one the verdict is `no_baseline`. The thresholds and
the measured spread they come from are in docs/canaries.md.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from contract.wire import CanaryReport

DriftStatus = Literal["ok", "drifted", "no_baseline"]
Baseline = Literal["pool", "reference", "none"]
StoredVerdict = Literal["ok", "drifted", "needs_confirmation", "no_baseline"]

# docs/canaries.md: on idle H200s, single runs of the set strayed from their pool's median by at most 2.4 % (the
# memory-bound kernels), 5.4 % (the FP32 product) and 14.3 % (the FP16 product, whose clock the power limit sets).
GPU_LIMIT = 0.10
# CPU timings are the thread's CPU time, which time slices taken by other processes do not count, but a CPU pool
# mixes machines: only a gross slowdown is drift. On a busy 2-core machine the CPU-time medians moved by up to
# 1.44x, and the memory copy's, which shares the memory bus with every other process, by a factor of 2.02.
CPU_LIMIT = 1.0
KERNEL_LIMITS = {"matmul_fp16_4096": 0.20, "memcpy_16MiB": 2.0}
# Against the reference table, which comes from other machines and perhaps another torch and cuBLAS.
REFERENCE_EXTRA = 0.10
MIN_PEERS = 2

# The median of the run medians of 36 fresh-process runs on four idle GPUs of two machines, by (GPU type, set
# version), in µs (bench/results/canaries_gpu_h200.txt). No other GPU type has been measured yet.
REFERENCE_MEDIANS_US: dict[tuple[str, int], dict[str, float]] = {
    ("h100", 1): {  # one H100 80GB HBM3, 10 fresh-process runs: bench/results/canaries_gpu_h100.txt
        "add_fp32_2^24": 64.34,
        "matmul_fp16_4096": 184.60,
        "matmul_fp32_2048": 343.61,
        "copy_2^26_bytes": 44.01,
    },
    ("h200", 1): {
        "add_fp32_2^24": 47.87,
        "matmul_fp16_4096": 192.78,
        "matmul_fp32_2048": 348.26,
        "copy_2^26_bytes": 34.06,
    },
}


class CanaryThresholdsError(ValueError):
    """Thresholds that cannot judge anything; the message says which value to change."""


@dataclass(frozen=True)
class CanaryThresholds:
    """How far a runner's canary may stray from its baseline, as a fraction (0.2: 20 % slower, or 1/1.2 faster).

    `gpu` and `cpu` are the limits per device kind, `kernel_limits` overrides one kernel's (the sets' names differ),
    `reference_extra` widens every limit when the baseline is the reference table, and `min_peers` is the
    least number of other runners of the pool whose reports make a baseline.
    """

    gpu: float = GPU_LIMIT
    cpu: float = CPU_LIMIT
    kernel_limits: Mapping[str, float] = field(default_factory=lambda: dict(KERNEL_LIMITS))
    reference_extra: float = REFERENCE_EXTRA
    min_peers: int = MIN_PEERS

    def __post_init__(self) -> None:
        limits = {"gpu": self.gpu, "cpu": self.cpu, **self.kernel_limits}
        bad = {name: limit for name, limit in limits.items() if not limit > 0}
        if bad:
            raise CanaryThresholdsError(f"every limit must be a positive fraction (0.2 for 20 %); got {bad}")
        if self.reference_extra < 0:
            raise CanaryThresholdsError(f"reference_extra must be 0 or more, got {self.reference_extra}")
        if self.min_peers < 1:
            raise CanaryThresholdsError(f"min_peers must be at least 1, got {self.min_peers}")

    def limit_for(self, device: str, kernel: str) -> float:
        return self.kernel_limits.get(kernel, self.gpu if device == "gpu" else self.cpu)


@dataclass(frozen=True)
class KernelRatio:
    """One kernel of a report against its baseline."""

    name: str
    median_us: float
    baseline_us: float
    limit: float

    @property
    def ratio(self) -> float:
        return self.median_us / self.baseline_us

    @property
    def drifted(self) -> bool:
        return not 1 / (1 + self.limit) <= self.ratio <= 1 + self.limit

    def describe(self) -> str:
        """`matmul_fp16_4096 31 % slower (262 µs against 200 µs)`."""
        if self.ratio >= 1:
            how = f"{(self.ratio - 1) * 100:.0f} % slower"
        else:
            how = f"{(1 / self.ratio - 1) * 100:.0f} % faster"
        return f"{self.name} {how} ({self.median_us:.4g} µs against {self.baseline_us:.4g} µs)"


@dataclass(frozen=True)
class CanaryVerdict:
    """What the core makes of one canary report: a status, the kernels' ratios and a sentence for moderators."""

    status: DriftStatus
    baseline: Baseline
    peers: int  # the other runners of the pool whose reports were comparable
    kernels: tuple[KernelRatio, ...]
    needs_confirmation: bool
    message: str

    @property
    def drifted_kernels(self) -> tuple[KernelRatio, ...]:
        return tuple(k for k in self.kernels if k.drifted)

    @property
    def quarantines(self) -> bool:
        """Whether the runner should take no more ranked jobs: drifted, and confirmed by a second measurement."""
        return self.status == "drifted" and not self.needs_confirmation

    @property
    def stored(self) -> StoredVerdict:
        """The verdict as the store keeps it (runner_canaries.verdict): a first drift is `needs_confirmation`."""
        return "needs_confirmation" if self.status == "drifted" and self.needs_confirmation else self.status


def comparable_reports(report: CanaryReport, pool_reports: Sequence[CanaryReport]) -> list[CanaryReport]:
    """The reports of `pool_reports` measured the way `report` was: same set version, GPU type and device."""
    return [
        other
        for other in pool_reports
        if (other.set_version, other.gpu_type, other.device) == (report.set_version, report.gpu_type, report.device)
    ]


def pool_baselines_us(report: CanaryReport, peers: Sequence[CanaryReport]) -> dict[str, float]:
    """Per kernel of `report`, the median of the medians of `report` and its peers (those that timed it)."""
    baselines = {}
    for timing in report.timings:
        medians = [t.median_us for other in (report, *peers) for t in other.timings if t.name == timing.name]
        baselines[timing.name] = statistics.median(medians)
    return baselines


def canary_drift(
    report: CanaryReport,
    pool_reports: Sequence[CanaryReport],
    thresholds: CanaryThresholds = CanaryThresholds(),  # frozen, so one shared default is safe
    *,
    previous: CanaryVerdict | None = None,
) -> CanaryVerdict:
    """Judge `report` against the latest reports of its pool's other runners (`pool_reports`; reports of
    another set version, GPU type or device are ignored). `previous` is this runner's verdict just before: a
    drift it already showed confirms a new one."""
    peers = comparable_reports(report, pool_reports)
    pool = f"the {report.gpu_type} pool"
    version = f"set v{report.set_version}"
    extra = 0.0
    if len(peers) >= thresholds.min_peers:
        baseline: Baseline = "pool"
        baselines = pool_baselines_us(report, peers)
        against = f"{pool}'s median ({len(peers) + 1} runners, {version})"
    else:
        few = (
            f"only {len(peers)} other runner{'s' if len(peers) != 1 else ''} of {pool} reported canaries of "
            f"{version} (a baseline needs {thresholds.min_peers})"
        )
        reference = REFERENCE_MEDIANS_US.get((report.gpu_type, report.set_version))
        if reference is None:
            return CanaryVerdict(
                "no_baseline",
                "none",
                len(peers),
                (),
                False,
                f"No baseline: {few}, and there is no reference table for {report.gpu_type} {version}.",
            )
        baseline, baselines, extra = "reference", reference, thresholds.reference_extra
        against = f"the {report.gpu_type} reference table of {version}, as {few}"
    kernels = tuple(
        KernelRatio(t.name, t.median_us, baselines[t.name], thresholds.limit_for(report.device, t.name) + extra)
        for t in report.timings
        if t.name in baselines
    )
    if not kernels:
        return CanaryVerdict(
            "no_baseline", "none", len(peers), (), False, f"No baseline: no kernel of this report is in {against}."
        )
    drifted = [k for k in kernels if k.drifted]
    if not drifted:
        worst = max(kernels, key=lambda k: max(k.ratio, 1 / k.ratio))
        return CanaryVerdict(
            "ok",
            baseline,
            len(peers),
            kernels,
            False,
            f"Within limits of {against}; the farthest is {worst.describe()}, limit ±{worst.limit * 100:.0f} %.",
        )
    confirmed = previous is not None and previous.status == "drifted"
    listed = "; ".join(f"{k.describe()}, limit ±{k.limit * 100:.0f} %" for k in drifted)
    then = (
        "A second measurement drifted too: quarantine the runner, and re-run its ranked results since its last "
        "good canary."
        if confirmed
        else "A first drifted measurement: measure again once the slot has idled, and quarantine only if that "
        "drifts too."
    )
    return CanaryVerdict(
        "drifted", baseline, len(peers), kernels, not confirmed, f"Drifted from {against}: {listed}. {then}"
    )
