"""The report's figures (matplotlib's object API on the Agg canvas, no pyplot state), returned as PNG bytes.

* ``tau_levels``: tau at the three levels with 95% topic-bootstrap CIs, one row per cell;
* ``forest``: per-topic tau per cell, with the mean over defined topics and its CI band (forest plot);
* ``scatter``: judge vs reference run scores per cell, tau annotated (Pradeep et al. 2025, Figures 4-5 style);
* ``confusion``: reference rows x judge columns, counts and row percentages (Figure 6 style);
* ``label_mix``: support-label distribution per label source (companion of Table 4);
* (calibration figures are the calibration section's: ``metaeval.report.calibration_section``).
"""

from __future__ import annotations

import io
import math
from typing import Any, Sequence

import numpy as np

LEVEL_COLORS = {"run": "#1f77b4", "topic_avg": "#ff7f0e", "pooled": "#2ca02c"}
LABEL_COLORS = {"not_support": "#d62728", "partial_support": "#ffbf00", "support": "#2ca02c", "failed": "#7f7f7f"}


def _figure(w: float, h: float):
    from matplotlib.figure import Figure

    return Figure(figsize=(w, h), dpi=100, layout="tight")  # tight: about 30% less drawing time than constrained


def png(fig) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100, metadata={"Software": None})
    return buf.getvalue()


def _grid(n: int, ncols: int = 3) -> tuple[int, int]:
    ncols = max(1, min(ncols, n))
    return math.ceil(n / ncols), ncols


