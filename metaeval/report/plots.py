"""The report's figures as SVG text (matplotlib's object API on a fresh Figure, no pyplot state).

Every figure: text kept as SVG ``<text>`` (``svg.fonttype = none``, so it stays sharp and searchable), fonts of 9 to
11 pt at natural size, constrained layout, and every legend *outside* the axes (``loc="outside ..."``), so no
legend covers data, a tick label or an axis label (the browser test checks the bounding boxes).

* ``tau_levels``: tau at the three levels with 95% topic-bootstrap CIs, one row per cell;
* ``forest``: per-topic tau per cell with the mean over defined topics and its CI band; a topic whose tau is
  undefined (a side constant on it) is a grey band labelled "undefined", never a point;
* ``bias``: per-run bias, judge minus reference run score, with paired topic-bootstrap CIs, one panel per cell;
* ``scatter``: judge vs reference run scores per cell, tau annotated (Pradeep et al. 2025, Figures 4-5 style);
* ``confusion``: reference rows x judge columns, counts and row percentages (Figure 6 style);
* ``strictness_importance``: the strictness index for all, vital and okay nuggets with topic-clustered CIs;
* ``label_mix``: support-label distribution per label source (companion of Table 4).
"""

from __future__ import annotations

import contextlib
import contextvars
import io
import math
import re
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    from metaeval.forked import WarmWorkers

LEVEL_COLORS = {"run": "#1f77b4", "topic_avg": "#ff7f0e", "pooled": "#2ca02c"}
LEVEL_LABELS = {"run": "run-level", "topic_avg": "per-topic (mean)", "pooled": "pooled"}
LABEL_COLORS = {"not_support": "#d62728", "partial_support": "#ffbf00", "support": "#2ca02c", "failed": "#7f7f7f"}
STRATUM_COLORS = {"all": "#444444", "vital": "#9467bd", "okay": "#17becf"}


def metric_label(metric: str) -> str:
    """A metric as the figures print it: the measure registry's display name (``v_strict`` -> ``V_strict``), the
    spelling tables and the paper use; any other name as given."""
    from metaeval.measures import display_name

    return display_name(metric)

RC = {"svg.fonttype": "none", "svg.hashsalt": "metaeval", "font.family": "DejaVu Sans", "font.size": 10,
      "axes.titlesize": 10, "axes.labelsize": 10, "xtick.labelsize": 9, "ytick.labelsize": 9, "legend.fontsize": 9,
      "figure.dpi": 72}


FONT_STACK = "font-family: 'DejaVu Sans', 'Bitstream Vera Sans', Verdana, sans-serif"


def _figure(w: float, h: float):
    from matplotlib.figure import Figure

    return Figure(figsize=(w, h), layout="constrained")


def svg(fig) -> str:
    """The figure as a standalone SVG document (no date, deterministic ids)."""
    import matplotlib

    buf = io.StringIO()
    with matplotlib.rc_context(RC):
        fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None})
    # the layout was measured with DejaVu Sans: fall back to its metric twins, then any sans-serif (never a serif)
    return buf.getvalue().replace("font-family: 'DejaVu Sans'", FONT_STACK)


class Drawing:
    """A figure still to be drawn: ``fn(*args, **kwargs)``, one of this module's plots, returns its SVG text.

    Sections describe their figures as drawings (:func:`later`); :func:`metaeval.report.build.build_report` draws
    all of a report's drawings with :func:`draw_all`, those made inside :func:`drawing_ahead` already on their way
    (``pending``: the worker's result)."""

    def __init__(self, fn, args: tuple, kwargs: dict):
        self.fn, self.args, self.kwargs = fn, args, kwargs
        self.pending: Any = None

    def draw(self) -> str:
        return self.fn(*self.args, **self.kwargs)


def _draw(job: bytes) -> str:
    """The SVG of a pickled :class:`Drawing` (what goes to a worker: pickled when the section makes it, before its
    ``pending`` is set, so the pool's thread never reads data the caller is still building)."""
    import pickle

    return pickle.loads(job).draw()


