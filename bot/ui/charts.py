"""PNG charts of a result: each case's achieved GFLOPS against the GPU's roofline."""

from __future__ import annotations

import io

from bot.core.gpus import GpuSpec
from runner.api import SubmissionResult


def render_roofline_png(result: SubmissionResult, spec: GpuSpec | None) -> bytes:
    """A log-log roofline: achieved GFLOPS per case at its arithmetic intensity (FLOP per byte moved).

    Problems scored in GB/s (no arithmetic) get a bar chart of achieved bandwidth against the peak instead.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7.5, 4.5), dpi=110)
    try:
        if result.score_metric == "gbps" or all(t.flops == 0 for t in result.timings):
            _bandwidth_bars(ax, result, spec)
        else:
            _roofline(ax, result, spec)
        ax.set_title(f"{result.problem_slug} · {result.dtype} · {result.language} · {result.device}", fontsize=10)
        fig.tight_layout()
        buf = io.BytesIO()
        fig.savefig(buf, format="png")
        return buf.getvalue()
    finally:
        plt.close(fig)


def _roofline(ax: object, result: SubmissionResult, spec: GpuSpec | None) -> None:
    points = [(t.flops / t.bytes, t.gflops, t.name) for t in result.timings if t.bytes > 0 and t.flops > 0]
    intensities = [p[0] for p in points] or [1.0]
    lo, hi = min(intensities) / 4, max(intensities) * 4
    if spec is not None:
        peak = spec.peak_for(result.dtype)
        ridge = peak / spec.bandwidth_gbps
        lo, hi = min(lo, ridge / 8), max(hi, ridge * 8)
        xs = [lo, ridge, hi]
        ys = [spec.bandwidth_gbps * lo, peak, peak]
        ax.plot(
            xs,
            ys,
            color="#444444",
            linewidth=1.5,
            label=f"roofline ({spec.bandwidth_gbps:,.0f} GB/s, {peak:,.0f} GFLOPS)",
        )
    ax.scatter([p[0] for p in points], [p[1] for p in points], color="#d62728", zorder=3, label="your kernel")
    for x, y, name in points:
        ax.annotate(name, (x, y), textcoords="offset points", xytext=(5, -12), fontsize=8)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("arithmetic intensity (FLOP / byte)")
    ax.set_ylabel("GFLOPS")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8, loc="upper left")


def _bandwidth_bars(ax: object, result: SubmissionResult, spec: GpuSpec | None) -> None:
    names = [t.name for t in result.timings]
    values = [t.gbps for t in result.timings]
    ax.bar(names, values, color="#1f77b4", label="achieved GB/s")
    if spec is not None:
        ax.axhline(spec.bandwidth_gbps, color="#444444", linestyle="--", label=f"peak {spec.bandwidth_gbps:,.0f} GB/s")
    ax.set_ylabel("GB/s")
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(fontsize=8)
