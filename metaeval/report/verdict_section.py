"""The report's sections on each grid cell's standing: the ``summary`` (verdict headline and one plain sentence
per cell), the ``verdict`` table (every threshold per cell, ``metaeval.report.verdict``) and ``usage`` (calls,
tokens, cost and failures per cell, with the reasons cells were skipped)."""

from __future__ import annotations

from typing import Any

from metaeval.measures import display_name
from metaeval.report import tables, verdict as verdict_mod
from metaeval.report.context import Context, dash
from metaeval.report.model import Items, Section, Table, Text, fmt


def summary(ctx: Context) -> Section:
    """First: the verdict with its reasons, then one plain-language sentence per cell (H9)."""
    v = ctx.verdict
    bar = ctx.th.get("min_run_tau_low")
    bar = 0.8 if bar is None else float(bar)
    lines = verdict_mod.plain_summary(ctx.res.cells, ctx.res.study.cells if ctx.res.study else {}, ctx.metric, bar)
    ctx.data["summary"] = {"verdict": verdict_mod.headline(v), "cells": lines}
    blocks: list = [Text(verdict_mod.headline(v), "pass" if v["passed"] else "fail")]
    synthetic = ctx.synthetic()
    if synthetic:
        blocks.insert(0, Text(synthetic, "note"))
    if lines:
        blocks.append(Items(lines))
    blocks.append(Text(f"On {ctx.metric_name}; every interval is a 95% topic-bootstrap CI ({dash(ctx.n_boot)} resamples); "
                       f"'fine' means the lower bound is at least {bar:g} (the verdict's bar for run-level tau).", "note"))
    return Section("summary", "Summary", blocks)


def verdict(ctx: Context) -> Section:
    v = ctx.verdict
    th = v["thresholds"]
    rules = ", ".join(f"{verdict_mod.CHECKS[k][0]} {verdict_mod.CHECKS[k][3]} {fmt(x)}" for k, x in th.items() if k != "metric")
    keys = [k for k in th if k != "metric"]
    cols = ["cell", "verdict"] + [f"{verdict_mod.CHECKS[k][0]}{' (' + display_name(th['metric']) + ')' if 'tau' in k else ''} "
                                  f"{verdict_mod.CHECKS[k][3]} {fmt(th[k])}" for k in keys]
    rows = [_verdict_row(c, keys) for c in v["cells"]]
    head = "ALL CELLS PASS. " if v["passed"] else f"{v['n_failed']} cell(s) FAIL. "
    return Section("verdict", "Verdict", [
        Text(head + f"Thresholds on {th['metric']}: {rules or 'none active'}. "
             "`metaeval report --strict` exits 1 when any cell fails.", "p"),
        Table(cols, rows, "pass/fail per grid cell (why a cell was skipped: the grid cells section)",
              [False, False] + [True] * len(keys))])


def _verdict_row(c: dict[str, Any], keys: list[str]) -> list[str]:
    if c["status"] in ("skipped", "withheld"):  # withheld: too many FAILED labels, no figures
        return [c["cell"], c["status"].upper()] + ["-"] * len(keys)
    by = {x["check"]: x for x in c["checks"]}
    return [c["cell"], c["status"].upper()] + [
        ("undefined" if by[k]["value"] is None else fmt(by[k]["value"])) + (" ok" if by[k]["passed"] else " FAILS")
        for k in keys]


def usage(ctx: Context) -> Section:
    rows = tables.usage(ctx.res.cells)
    ctx.data["usage"] = rows
    ran = [r for r in rows if "skipped" not in r]
    skipped = [Text("Skipped: " + "; ".join(f"{r['cell']} ({r['skipped']})" for r in rows if "skipped" in r) + ".", "note")] \
        if any("skipped" in r for r in rows) else []
    return Section("usage", "Grid cells: calls, tokens, cost, failures",
                   [tables.to_table(ran, tables.USAGE_COLUMNS, "per grid cell (judge calls = judge invocations; "
                                    "model requests = requests sent to a model, re-asks and retries included)"),
                    *skipped])