_AHEAD: "contextvars.ContextVar[WarmWorkers | None]" = contextvars.ContextVar("drawing_ahead", default=None)


@contextlib.contextmanager
def drawing_ahead(pool: "WarmWorkers | None"):
    """Inside, every drawing :func:`later` makes goes to ``pool``'s workers at once, so that they draw while the
    caller builds the rest of the report (their data are final when the section makes them: nothing changes them
    afterwards); :func:`draw_all` collects them.  The same SVG as drawn at the end, byte for byte."""
    token = _AHEAD.set(pool)
    try:
        yield
    finally:
        _AHEAD.reset(token)


def later(fn, *args, **kwargs) -> Drawing:
    """``fn(*args, **kwargs)`` as a :class:`Drawing`, drawn by :func:`draw_all` (started now inside
    :func:`drawing_ahead`)."""
    d = Drawing(fn, args, kwargs)
    pool = _AHEAD.get()
    if pool is not None:
        import pickle

        d.pending = pool.submit(_draw, pickle.dumps(d, protocol=pickle.HIGHEST_PROTOCOL))
    return d


def draw_all(drawings: Sequence[Drawing], workers: int | str | None = "auto",
             pool: "WarmWorkers | None" = None) -> list[str]:
    """The SVG text of every drawing, in order, drawn in ``workers`` processes (default: the available CPUs): each
    figure is drawn from its own data by its own function, so the SVG is byte-for-byte what one process draws.
    ``pool``: workers started earlier by :func:`drawing_workers`, which imported matplotlib while the caller built
    the report (else they are started here, and import it side by side).  A drawing already sent to workers
    (:func:`drawing_ahead`) is collected; the others are drawn now."""
    if not drawings:
        return []
    rest = [d for d in drawings if d.pending is None]
    if not rest:
        drawn: list[str] = []
    elif pool is not None:
        drawn = pool.map(Drawing.draw, rest)
    else:
        with drawing_workers(workers) as own:
            drawn = own.map(Drawing.draw, rest)
    it = iter(drawn)
    return [d.pending.get() if d.pending is not None else next(it) for d in drawings]


def drawing_workers(workers: int | str | None = "auto", server: bool = False) -> "WarmWorkers":
    """Worker processes for :func:`draw_all`, forked now, each importing matplotlib's figure and SVG modules
    (:func:`import_matplotlib`, 0.25 s) while the caller goes on (``metaeval.forked.WarmWorkers``); ``server``:
    forked from the drawing server :func:`start_drawing_server` started, which has imported them already."""
    from metaeval.forked import WarmWorkers

    return WarmWorkers(workers, import_matplotlib, server=server)


#: what the drawing server imports: matplotlib's figure and SVG modules (:func:`import_matplotlib`), this module,
#: and pandas, whose frames some drawings are given (a worker forked before the caller imported them would import
#: them on the first drawing)
DRAWING_MODULES = ("metaeval.report.plots", "matplotlib.figure", "matplotlib.backends.backend_svg", "pandas")


def start_drawing_server() -> bool:
    """Start the process the report's drawing workers will be forked from (``metaeval.forked.start_forkserver``),
    importing :data:`DRAWING_MODULES` now, in the background: ``metaeval sweep`` starts it before it composes its
    configuration, so that the imports (about 1 s of CPU) run on a core the configuration and the judging leave
    idle, not at the report, and only once (forked workers would each import matplotlib).  Returns whether it
    runs; pass that as :func:`drawing_workers`' ``server``."""
    from metaeval.forked import start_forkserver

    return start_forkserver(DRAWING_MODULES)


def import_matplotlib() -> None:
    """matplotlib's figure and SVG backend modules, what every drawing needs."""
    import matplotlib.backends.backend_svg  # noqa: F401
    import matplotlib.figure  # noqa: F401


