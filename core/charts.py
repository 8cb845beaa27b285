"""PNG charts of a result: each case's achieved GFLOPS against the device's roofline, or where a profile puts the call.

Shared by the front ends that draw them (the bot attaches them, the web leaderboard serves them), so it lives in
the core; the device's peaks come in as any object with `PeakRates`' attributes (`runner.gpus.GpuSpec` has
them), since the core sees the runner only through its API.

Figures are built with matplotlib's object API (a `Figure` on an Agg canvas, never pyplot's global state), so a
chart can be drawn in a worker thread (`asyncio.to_thread`) while the event loop goes on; one chart at a time,
since matplotlib's text layout is not thread-safe.
"""

from __future__ import annotations

import io
import math
import threading
from typing import Any, Protocol

from contract.wire import SubmissionResult


class PeakRates(Protocol):
    """A device's datasheet peaks, as `runner.gpus.GpuSpec` gives them."""

    @property
    def name(self) -> str: ...

    @property
    def bandwidth_gbps(self) -> float: ...

    def peak_for(self, dtype: str) -> float: ...


# Charts are drawn in worker threads, and matplotlib is not thread-safe: two results finishing at once made its
# mathtext parser fail on a tick label ("Expected end of text, found '$'").
_RENDER_LOCK = threading.Lock()
# A longer label pushes the plot out of the figure (tight_layout gives up); the embed names the case in full.
LABEL_CHARS = 40


def render_roofline_png(result: SubmissionResult, spec: PeakRates | None) -> bytes:
    """A log-log roofline: achieved GFLOPS per case at its arithmetic intensity (FLOP per byte moved).

    Problems scored in GB/s (no arithmetic) get a bar chart of achieved bandwidth against the peak instead.
    """
    with _RENDER_LOCK:
        return _render(result, spec)


def _render(result: SubmissionResult, spec: PeakRates | None) -> bytes:
    fig, ax = _figure()
    if result.score_metric == "gbps" or all(t.flops == 0 for t in result.timings):
        _bandwidth_bars(ax, result, spec)
    else:
        _roofline(ax, result, spec)
    return _png(fig, ax, result)


def _figure() -> tuple[Any, Any]:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(7.5, 4.5), dpi=110)
    FigureCanvasAgg(fig)
    return fig, fig.add_subplot()


def _png(fig: Any, ax: Any, result: SubmissionResult) -> bytes:
    ax.set_title(f"{result.problem_slug} · {result.dtype} · {result.language} · {result.device}", fontsize=10)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    return buf.getvalue()


def _roofline(ax: Any, result: SubmissionResult, spec: PeakRates | None) -> None:
    points = [(t.flops / t.bytes, t.gflops, t.name) for t in result.timings if t.bytes > 0 and t.flops > 0]
    _roof(ax, [(x, y) for x, y, _ in points], spec, result.dtype)
    ax.scatter([p[0] for p in points], [p[1] for p in points], color="#d62728", zorder=3, label="your kernel")
    for x, y, name in _labels(points):
        ax.annotate(name, (x, y), textcoords="offset points", xytext=(7, -3), fontsize=8)
    _log_axes(ax)
    ax.legend(fontsize=8, loc="lower right")


def render_profile_roofline_png(result: SubmissionResult, spec: PeakRates | None) -> bytes:
    """The profiled call on the roofline, where Nsight Compute measured it (DRAM bytes moved, FLOPs the SASS
    counters saw, over the kernels' summed duration), beside a hollow point where the problem's formulas put the
    same time. Problems without arithmetic get bars of bandwidth instead."""
    with _RENDER_LOCK:
        fig, ax = _figure()
        _profile_points(ax, result, spec)
        return _png(fig, ax, result)


