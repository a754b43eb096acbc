"""``metaeval analyze``: Kendall's tau at three levels with CIs, label agreement and strictness, descriptives.

Compare one or more candidates (e.g. an LLM judge) with a reference (e.g. NIST assessors): Kendall's tau between run
rankings, per-topic and over all cells with topic-bootstrap CIs, run-pair flips, label agreement (kappa,
Krippendorff's alpha, strictness, Stuart-Maxwell) and Table 4 statistics. Each input is an assignment (label) file,
a score table (long run_id,qid,metric,value or wide), or a folder of per-query trec_eval -q / ir_measures outputs
(one file per run).
"""

from __future__ import annotations

import argparse
from functools import partial

from metaeval.commands.helptext import command_parser
from metaeval.formatting import NA, fixed, p_text, significant


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = command_parser(sub, "analyze", __doc__,
                       help="meta-evaluate candidate labels/scores against a reference (tau at 3 levels, agreement, strictness)")
    p.add_argument("--reference", required=True, metavar="REF", help="reference labels, score table or trec_eval folder")
    p.add_argument("--candidate", required=True, nargs="+", metavar="CAND",
                   help="one or more candidates (same kinds, or a sweep cell folder holding labels.jsonl); NAME=PATH "
                   "names one (default: the file's stem, or the cell folder's name)")
    p.add_argument("--metrics", nargs="+", metavar="M", help="metrics to analyse (default: all on every side), e.g. V_strict A_strict")
    p.add_argument("--tau", default="b", choices=["b", "a", "ap", "ap_sym", "ap_b"], help="tau variant: b (default, as scipy), a, ap (Yilmaz et al. 2008, candidate|reference), ap_sym, ap_b (tau_AP-b, Urbano & Marrero 2017)")
    p.add_argument("--bootstrap", type=int, default=1000, metavar="N", help="topic-bootstrap replicates (default 1000; 0 = no CIs)")
    p.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
    p.add_argument("--alpha", type=float, default=0.05, help="1 - confidence level (default 0.05)")
    p.add_argument("--ci", default="centered", choices=["centered", "percentile", "bca"], help="bootstrap CI method (default centered: the percentile interval shifted by estimate - bootstrap mean; see README)")
    p.add_argument("--flip-test", default="t", choices=["t", "permutation"], help="reference's paired test over topics for flipped run pairs")
    p.add_argument("--no-vital", choices=["zero", "exclude"], default="zero", help="label inputs: answers with no vital nugget score 0 (default) or are excluded")
    p.add_argument("--failed-support", choices=["not_support", "exclude", "support"], default="not_support", help="label inputs: how FAILED assignment labels score (default not_support)")
    p.add_argument("--failed-importance", choices=["nuggetizer", "exclude", "as_okay", "as_vital"], default="nuggetizer", help="label inputs: how FAILED importance labels score")
    p.add_argument("--out", required=True, metavar="DIR", help="output folder: analysis.json and tidy CSVs")
    p.add_argument("--run-map", action="append", metavar="OLD=NEW|FILE",
                   help="rename a run on every input before comparing (repeatable; or a .json/.yaml/text mapping file)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from metaeval.errors import ConfigError

    if args.bootstrap < 0:
        raise ConfigError("--bootstrap must be >= 0")
    if not 0 < args.alpha < 1:
        raise ConfigError("--alpha must be between 0 and 1")
    from metaeval.io.outputs import check_output

    out = check_output(args.out, kind="dir")  # before any work: '' / a file / /proc / read-only are one line
    from metaeval.workflow.analyze import analyze_files

    done = analyze_files(args.reference, args.candidate, out_dir=out, run_map=args.run_map, no_vital=args.no_vital,
                         failed_support=args.failed_support, failed_importance=args.failed_importance,
                         metrics=args.metrics, variant=args.tau, n_boot=args.bootstrap, seed=args.seed,
                         alpha=args.alpha, ci_method=args.ci, flip_test=args.flip_test)
    print(format_summary(done.result))
    print(f"\nwrote {', '.join(str(p) for p in done.paths)}")
    return 0


def _sm(ag: dict) -> str:
    """The topic-clustered Stuart-Maxwell test (statistic, df, p as a bound where tiny), else the plain one."""
    if ag.get("stuart_maxwell_clustered_stat") is not None:
        return (f"Stuart-Maxwell (topic-clustered) {ag['stuart_maxwell_clustered_stat']:.1f} "
                f"({ag['stuart_maxwell_clustered_df']} df, {ag['stuart_maxwell_clustered_topics']} topics), F "
                f"{p_text(ag['stuart_maxwell_clustered_p'])}")
    return f"Stuart-Maxwell (unclustered) {p_text(ag.get('stuart_maxwell_p'))}"


def _run_notes(block: dict, most: int = 5) -> list[str]:
    """The candidate's warnings (too few shared runs) and the ``--run-map`` options that would pair its
    near-matching run names with the reference's (at most ``most`` shown)."""
    lines = [f"warning: {w}" for w in block.get("warnings") or []]
    suggested = list((block.get("suggested_run_map") or {}).items())
    if suggested:
        more = f" (+{len(suggested) - most} more in analysis.json)" if len(suggested) > most else ""
        lines.append(f"hint: {len(suggested)} run name(s) only on the candidate nearly match the reference's: "
                     + " ".join(f"--run-map {c}={r}" for c, r in suggested[:most]) + more)
    return lines


def format_summary(res) -> str:
    """Readable summary: one tau table per candidate, then flips, agreement and paired tests."""
    doc = res.json
    col = partial(fixed, digits=3, width=6, missing=NA)  # a column of 6 characters, n/a right-aligned
    lines = [f"reference: {doc['reference']}   tau-{doc['variant']}   bootstrap {doc['n_boot']} x topics "
             f"(seed {doc['seed']}, {doc['ci_method']} {100 * (1 - doc['alpha']):.0f}% CI)"]
    flagged = False
    for name, block in doc["candidates"].items():
        c = block["cells"]
        drop = ", ".join(f"{k} {v}" for k, v in c["dropped"].items())
        lines += ["", f"candidate: {name}   runs {c['n_runs']}  topics {c['n_topics']}  cells {c['n_cells']}  (dropped: {drop})",
                  *_run_notes(block),
                  f"{'metric':<10} {'run':>24} {'topic_avg':>24} {'pooled':>24}  flips (ref-sig)"]
        for metric, mb in block["metrics"].items():
            cells = []
            for lvl in ("run", "topic_avg", "pooled"):
                t, (lo, hi) = mb[lvl]["tau"], mb[lvl]["ci"]
                out = lo is not None and t is not None and not (lo <= t <= hi)
                flagged |= out
                cells.append(f"{col(t)}{'*' if out else ' '} [{col(lo)},{col(hi)}]")
            f = mb["flips"]
            lines.append(f"{metric:<10} " + " ".join(f"{x:>24}" for x in cells) + f"  {f['n_flips']:>4}/{f['n_pairs']} ({f['n_flips_ref_significant']})")
        ag = block.get("labels")
        if ag:
            lines.append(
                f"labels: n {ag['n']}  agreement {col(ag['exact_agreement'])}  kappa {col(ag['cohen_kappa'])}  "
                f"weighted {col(ag['weighted_kappa'])}  alpha(ord) {col(ag['krippendorff_alpha'])}  "
                f"strictness {col(ag['strictness_index'])}  {_sm(ag)}  "
                f"FAILED ref/cand/both {ag['failed']['reference']}/{ag['failed']['candidate']}/{ag['failed']['both']}")
            lines.append("        confusion (rows reference, columns candidate; " + ", ".join(ag["order"]) + "): "
                         + "  ".join(str(r) for r in ag["confusion"]))
    if doc.get("paired"):
        lines += ["", "paired bootstrap (candidate_a - candidate_b):"]
        for r in doc["paired"]:
            lines.append(f"  {r['candidate_a']} vs {r['candidate_b']}  {r['metric']:<9} {r['level']:<9} diff {col(r['diff'])} "
                         f"[{col(r['ci_low'])},{col(r['ci_high'])}]  p {significant(r['p_value'])}")
    if flagged:
        lines += ["", "* estimate outside its CI: the run-level tau of a topic resample is biased down (fewer distinct "
                  "topics); see --ci centered / bca and boot_mean in analysis.json"]
    return "\n".join(lines)