def inline_svg(doc: str, prefix: str, label: str = "") -> str:
    """``doc`` made fit for inlining in HTML: XML prolog, DOCTYPE, metadata and namespace declarations dropped, and
    every id (and ``url(#..)`` / ``href="#.."`` reference) prefixed with ``prefix-`` so several figures on one page
    cannot share an id.  ``label`` becomes the figure's ``aria-label``."""
    from html import escape

    s = doc[doc.index("<svg"):]
    s = re.sub(r"<metadata>.*?</metadata>", "", s, flags=re.S)
    s = re.sub(r'\s+xmlns(:\w+)?="[^"]*"', "", s)
    s = re.sub(r'\bid="([^"]+)"', lambda m: f'id="{prefix}-{m.group(1)}"', s)
    s = re.sub(r"url\(#([^)]+)\)", lambda m: f"url(#{prefix}-{m.group(1)})", s)
    s = re.sub(r'href="#([^"]+)"', lambda m: f'href="#{prefix}-{m.group(1)}"', s)
    return s.replace("<svg", f'<svg role="img" aria-label="{escape(label)}"', 1)


def _rc(func):
    """Run a plotting function under the report's rcParams (fonts, SVG text)."""
    import functools

    @functools.wraps(func)
    def wrapper(*a, **k):
        import matplotlib

        with matplotlib.rc_context(RC):
            return func(*a, **k)
    return wrapper


def _errorbars(ax, pts: list[tuple[float, float, float, float]], color: str, ms: float = 5, capsize: float = 3) -> None:
    """Points ``(x, y, lo, hi)`` with horizontal interval bars, in ONE errorbar call (one artist per colour, not per
    point: drawing time grows with artists, not with points)."""
    if not pts:
        return
    x, y, lo, hi = (np.array(v, dtype=float) for v in zip(*pts))
    ax.errorbar(x, y, xerr=[np.maximum(x - lo, 0), np.maximum(hi - x, 0)], fmt="o", ms=ms, color=color, capsize=capsize)


def _grid(n: int, ncols: int = 3) -> tuple[int, int]:
    ncols = max(1, min(ncols, n))
    return math.ceil(n / ncols), ncols


def _hide_unused(axes, n: int) -> None:
    for ax in list(axes.flat)[n:]:
        ax.set_visible(False)


def _short(cid: str, n: int = 34) -> str:
    return cid if len(cid) <= n else cid[: n - 1] + "…"


@_rc
def tau_levels(rows: list[dict[str, Any]], cells: Sequence[str], metric: str, threshold: float | None = None) -> str:
    """``rows``: records of :func:`metaeval.report.tables.tau` for one metric; undefined levels are written "undefined"."""
    fig = _figure(9, 1.2 + 0.55 * len(cells))
    ax = fig.add_subplot()
    look = {(r["cell"], r["level"]): r for r in rows if r["metric"] == metric}
    for k, lv in enumerate(("run", "topic_avg", "pooled")):
        ax.errorbar([], [], xerr=[], fmt="o", color=LEVEL_COLORS[lv], capsize=3, label=LEVEL_LABELS[lv])
    for k, lv in enumerate(("run", "topic_avg", "pooled")):
        pts = []
        for i, cid in enumerate(cells):
            r = look.get((cid, lv))
            y = i + (k - 1) * 0.25
            if not r or r["tau"] is None:
                ax.text(-0.97, y, f"{LEVEL_LABELS[lv]}: undefined", va="center", fontsize=8, color=LEVEL_COLORS[lv],
                        style="italic")
                continue
            t = r["tau"]
            pts.append((t, y, t if r["ci_low"] is None else r["ci_low"], t if r["ci_high"] is None else r["ci_high"]))
        _errorbars(ax, pts, LEVEL_COLORS[lv])
    ax.set_yticks(range(len(cells)), [_short(c) for c in cells])
    ax.set_ylim(len(cells) - 0.5, -0.5)
    ax.set_xlim(-1, 1.02)
    if threshold is not None:
        ax.axvline(threshold, ls=":", color="grey", lw=1.2, label=f"threshold {threshold:g}")
    ax.set_xlabel(f"Kendall tau on {metric_label(metric)} (95% topic-bootstrap CI)")
    ax.grid(axis="x", alpha=0.3)
    fig.legend(loc="outside upper center", ncols=4, frameon=False)
    return svg(fig)