def _profile_points(ax: Any, result: SubmissionResult, spec: PeakRates | None) -> None:
    report = result.profile
    assert report is not None, "only a result of mode `profile` has a profile to draw"
    seconds = report.duration_us / 1e6
    flops, nbytes = report.measured_flops or 0, report.measured_dram_bytes or 0
    measured = (flops / nbytes, flops / seconds / 1e9) if flops and nbytes and seconds > 0 else None
    formula_flops, formula_bytes = report.formula_flops, report.formula_bytes
    formula = (
        (formula_flops / formula_bytes, formula_flops / seconds / 1e9)
        if formula_flops and formula_bytes and seconds > 0
        else None
    )
    if measured is None and formula is None:
        _profile_bandwidth_bars(ax, result, spec)
        return
    _roof(ax, [p for p in (measured, formula) if p is not None], spec, result.dtype)
    if measured is not None:
        ax.scatter(*measured, color="#d62728", zorder=4, label="measured: counted FLOPs, DRAM bytes")
    if formula is not None:
        ax.scatter(
            *formula, facecolors="none", edgecolors="#d62728", linewidths=1.5, zorder=3, label="the problem's formulas"
        )
    label = report.case_name if len(report.case_name) <= LABEL_CHARS else report.case_name[: LABEL_CHARS - 1] + "…"
    ax.annotate(label, measured or formula, textcoords="offset points", xytext=(7, -3), fontsize=8)
    _log_axes(ax)
    # Below the axes, where it covers neither point wherever the kernel lands.
    ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=2, frameon=False)


def _profile_bandwidth_bars(ax: Any, result: SubmissionResult, spec: PeakRates | None) -> None:
    """A profile with no FLOPs to place: its DRAM bandwidth, measured and by the formula, against the peak."""
    report = result.profile
    assert report is not None
    seconds = report.duration_us / 1e6 or math.inf
    bars = {
        "measured": (report.measured_dram_bytes or 0) / seconds / 1e9,
        "formula": report.formula_bytes / seconds / 1e9,
    }
    ax.bar(list(bars), list(bars.values()), color=["#d62728", "#ffffff"], edgecolor="#d62728", label="GB/s")
    if spec is not None:
        ax.axhline(spec.bandwidth_gbps, color="#444444", linestyle="--", label=f"peak {spec.bandwidth_gbps:,.0f} GB/s")
    ax.set_ylabel("GB/s")
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(fontsize=8)


def _roof(ax: Any, points: list[tuple[float, float]], spec: PeakRates | None, dtype: str) -> None:
    """Log-log axes holding the device's roofline and `points` (intensity, GFLOPS)."""
    ax.set_xscale("log")
    ax.set_yscale("log")
    intensities = [p[0] for p in points] or [1.0]
    rates = [p[1] for p in points] or [1.0]
    lo, hi = min(intensities) / 4, max(intensities) * 4
    bottom, top = min(rates) / 3, max(rates) * 3
    if spec is not None:
        peak = spec.peak_for(dtype)
        ridge = peak / spec.bandwidth_gbps
        lo, hi = min(lo, ridge / 8), max(hi, ridge * 8)
        xs = [lo, ridge, hi]
        ys = [spec.bandwidth_gbps * lo, peak, peak]
        bottom, top = min(bottom, spec.bandwidth_gbps * lo), max(top, peak * 2)
        label = f"{spec.name} roofline ({spec.bandwidth_gbps:,.0f} GB/s, {peak:,.0f} GFLOPS)"
        ax.plot(xs, ys, color="#444444", linewidth=1.5, label=label)
        ax.axvline(ridge, color="#999999", linestyle=":", linewidth=1)
    ax.set_xlim(lo, hi)
    ax.set_ylim(bottom, top)


def _log_axes(ax: Any) -> None:
    ax.set_xlabel("arithmetic intensity (FLOP / byte)")
    ax.set_ylabel("GFLOPS")
    ax.grid(True, which="both", alpha=0.3)


def _labels(points: list[tuple[float, float, str]]) -> list[tuple[float, float, str]]:
    """One label per cluster of points that would overlap on the log-log plot (elementwise problems put every
    case at the same intensity), naming all of its cases."""
    clusters: list[tuple[float, float, list[str]]] = []
    for x, y, name in sorted(points, key=lambda p: -p[1]):
        for i, (cx, cy, names) in enumerate(clusters):
            if abs(math.log10(x / cx)) < 0.05 and abs(math.log10(y / cy)) < 0.1:
                clusters[i] = (cx, cy, [*names, name])
                break
        else:
            clusters.append((x, y, [name]))
    return [(x, y, ", ".join(names)) for x, y, names in clusters]


def _bandwidth_bars(ax: Any, result: SubmissionResult, spec: PeakRates | None) -> None:
    names = [t.name for t in result.timings]
    values = [t.gbps for t in result.timings]
    ax.bar(names, values, color="#1f77b4", label="achieved GB/s")
    if spec is not None:
        ax.axhline(spec.bandwidth_gbps, color="#444444", linestyle="--", label=f"peak {spec.bandwidth_gbps:,.0f} GB/s")
    ax.set_ylabel("GB/s")
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(fontsize=8)
