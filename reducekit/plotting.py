"""Plots of benchmark rows: bandwidth against N per method, speedup over torch.sum, and the
reductions-over-dims bar chart (percent of the read ceiling per case)."""
from __future__ import annotations

import math
import os


# Plot titles name how graph figures were timed (reducekit.bench: interleaved is the default).
_MODE_LABELS = {"graph": "graph (interleaved)", "graph_chained": "graph (chained, PDL overlap)"}


def _rows(data):
    """Accepts benchmark() output (DataFrame or list of dicts) or a benchmark_run() dict."""
    env = {}
    if isinstance(data, dict) and "rows" in data:
        env, data = data.get("env", {}), data["rows"]
    if hasattr(data, "to_dict"):
        env = getattr(data, "attrs", {}).get("env", env)
        data = data.to_dict("records")
    return list(data), env


def _pyplot():
    import matplotlib

    if not os.environ.get("DISPLAY") and matplotlib.get_backend().lower() not in ("agg", "module://matplotlib_inline.backend_inline"):
        matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _is_compare(rows) -> bool:
    return bool(rows) and "reducekit_us" in rows[0] and "op" in rows[0]


def plot(data, kind: str | None = None, dtype: str = "float32", mode: str = "eager", ax=None):
    """Draw one plot and return its matplotlib Figure.

    Rows of reducekit.benchmark (the default kind is "bandwidth"): kind="bandwidth": GB/s of input
    read against N (log x), one line per method, with the read ceiling measured in the same run as
    a dashed line. kind="speedup": heat map of torch.sum time over each method's time (method x N;
    > 1 is faster than torch.sum).
    Rows of reducekit.compare (kind "compare", the only one): one bar per case, torch's time over
    reducekit's (> 1: reducekit is faster), labelled with both times and % of the read ceiling.
    """
    plt = _pyplot()
    rows, env = _rows(data)
    if _is_compare(rows):
        if kind not in (None, "compare"):
            raise ValueError(f"kind must be 'compare' (or None) for reducekit.compare rows, got {kind!r}")
        return _plot_compare(rows, env, ax, plt)
    kind = kind or "bandwidth"
    rows = [r for r in rows if r["dtype"] == dtype and r["mode"] == mode]
    if not rows:
        raise ValueError(f"no rows for dtype={dtype!r} mode={mode!r}")
    methods = list(dict.fromkeys(r["method"] for r in rows))
    sizes = sorted(set(r["n"] for r in rows))
    if ax is None:
        fig, ax = plt.subplots(figsize=(11, 6.5) if kind == "bandwidth" else (max(8, 0.6 * len(sizes) + 4), 0.38 * len(methods) + 2))
    else:
        fig = ax.figure
    title = f"{dtype}, {_MODE_LABELS.get(mode, mode)}" + (f" — {env['gpu']}" if env.get("gpu") else "")
    if kind == "bandwidth":
        cmap = plt.get_cmap("tab20")
        for i, m in enumerate(methods):
            pts = sorted((r["n"], r["gbps"]) for r in rows if r["method"] == m)
            style = dict(lw=2.6, color="black") if m == "auto" else dict(lw=2.2, color="tab:red", ls="--") if m == "torch.sum" else dict(lw=1.2, color=cmap(i % 20))
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker=".", label=m, **style)
        ceiling = env.get("ceiling", {}).get("gbps")
        if ceiling:
            ax.axhline(ceiling, color="gray", ls=":", lw=1.5, label=f"read ceiling {ceiling / 1e3:.2f} TB/s")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("N (elements)")
        ax.set_ylabel("GB/s of input read")
        ax.set_title(f"Bandwidth — {title}")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7, ncol=2, loc="lower right")
    elif kind == "speedup":
        import numpy as np

        grid = np.full((len(methods), len(sizes)), np.nan)
        for r in rows:
            if r.get("speedup"):
                grid[methods.index(r["method"]), sizes.index(r["n"])] = r["speedup"]
        lg = np.log2(grid)
        lim = np.nanmax(np.abs(lg)) if np.isfinite(lg).any() else 1.0
        im = ax.imshow(lg, cmap="RdYlGn", vmin=-lim, vmax=lim, aspect="auto")
        ax.set_xticks(range(len(sizes)), [f"2^{int(math.log2(n))}" if n & (n - 1) == 0 else str(n) for n in sizes], rotation=45)
        ax.set_yticks(range(len(methods)), methods)
        for i in range(len(methods)):
            for j in range(len(sizes)):
                if np.isfinite(grid[i, j]):
                    ax.text(j, i, f"{grid[i, j]:.2g}", ha="center", va="center", fontsize=6)
        fig.colorbar(im, ax=ax, label="log2(speedup over torch.sum)")
        ax.set_title(f"Speedup over torch.sum — {title}")
    else:
        raise ValueError(f"kind must be 'bandwidth' or 'speedup', got {kind!r}")
    fig.tight_layout()
    return fig