@_rc
def forest(per_cell: dict[str, Any], means: dict[str, tuple[float | None, list | None]], metric: str,
           max_topics: int = 60) -> str:
    """``per_cell``: cell -> DataFrame ``qid, tau`` (NaN = undefined); ``means``: cell -> (topic-average tau, CI)."""
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    cells = list(per_cell)
    qids = sorted({str(q) for t in per_cell.values() for q in t["qid"]})
    taus = np.array([[float(x) for x in t.assign(qid=t["qid"].astype(str)).set_index("qid")["tau"].reindex(qids)]
                     for t in per_cell.values()]).reshape(len(cells), len(qids))
    defined = ~np.isnan(taus)
    cnt = defined.sum(axis=0)
    sums = np.where(defined, taus, 0.0).sum(axis=0)
    avg = {q: (sums[i] / cnt[i] if cnt[i] else -2.0) for i, q in enumerate(qids)}  # mean over cells where defined
    order = sorted(qids, key=lambda q: (avg[q], q))
    note = ""
    if len(order) > max_topics:
        half = max_topics // 2
        order = order[:half] + order[-half:]
        note = f"; the {half} lowest and {half} highest of {len(qids)} topics"
    nrows, ncols = _grid(len(cells), 3)
    fig = _figure(max(9.0, 3.7 * ncols), 1.2 + (0.21 * len(order) + 0.6) * nrows)
    axes = fig.subplots(nrows, ncols, squeeze=False, sharey=True)
    ypos = {q: i for i, q in enumerate(order)}
    fs = 7 if len(order) > 30 else 8
    for ax, cid in zip(axes.flat, cells):
        t = per_cell[cid].assign(qid=per_cell[cid]["qid"].astype(str))
        t = t[t["qid"].isin(ypos)]
        ok = t["tau"].notna()
        ax.plot(t.loc[ok, "tau"], [ypos[q] for q in t.loc[ok, "qid"]], "o", ms=4, color="#1f77b4")
        for q in t.loc[~ok, "qid"]:
            ax.axhspan(ypos[q] - 0.4, ypos[q] + 0.4, color="#bbbbbb", alpha=0.35, lw=0)
            ax.text(-1.0, ypos[q], "undefined", va="center", ha="left", fontsize=fs - 1, color="#555555", style="italic")
        mean, ci = means.get(cid, (None, None))
        if mean is not None:
            if ci and ci[0] is not None and ci[1] is not None:
                ax.axvspan(ci[0], ci[1], color="#ff7f0e", alpha=0.15, lw=0)
            ax.axvline(mean, color="#ff7f0e", lw=1.5)
        ax.set_title(f"{_short(cid)}\nmean {'undefined' if mean is None else f'{mean:.2f}'}", fontsize=9)
        ax.set_xlim(-1.05, 1.05)
        ax.set_ylim(len(order) - 0.5, -0.5)
        ax.grid(axis="x", alpha=0.3)
        ax.set_yticks(range(len(order)), [_short(q, 40) for q in order], fontsize=fs)
        ax.tick_params(axis="x", labelsize=8)
    _hide_unused(axes, len(cells))
    fig.supxlabel(f"per-topic Kendall tau on {metric_label(metric)}{note}", fontsize=10)
    handles = [Line2D([], [], marker="o", ls="", color="#1f77b4", label="topic tau"),
               Line2D([], [], color="#ff7f0e", lw=1.5, label="mean over defined topics"),
               Patch(color="#ff7f0e", alpha=0.25, label="its 95% CI"),
               Patch(color="#bbbbbb", alpha=0.6, label="undefined (constant scores)")]
    fig.legend(handles=handles, loc="outside upper center", ncols=4, frameon=False)
    return svg(fig)


