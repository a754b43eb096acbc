"""The terminal lines of the rank-sets block (``calibration.json`` -> ``rank_sets``): which runs can be told apart.

Rendering only (the figures are :func:`metaeval.study.ranksets.rank_sets_block`'s); at most 100 columns.
"""

from __future__ import annotations

from typing import Any


def rank_set_lines(block: dict[str, Any] | None, metric_name: str, top: int = 10) -> list[str]:
    """The block as lines: what it is, the top ``top`` runs with rank-set, naive interval, group and decisions,
    a summary, the A > B / A ~ B decisions of the top runs, and the tau with the human leaderboard (interval and
    bounds holding for any ranking, ``report.rankset_section.tau_text``).  None when
    every topic is human-labelled (the human leaderboard is observed: the leaderboard above is it)."""
    if not block or (block.get("status") == "ok" and block["human_labelled_topics"] >= block["topics"]):
        return []
    if block.get("status") != "ok":
        return [f"rank-sets, {metric_name}: n/a ({block.get('reason')})"]
    import textwrap

    from metaeval.report.rankset_section import tau_text

    lines = textwrap.wrap(f"which runs can be told apart, {metric_name}: {block['note']} (critical |t| "
                          f"{block['critical_value']:.2f})", 100, subsequent_indent="  ")
    if block["runs_left_out"]:
        lines += textwrap.wrap(f"left out (no score on every topic): {', '.join(block['runs_left_out'])}", 100,
                               initial_indent="  ", subsequent_indent="    ")
    lines.append(f"{'rank':>4}  {'run':<40}{'estimate':>9}  {'rank-set':>8}  {'naive':>7}  {'group':<12}{'above/below':>12}")
    for r in block["rows"][:top]:
        g = r["group"] if len(r["group"]) <= 11 else r["group"][:10] + "+"
        lines.append(f"{r['rank']:>4}  {r['run_id'][:39]:<40}{r['estimate']:>9.4f}  "
                     f"{_span(r['rank_set']):>8}  {_span(r['naive_rank_interval']):>7}  {g:<12}"
                     f"{str(r['beats']) + ' / ' + str(r['beaten_by']):>12}")
    s = block["summary"]
    lines += textwrap.wrap(f"{s['decided_pairs']} of {s['pairs']} run pairs decided; mean rank-set size "
                           f"{s['mean_rank_set_size']:.1f} of {block['runs']} runs (naive per-run interval "
                           f"{s['mean_naive_interval_size']:.1f}, not simultaneous); {s['groups']} groups (runs "
                           "sharing a letter cannot be told apart)", 100, initial_indent="  ", subsequent_indent="  ")
    lines += decision_lines(block, most=min(top, 5))
    for key, label in (("shown", "the leaderboard shown"), ("raw_judge", "the raw judge")):
        t = (block.get("tau") or {}).get(key)
        if t and t.get("estimate") is not None:
            by = f" ({t['by']})" if t.get("by") else ""
            how = str(t.get("treated_as") or "")
            fixed = how.startswith("fixed")
            text = tau_text(t["estimate"], t["ci"], t["level"], t.get("bounds"), fixed, how.startswith("refitted"))
            lines += textwrap.wrap(f"tau-b of {label}{by} with the human leaderboard on all {block['topics']} "
                                   f"topics: {text}",
                                   100, initial_indent="  ", subsequent_indent="    ")
            if fixed:  # its interval's known limit, pointing to the bounds
                lines += textwrap.wrap(f"caveat: {t['treated_as']}", 100, initial_indent="    ",
                                       subsequent_indent="    ")
    return lines


def decision_lines(block: dict[str, Any], most: int = 5) -> list[str]:
    """``A > B, C; A ~ D, E`` for the ``most`` best runs (every pair is in the JSON's ``pairs``)."""
    out = []
    order = {r["run_id"]: k for k, r in enumerate(block["rows"])}
    for r in block["rows"][:most]:
        run = r["run_id"]
        above, same = [], []
        for p in block["pairs"]:
            if run not in (p["a"], p["b"]):
                continue
            other = p["b"] if p["a"] == run else p["a"]
            d = p["decision"] if p["a"] == run else {">": "<", "<": ">", "~": "~"}[p["decision"]]
            (above if d == ">" else same if d == "~" else []).append(other)
        same.sort(key=order.get)
        text = f"  {run} > {len(above)} runs" + (f"; ~ {', '.join(same[:4])}" + (f" +{len(same) - 4}" if len(same) > 4 else "")
                                                 if same else "; ~ none")
        out.append(text[:100])
    return out


def _span(r: list[int]) -> str:
    return str(r[0]) if r[0] == r[1] else f"{r[0]}-{r[1]}"
