"""PNG charts of a result: each case's achieved GFLOPS against the device's roofline.

Figures are built with matplotlib's object API (a `Figure` on an Agg canvas, never pyplot's global state),
so a chart can be drawn in a worker thread (`asyncio.to_thread`) while the bot's loop goes on; one chart at a
time, since matplotlib's text layout is not thread-safe.
"""

from __future__ import annotations

import io
import math
import threading
from typing import Any

from runner.api import SubmissionResult
from runner.gpus import GpuSpec

# Charts are drawn in worker threads, and matplotlib is not thread-safe: two results finishing at once made its
# mathtext parser fail on a tick label ("Expected end of text, found '$'").
_RENDER_LOCK = threading.Lock()


def render_roofline_png(result: SubmissionResult, spec: GpuSpec | None) -> bytes:
    """A log-log roofline: achieved GFLOPS per case at its arithmetic intensity (FLOP per byte moved).

    Problems scored in GB/s (no arithmetic) get a bar chart of achieved bandwidth against the peak instead.
    """
    with _RENDER_LOCK:
        return _render(result, spec)


def _render(result: SubmissionResult, spec: GpuSpec | None) -> bytes:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(7.5, 4.5), dpi=110)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    if result.score_metric == "gbps" or all(t.flops == 0 for t in result.timings):
        _bandwidth_bars(ax, result, spec)
    else:
        _roofline(ax, result, spec)
    ax.set_title(f"{result.problem_slug} · {result.dtype} · {result.language} · {result.device}", fontsize=10)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    return buf.getvalue()


def _roofline(ax: Any, result: SubmissionResult, spec: GpuSpec | None) -> None:
    points = [(t.flops / t.bytes, t.gflops, t.name) for t in result.timings if t.bytes > 0 and t.flops > 0]
    intensities = [p[0] for p in points] or [1.0]
    rates = [p[1] for p in points] or [1.0]
    lo, hi = min(intensities) / 4, max(intensities) * 4
    bottom, top = min(rates) / 3, max(rates) * 3
    if spec is not None:
        peak = spec.peak_for(result.dtype)
        ridge = peak / spec.bandwidth_gbps
        lo, hi = min(lo, ridge / 8), max(hi, ridge * 8)
        xs = [lo, ridge, hi]
        ys = [spec.bandwidth_gbps * lo, peak, peak]
        bottom, top = min(bottom, spec.bandwidth_gbps * lo), max(top, peak * 2)
        label = f"{spec.name} roofline ({spec.bandwidth_gbps:,.0f} GB/s, {peak:,.0f} GFLOPS)"
        ax.plot(xs, ys, color="#444444", linewidth=1.5, label=label)
        ax.axvline(ridge, color="#999999", linestyle=":", linewidth=1)
    ax.scatter([p[0] for p in points], [p[1] for p in points], color="#d62728", zorder=3, label="your kernel")
    for x, y, name in _labels(points):
        ax.annotate(name, (x, y), textcoords="offset points", xytext=(7, -3), fontsize=8)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(lo, hi)
    ax.set_ylim(bottom, top)
    ax.set_xlabel("arithmetic intensity (FLOP / byte)")
    ax.set_ylabel("GFLOPS")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8, loc="lower right")


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


def _bandwidth_bars(ax: Any, result: SubmissionResult, spec: GpuSpec | None) -> None:
    names = [t.name for t in result.timings]
    values = [t.gbps for t in result.timings]
    ax.bar(names, values, color="#1f77b4", label="achieved GB/s")
    if spec is not None:
        ax.axhline(spec.bandwidth_gbps, color="#444444", linestyle="--", label=f"peak {spec.bandwidth_gbps:,.0f} GB/s")
    ax.set_ylabel("GB/s")
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(fontsize=8)