@_rc
def bias(per_cell: dict[str, dict[str, Any]], metric: str) -> str:
    """``per_cell``: cell -> the study's ``bias.metrics[metric]`` (``mean`` and ``runs`` with ``bias``, ``ci``)."""
    cells = list(per_cell)
    runs = list(dict.fromkeys(r["run_id"] for b in per_cell.values() for r in b["runs"]))
    nrows, ncols = _grid(len(cells), 3)
    fig = _figure(max(9.0, 3.7 * ncols), 1.0 + (0.24 * len(runs) + 0.7) * nrows)
    axes = fig.subplots(nrows, ncols, squeeze=False, sharey=True)
    ypos = {r: i for i, r in enumerate(runs)}
    lim = max([0.05] + [abs(x) for b in per_cell.values() for r in b["runs"] for x in (r["ci"] or []) if x is not None]
              + [abs(r["bias"]) for b in per_cell.values() for r in b["runs"] if r["bias"] is not None])
    lim = min(1.0, lim * 1.1)
    for ax, cid in zip(axes.flat, cells):
        b = per_cell[cid]
        groups: dict[str, list] = {"#d62728": [], "#1f77b4": [], "#2ca02c": []}
        for r in b["runs"]:
            y = ypos[r["run_id"]]
            if r["bias"] is None:
                ax.text(0, y, "undefined", ha="center", va="center", fontsize=8, style="italic", color="#555555")
                continue
            lo, hi = r["ci"] if r["ci"] and r["ci"][0] is not None else (r["bias"], r["bias"])
            groups["#d62728" if hi < 0 else ("#2ca02c" if lo > 0 else "#1f77b4")].append((r["bias"], y, lo, hi))
        for col, pts in groups.items():
            _errorbars(ax, pts, col, ms=4, capsize=2)
        ax.axvline(0, color="black", lw=0.8)
        m = b["mean"]  # the study's MetricBias as report.json holds it (mean and its ci always written)
        mt = "undefined" if m.get("bias") is None else f"{m['bias']:+.3f}" + (
            f" [{m['ci'][0]:+.2f}, {m['ci'][1]:+.2f}]" if m.get("ci") and m["ci"][0] is not None else "")
        ax.set_title(f"{_short(cid)}\nmean bias {mt}", fontsize=9)
        ax.set_xlim(-lim, lim)
        ax.set_ylim(len(runs) - 0.5, -0.5)
        ax.set_yticks(range(len(runs)), [_short(r, 40) for r in runs], fontsize=8)
        ax.tick_params(axis="x", labelsize=8)
        ax.grid(axis="x", alpha=0.3)
    _hide_unused(axes, len(cells))
    fig.supxlabel(f"judge minus reference run score on {metric_label(metric)} (95% paired topic-bootstrap CI); runs by reference score",
                  fontsize=10)
    from matplotlib.lines import Line2D

    handles = [Line2D([], [], marker="o", ls="", color=c, label=t) for c, t in
               (("#d62728", "judge lower (CI below 0)"), ("#1f77b4", "CI covers 0"), ("#2ca02c", "judge higher (CI above 0)"))]
    fig.legend(handles=handles, loc="outside upper center", ncols=3, frameon=False)
    return svg(fig)


@_rc
def scatter(points: dict[str, Any], taus: dict[str, tuple[float | None, list | None]], metric: str) -> str:
    """``points``: cell -> DataFrame ``run_id, reference, judge`` (run scores)."""
    cells = list(points)
    nrows, ncols = _grid(len(cells), 3)
    fig = _figure(3.7 * ncols, 3.1 * nrows)
    axes = fig.subplots(nrows, ncols, squeeze=False)
    for ax, cid in zip(axes.flat, cells):
        p = points[cid]
        ax.scatter(p["reference"], p["judge"], s=22, color="#1f77b4", edgecolor="white", lw=0.5)
        lo = float(np.nanmin([p["reference"].min(), p["judge"].min(), 0.0]))
        hi = float(np.nanmax([p["reference"].max(), p["judge"].max(), 0.01]))
        ax.plot([lo, hi], [lo, hi], ls="--", color="grey", lw=0.8)
        tau, ci = taus.get(cid, (None, None))
        txt = "tau undefined" if tau is None else (f"tau {tau:.3f}" + (f" [{ci[0]:.2f}, {ci[1]:.2f}]" if ci and ci[0] is not None else ""))
        ax.set_title(f"{_short(cid)}\n{txt}", fontsize=9)
        ax.set_xlabel(f"reference {metric_label(metric)}", fontsize=9)
        ax.set_ylabel(f"judge {metric_label(metric)}", fontsize=9)
        ax.tick_params(labelsize=8)
    _hide_unused(axes, len(cells))
    return svg(fig)