def _plot_compare(rows, env, ax, plt):
    """One horizontal bar per compare row: speedup over torch (log scale), times and % of ceiling as labels."""
    if ax is None:
        fig, ax = plt.subplots(figsize=(10, 0.45 * len(rows) + 1.6))
    else:
        fig = ax.figure
    labels, values, notes = [], [], []
    for r in rows:
        shape = "x".join(str(s) for s in r["shape"])
        labels.append(f"{r['op']} {shape} dim={r['dim']} {r['dtype']}")
        values.append(r["speedup"] or 0.0)
        pct = f", {r['pct_ceiling']:.0f}% of ceiling" if r.get("pct_ceiling") is not None else ""
        bad = "" if r.get("check", "ok") in ("ok", "not checked") or r.get("check", "").startswith("not checked") else "  [CHECK FAILED]"
        t, k = r.get("torch_us"), r.get("reducekit_us")
        notes.append(f"{t:.1f} -> {k:.1f} us{pct}{bad}" if t and k else f"not timed{bad}")
    ys = list(range(len(rows)))[::-1]
    ax.barh(ys, [v - 1.0 if v > 0 else 0.0 for v in values], left=1.0, color=["tab:green" if v >= 1 else "tab:red" for v in values])
    ax.axvline(1.0, color="black", lw=1)
    ax.set_xscale("log", base=2)
    for y, v, note in zip(ys, values, notes):
        ax.text(v if v > 0 else 1.0, y, f"  {v:.2f}x  ({note})", va="center", fontsize=8)
    ax.set_yticks(ys, labels, fontsize=8)
    lo, hi = min([v for v in values if v > 0] + [1.0]), max(values + [1.0])
    ax.set_xlim(lo / 1.5, hi * 6)
    where = env.get("gpu") or (f"CPU, {env['threads']} threads" if env.get("threads") else rows[0].get("device", ""))
    ax.set_title(f"reducekit vs torch, {rows[0].get('mode', 'eager')} — {where} (speedup = torch time / reducekit time)", fontsize=10)
    ax.grid(True, axis="x", alpha=0.3)
    fig.tight_layout()
    return fig


def save_plots(run, out_dir: str, dtypes=None) -> list[str]:
    """bandwidth_<dtype>.png and speedup_<dtype>.png (eager) for each dtype in the run."""
    import matplotlib.pyplot as plt

    rows, _ = _rows(run)
    dtypes = dtypes or list(dict.fromkeys(r["dtype"] for r in rows))
    paths = []
    for d in dtypes:
        for kind in ("bandwidth", "speedup"):
            fig = plot(run, kind=kind, dtype=d, mode="eager")
            path = os.path.join(out_dir, f"{kind}_{d}.png")
            fig.savefig(path, dpi=110)
            plt.close(fig)
            paths.append(path)
    return paths


# Reductions over dims (reducekit.bench.dims_run): one bar group per case and dtype.
_DIMS_BARS = (("torch", "torch.sum(x, dim)", "tab:red"), ("reducekit", "reducekit.sum(x, dim)", "black"),
              ("full", "reducekit.sum(flat), same bytes", "0.65"))


def plot_dims(run, mode: str = "eager", ax=None):
    """Bar chart of one mode of a dims run: per case and dtype, % of the read ceiling (GB/s of input
    read where the run has no ceiling: CPU) of torch.sum over dims, reducekit.sum over dims and
    reducekit's full sum of the same bytes. Returns the matplotlib Figure."""
    import matplotlib

    if not os.environ.get("DISPLAY") and matplotlib.get_backend().lower() not in ("agg", "module://matplotlib_inline.backend_inline"):
        matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows, env = _rows(run)
    rows = [r for r in rows if r["mode"] == mode]
    if not rows:
        raise ValueError(f"no dims rows for mode={mode!r}")
    pct = any(r.get("reducekit_pct") is not None or r.get("torch_pct") is not None for r in rows)
    suffix = "pct" if pct else "gbps"
    if ax is None:
        fig, ax = plt.subplots(figsize=(max(9.0, 0.75 * len(rows) + 3), 6.5))
    else:
        fig = ax.figure
    width = 0.27
    for j, (key, label, color) in enumerate(_DIMS_BARS):
        xs = [i + (j - 1) * width for i, r in enumerate(rows) if r.get(f"{key}_{suffix}") is not None]
        ys = [r[f"{key}_{suffix}"] for r in rows if r.get(f"{key}_{suffix}") is not None]
        ax.bar(xs, ys, width, label=label, color=color)
    if pct:
        ax.axhline(100, color="gray", ls=":", lw=1.2, label="read ceiling")
    for i, r in enumerate(rows):  # speedup over torch.sum above each group
        top = max([r.get(f"{k}_{suffix}") or 0 for k, _, _ in _DIMS_BARS])
        if r.get("speedup"):
            ax.text(i, top * 1.01, f"{r['speedup']:.2f}x", ha="center", va="bottom", fontsize=7)
    ax.set_xticks(range(len(rows)), [f"{r['case']}\n{r['dtype']}" for r in rows], rotation=60, ha="right", fontsize=7)
    ax.set_ylabel("% of the read ceiling" if pct else "GB/s of input read")
    where = f" — {env['gpu']}" if env.get("gpu") else (" — CPU" if not pct else "")
    ax.set_title(f"Reductions over dims, {_MODE_LABELS.get(mode, mode)}{where} (labels: speedup over torch.sum)")
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    fig.tight_layout()
    return fig


def save_dims_plots(run, out_dir: str) -> list[str]:
    """dims_pct_ceiling_<mode>.png (dims_gbps_<mode>.png without a read ceiling) for each mode of a dims run."""
    import matplotlib.pyplot as plt

    rows, _ = _rows(run)
    paths = []
    for mode in dict.fromkeys(r["mode"] for r in rows):
        sub = [r for r in rows if r["mode"] == mode]
        pct = any(r.get("reducekit_pct") is not None or r.get("torch_pct") is not None for r in sub)
        fig = plot_dims(run, mode=mode)
        path = os.path.join(out_dir, f"dims_{'pct_ceiling' if pct else 'gbps'}_{mode}.png")
        fig.savefig(path, dpi=110)
        plt.close(fig)
        paths.append(path)
    return paths