def tau_levels(rows: list[dict[str, Any]], cells: Sequence[str], metric: str, threshold: float | None = None) -> bytes:
    """``rows``: records of :func:`metaeval.report.tables.tau` for one metric."""
    fig = _figure(8, 1.0 + 0.55 * len(cells))
    ax = fig.add_subplot()
    look = {(r["cell"], r["level"]): r for r in rows if r["metric"] == metric}
    for i, cid in enumerate(cells):
        for k, lv in enumerate(("run", "topic_avg", "pooled")):
            r = look.get((cid, lv))
            y = i + (k - 1) * 0.22
            if not r or r["tau"] is None:
                ax.text(-0.98, y, "n/a", va="center", fontsize=7, color=LEVEL_COLORS[lv])
                continue
            lo = r["tau"] - r["ci_low"] if r["ci_low"] is not None else 0
            hi = r["ci_high"] - r["tau"] if r["ci_high"] is not None else 0
            ax.errorbar(r["tau"], y, xerr=[[max(lo, 0)], [max(hi, 0)]], fmt="o", color=LEVEL_COLORS[lv], capsize=3,
                        label={"run": "run-level", "topic_avg": "per-topic mean", "pooled": "pooled"}[lv] if i == 0 else None)
    ax.set_yticks(range(len(cells)), cells, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlim(-1, 1.05)
    if threshold is not None:
        ax.axvline(threshold, ls=":", color="grey", lw=1)
    ax.set_xlabel(f"Kendall tau on {metric} (95% topic-bootstrap CI)")
    ax.legend(loc="lower left", fontsize=8)
    ax.grid(axis="x", alpha=0.3)
    return png(fig)


def forest(per_cell: dict[str, Any], means: dict[str, tuple[float | None, list | None]], metric: str,
           max_topics: int = 60) -> bytes:
    """``per_cell``: cell -> DataFrame ``qid, tau``; ``means``: cell -> (topic-average tau, its CI)."""
    cells = list(per_cell)
    qids = sorted({q for t in per_cell.values() for q in t["qid"]})
    taus = np.array([[float(x) for x in t.set_index("qid")["tau"].reindex(qids)] for t in per_cell.values()]).reshape(len(cells), len(qids))
    defined = ~np.isnan(taus)
    sums = np.where(defined, taus, 0.0).sum(axis=0)
    cnt = defined.sum(axis=0)
    avg = {q: (sums[i] / cnt[i] if cnt[i] else np.nan) for i, q in enumerate(qids)}  # mean over cells where defined
    order = sorted(qids, key=lambda q: (np.nan_to_num(avg[q], nan=-2.0), q))
    note = ""
    if len(order) > max_topics:
        half = max_topics // 2
        order = order[:half] + order[-half:]
        note = f" (the {half} lowest and {half} highest of {len(qids)} topics)"
    nrows, ncols = _grid(len(cells), 3)
    fig = _figure(3.6 * ncols, 1.2 + 0.2 * len(order) * nrows)
    axes = fig.subplots(nrows, ncols, squeeze=False, sharey=True)
    ypos = {q: i for i, q in enumerate(order)}
    for ax, cid in zip(axes.flat, cells):
        t = per_cell[cid]
        t = t[t["qid"].isin(ypos)]
        ok = t["tau"].notna()
        ax.plot(t.loc[ok, "tau"], [ypos[q] for q in t.loc[ok, "qid"]], "o", ms=4, color="#1f77b4")
        for q in t.loc[~ok, "qid"]:
            ax.plot(0, ypos[q], "x", ms=4, color="#999999")
        mean, ci = means.get(cid, (None, None))
        if mean is not None:
            if ci and ci[0] is not None:
                ax.axvspan(ci[0], ci[1], color="#ff7f0e", alpha=0.15)
            ax.axvline(mean, color="#ff7f0e", lw=1.5, label=f"mean {mean:.2f}")
            ax.legend(loc="lower left", fontsize=7)
        ax.set_title(cid, fontsize=8)
        ax.set_xlim(-1.05, 1.05)
        ax.grid(axis="x", alpha=0.3)
        ax.set_yticks(range(len(order)), order, fontsize=6 if len(order) > 30 else 7)
    for ax in list(axes.flat)[len(cells):]:
        ax.set_visible(False)
    axes[0, 0].invert_yaxis()
    fig.supxlabel(f"per-topic Kendall tau on {metric} (x: undefined){note}", fontsize=9)
    return png(fig)


def scatter(points: dict[str, Any], taus: dict[str, tuple[float | None, list | None]], metric: str) -> bytes:
    """``points``: cell -> DataFrame ``run_id, reference, judge`` (run scores)."""
    cells = list(points)
    nrows, ncols = _grid(len(cells), 3)
    fig = _figure(3.4 * ncols, 3.2 * nrows)
    axes = fig.subplots(nrows, ncols, squeeze=False)
    for ax, cid in zip(axes.flat, cells):
        p = points[cid]
        ax.scatter(p["reference"], p["judge"], s=22, color="#1f77b4", edgecolor="white", lw=0.5)
        lo = float(np.nanmin([p["reference"].min(), p["judge"].min(), 0.0]))
        hi = float(np.nanmax([p["reference"].max(), p["judge"].max(), 0.01]))
        ax.plot([lo, hi], [lo, hi], ls="--", color="grey", lw=0.8)
        tau, ci = taus.get(cid, (None, None))
        txt = "tau = n/a" if tau is None else (f"tau = {tau:.3f}" + (f"\n[{ci[0]:.2f}, {ci[1]:.2f}]" if ci and ci[0] is not None else ""))
        ax.text(0.04, 0.96, txt, transform=ax.transAxes, va="top", fontsize=8,
                bbox={"boxstyle": "round", "fc": "white", "ec": "#cccccc"})
        ax.set_title(cid, fontsize=8)
        ax.set_xlabel(f"reference {metric}", fontsize=8)
        ax.set_ylabel(f"judge {metric}", fontsize=8)
        ax.tick_params(labelsize=7)
    for ax in list(axes.flat)[len(cells):]:
        ax.set_visible(False)
    return png(fig)


def confusion(blocks: list[dict[str, Any]]) -> bytes:
    """``blocks``: records with ``cell``, ``order``, ``confusion`` (reference rows x judge columns)."""
    nrows, ncols = _grid(len(blocks), 3)
    fig = _figure(3.8 * ncols, 3.4 * nrows)
    axes = fig.subplots(nrows, ncols, squeeze=False)
    short = {"not_support": "not", "partial_support": "partial", "support": "support"}
    for ax, b in zip(axes.flat, blocks):
        m = np.asarray(b["confusion"], dtype=float)
        rows = m.sum(axis=1, keepdims=True)
        share = np.divide(m, rows, out=np.zeros_like(m), where=rows > 0)
        ax.imshow(share, cmap="Blues", vmin=0, vmax=1)
        for i in range(m.shape[0]):
            for j in range(m.shape[1]):
                ax.text(j, i, f"{int(m[i, j])}\n{100 * share[i, j]:.0f}%", ha="center", va="center", fontsize=8,
                        color="white" if share[i, j] > 0.6 else "black")
        labels = [short.get(o, o) for o in b["order"]]
        ax.set_xticks(range(len(labels)), labels, fontsize=8)
        ax.set_yticks(range(len(labels)), labels, fontsize=8)
        ax.set_xlabel("judge", fontsize=8)
        ax.set_ylabel("reference (human)", fontsize=8)
        ax.set_title(b["cell"], fontsize=8)
    for ax in list(axes.flat)[len(blocks):]:
        ax.set_visible(False)
    return png(fig)


def label_mix(records: list[dict[str, Any]]) -> bytes:
    """Stacked horizontal bars of % not/partial/support/failed per label source (descriptive records)."""
    fig = _figure(8, 1.0 + 0.45 * len(records))
    ax = fig.add_subplot()
    names = [f"{r.get('name')} ({r.get('role')})" for r in records]
    left = np.zeros(len(records))
    for key, col in (("pct_not_support", "not_support"), ("pct_partial_support", "partial_support"),
                     ("pct_support", "support"), ("pct_failed", "failed")):
        v = np.array([float(r.get(key) or 0.0) for r in records])
        ax.barh(range(len(records)), v, left=left, color=LABEL_COLORS[col], label=col.replace("_", " "))
        left += v
    ax.set_yticks(range(len(records)), names, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlim(0, 100)
    ax.set_xlabel("% of nugget-answer labels")
    ax.legend(ncols=4, fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.18))
    return png(fig)