@_rc
def confusion(blocks: list[dict[str, Any]]) -> str:
    """``blocks``: records with ``cell``, ``order``, ``confusion`` (reference rows x judge columns)."""
    nrows, ncols = _grid(len(blocks), 3)
    fig = _figure(3.7 * ncols, 3.2 * nrows)
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
        ax.set_xlabel("judge", fontsize=9)
        ax.set_ylabel("reference (human)", fontsize=9)
        ax.set_title(_short(b["cell"]), fontsize=9)
    _hide_unused(axes, len(blocks))
    return svg(fig)


@_rc
def strictness_importance(per_cell: dict[str, dict[str, Any]]) -> str:
    """``per_cell``: cell -> the study's ``strictness_by_importance.strata`` (``all``, ``vital``, ``okay``)."""
    cells = list(per_cell)
    fig = _figure(9, 1.2 + 0.55 * len(cells))
    ax = fig.add_subplot()
    names = ("all", "vital", "okay")
    for k, s in enumerate(names):
        ax.errorbar([], [], xerr=[], fmt="o", color=STRATUM_COLORS[s], capsize=3,
                    label={"all": "all nuggets", "vital": "vital nuggets", "okay": "okay nuggets"}[s])
    undefined = []
    for k, s in enumerate(names):
        pts = []
        for i, cid in enumerate(cells):
            r = (per_cell[cid] or {}).get(s)
            y = i + (k - 1) * 0.25
            if not r or r.get("index") is None:
                undefined.append((y, s))
                continue
            lo, hi = r["ci"] if r.get("ci") and r["ci"][0] is not None else (r["index"], r["index"])
            pts.append((r["index"], y, lo, hi))
        _errorbars(ax, pts, STRATUM_COLORS[s])
    ax.axvline(0, color="black", lw=0.8)
    ax.set_yticks(range(len(cells)), [_short(c) for c in cells])
    ax.set_ylim(len(cells) - 0.5, -0.5)
    lim = max([0.1] + [abs(x) for v in per_cell.values() for r in (v or {}).values() if r for x in (r.get("ci") or [])
                       if x is not None])
    ax.set_xlim(-min(1.0, lim * 1.15), min(1.0, lim * 1.15))
    for y, s in undefined:  # at the left edge of the axes, whatever its limits
        ax.text(0.01, y, f"{s}: undefined", va="center", fontsize=8, color=STRATUM_COLORS[s], style="italic",
                transform=ax.get_yaxis_transform())
    ax.set_xlabel("net strictness = P(judge lower) - P(judge higher) (95% topic-clustered CI); > 0: judge stricter")
    ax.grid(axis="x", alpha=0.3)
    fig.legend(loc="outside upper center", ncols=3, frameon=False)
    return svg(fig)


@_rc
def label_mix(records: list[dict[str, Any]]) -> str:
    """Stacked horizontal bars of % not/partial/support/failed per label source (descriptive records)."""
    fig = _figure(9, 1.1 + 0.36 * len(records))
    ax = fig.add_subplot()
    names = [_short(f"{r.get('name')} ({r.get('role')})", 44) for r in records]
    left = np.zeros(len(records))
    for key, col in (("pct_not_support", "not_support"), ("pct_partial_support", "partial_support"),
                     ("pct_support", "support"), ("pct_failed", "failed")):
        v = np.array([float(r.get(key) or 0.0) for r in records])
        ax.barh(range(len(records)), v, left=left, color=LABEL_COLORS[col], label=col.replace("_", " "))
        left += v
    ax.set_yticks(range(len(records)), names)
    ax.set_ylim(len(records) - 0.5, -0.5)
    ax.set_xlim(0, 100)
    ax.set_xlabel("% of nugget-answer labels")
    fig.legend(loc="outside upper center", ncols=4, frameon=False)
    return svg(fig)
