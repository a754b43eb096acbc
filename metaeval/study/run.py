"""Run the study of a set of label sets against a reference and write its files (see ``metaeval.study``).

``run_study(StudyInput(...))`` is the library entry point; ``study_sweep(outcome)`` adapts what
``metaeval.pipeline.sweep.run_sweep`` returns.  Settings are the typed ``metaeval.study.settings.StudySettings``
(``analysis``: ``metrics``, ``tau``, ``bootstrap``, ``seed``; ``calibration``: ``enabled``, ``methods``, ``folds``,
``seed``, ``workers``; ``study``: ``workers``), checked before any judge was called.  ``analysis.bootstrap``
replicates with ``analysis.seed`` drive every topic-bootstrap interval: the analysis' tau CIs, the raw leaderboards
and calibration's raw-candidate CIs.

Steps: the cells' label and score files (``write_cell_files``, ``write_reference``); every cell's own work as one
task each on the sweep's executor (``study_cells``: ``metaeval.study.fanout``, ``study.workers``); then, in this
process, the files of what the tasks computed and what needs several cells: ``analyse`` (the cells' analysis parts
combined, their paired neighbour comparisons from the stored replicate vectors), ``calibrate``, the comparison
document, ``self_consistency``, ``write_study_json``.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Sequence

from metaeval.layout import ResultsLayout
from metaeval.study.settings import StudySettings

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from metaeval.study.fanout import CellWork, StudyContext
    from metaeval.study.records import Provenance, StudyDoc, Summary

    from metaeval.types import LabelSet

log = logging.getLogger(__name__)

@dataclass
class StudyInput:
    """Everything the study reads.  ``cells``: the sweep's per-cell rows (description and usage); cells without a
    row get a bare one.  ``calibratable``: cells whose judge labels the reference's own nuggets.  ``config``: the
    composed configuration as recorded (echoed in ``summary.json``; never read for a setting)."""

    layout: ResultsLayout
    label_sets: dict[str, "LabelSet"]
    reference: "LabelSet | None"
    settings: StudySettings = field(default_factory=StudySettings)
    config: dict[str, Any] = field(default_factory=dict)
    cells: list[dict[str, Any]] | None = None
    calibratable: Sequence[str] = ()
    dataset: dict[str, Any] = field(default_factory=dict)
    topics: dict[str, str] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)
    #: cells sampled k > 1 times (``sweep.samples``): cell -> its k label sets (draw 0 = ``label_sets[cell]``)
    samples: dict[str, list["LabelSet"]] = field(default_factory=dict)
    #: ``sweep.max_failed_rate``: a cell with a larger share of FAILED labels gets no figures, only the reason
    max_failed_rate: float = 0.5


def study_sweep(outcome: Any, settings: StudySettings, config: dict[str, Any], t0: float | None = None) -> "Summary":
    """The study of a finished sweep (a ``metaeval.pipeline.sweep.SweepOutcome``) with the typed study ``settings``;
    ``config`` is the composed configuration as recorded.  Returns the summary."""
    inp = StudyInput(layout=outcome.layout, label_sets=outcome.label_sets, reference=outcome.reference,
                     settings=settings, config=config, cells=outcome.cells, calibratable=outcome.calibratable,
                     dataset=outcome.dataset, topics=outcome.topics,
                     extra={"judging_s": outcome.judging_s, "stopped": outcome.stopped,
                            "runtime_start_s": getattr(outcome, "runtime_start_s", 0.0),
                            "runtime_start_what": getattr(outcome, "runtime_start_what", ""),
                            "actors_start_s": getattr(outcome, "actors_start_s", 0.0)},
                     samples=getattr(outcome, "samples", {}) or {},
                     max_failed_rate=outcome.settings.sweep.max_failed_rate)
    return run_study(inp, t0=t0)


def run_study(inp: StudyInput, t0: float | None = None) -> "Summary":
    """Compute and write every figure; returns the summary (also written as ``summary.json``/``summary.md``, and
    ``study/study.json``: records of the results schema, ``metaeval.study.records``, with the provenance of this
    run).  Runs with one BLAS thread (:func:`metaeval.forked.one_blas_thread`)."""
    from metaeval.forked import one_blas_thread
    from metaeval.process_policy import settle

    settle()  # the label sets are long-lived from here, also in the workers forked below (the command's process only)
    with one_blas_thread():
        return _run_study(inp, t0)


def _run_study(inp: StudyInput, t0: float | None) -> "Summary":
    from metaeval.io.jsonl import to_jsonable
    from metaeval.study.records import CellAnalysis, CellSummary, DatasetInfo, Summary, decode, record_provenance
    from metaeval.study.reuse import previous_summary, study_key
    from metaeval.study.summary import summary_markdown

    t0 = time.perf_counter() if t0 is None else t0
    lay = inp.layout
    rows = inp.cells if inp.cells is not None else [{"cell": cid} for cid in inp.label_sets]
    withheld = withheld_cells(rows, inp.label_sets, inp.max_failed_rate)
    key = study_key(inp.label_sets, inp.reference, inp.settings.key_parts(), inp.samples)
    if withheld:  # which cells get figures is part of what the study computed (absent: older keys still match)
        from metaeval.hashing import content_hash

        key = content_hash({"study": key, "withheld": sorted(withheld), "max_failed_rate": inp.max_failed_rate}, 32)
    previous = previous_summary(lay, key)
    prov = record_provenance()  # what computed the figures, recorded with them
    if previous is not None:  # same labels, same settings: reuse the study (and the report) as it is
        old = {c.cell: c for c in previous.cells}
        analysis = {cid: old[cid].analysis for cid in inp.label_sets if cid in old and old[cid].analysis is not None}
        calibration = {cid: old[cid].calibration for cid in inp.label_sets
                       if cid in old and old[cid].calibration is not None}
        consistency = {cid: old[cid].consistency for cid in inp.label_sets
                       if cid in old and old[cid].consistency is not None}
    else:
        t = time.perf_counter()
        scores = write_cell_files(lay, inp.label_sets)  # every cell's labels are stored, withheld ones too
        ref_scores = write_reference(lay, inp.reference)
        fig = replace(inp, label_sets={c: ls for c, ls in inp.label_sets.items() if c not in withheld},
                      samples={c: d for c, d in inp.samples.items() if c not in withheld})
        ctx, works = study_cells(fig, scores, ref_scores)  # every cell's own work, fanned out (study.fanout)
        t_fig = time.perf_counter()
        analysis, paired = analyse(lay, fig, works, ctx.ref_side)
        calibration = calibrate(lay, fig, works)
        from metaeval.study.compare import study_comparison  # the cells' natural neighbours compared

        study_comparison(lay, fig, paired, calibration)
        consistency = self_consistency(lay, fig, works)
        write_study_json(lay, fig, works, prov)
        log.debug("study of %d cell(s): %.2f s (files and pairs after the cells' tasks %.2f s)",
                  len(inp.label_sets), time.perf_counter() - t, time.perf_counter() - t_fig)
    path = str(lay.summary_json)
    cells = []
    for i, r in enumerate(rows):  # the sweep's rows (pipeline.cellstats) typed, with the study's figures
        cell = decode(CellSummary, to_jsonable(r), path, f"cells[{i}]")
        cid = cell.cell
        cells.append(replace(
            cell, withheld=withheld.get(cid),
            analysis=_typed(CellAnalysis, analysis.get(cid), path, f"cells[{i}].analysis"),
            calibration=to_jsonable(calibration[cid]) if cid in calibration else None,
            consistency=to_jsonable(consistency[cid]) if cid in consistency else None))
    summary = Summary(
        evaluation_key=key,
        evaluation_reused=previous is not None,
        experiment=str(inp.config.get("name", lay.name)),
        dataset=decode(DatasetInfo, to_jsonable(inp.dataset), path, "dataset"),
        config=_public_config(inp.config),
        judging_s=inp.extra.get("judging_s", 0.0),
        runtime_start_s=inp.extra.get("runtime_start_s", 0.0),
        runtime_start=inp.extra.get("runtime_start_what", ""),
        actors_start_s=inp.extra.get("actors_start_s", 0.0),
        stopped=inp.extra.get("stopped"),
        primary_metric=inp.settings.analysis.primary_metric,  # what summary.md and the verdict report on
        cells=tuple(cells),
        grid_notes=tuple(inp.config.get("_grid_notes") or ()),  # judges or cells of the grid that could not run here
        elapsed_s=time.perf_counter() - t0,
        provenance=prov,
    )
    lay.write_summary(summary.to_json(), summary_markdown(summary))
    return summary


def _typed(cls: Any, block: Any, path: str, where: str) -> Any:
    """``block`` as record ``cls`` (a block the analysis just computed: made JSON first, as it is written), None for
    None, a record (a reused block) as it is."""
    from metaeval.io.jsonl import to_jsonable
    from metaeval.study.records import decode

    if block is None or isinstance(block, cls):
        return block
    return decode(cls, to_jsonable(block), path, where)


# ------------------------------------------------------------------ the parts
def withheld_cells(rows: Sequence[dict[str, Any]], label_sets: dict[str, "LabelSet"],
                   max_failed_rate: float) -> dict[str, str]:
    """Cell -> why it gets no figures: a stage's FAILED share over ``max_failed_rate`` (``sweep.max_failed_rate``;
    the rule of ``metaeval.pipeline.health.failed_rate_problems``, which also sets the exit status).  Tau,
    calibration, leaderboards and the verdict of such a cell would describe the failures, not the judge: a cell
    whose every label is FAILED scores 0 everywhere, and calibration then "corrects" a constant.  Rows without
    label counts (a study run from Python) are counted from the label set's support labels."""
    from metaeval.pipeline.health import failed_rate_problems

    out: dict[str, str] = {}
    for row in rows:
        cid = row.get("cell")
        if cid not in label_sets or row.get("skipped"):
            continue
        if "labels" not in row:
            sup = label_sets[cid].labels["support"].astype(str)
            row = {**row, "labels": int(len(sup)), "failed_labels": int((sup == "FAILED").sum())}
        lines = failed_rate_problems([row], max_failed_rate)
        if lines:
            why = "; ".join(line.split(": ", 1)[1].split("; results stored")[0] for line in lines)
            out[cid] = f"{why}: no tau, calibration or verdict figures for this cell (its labels are stored)"
    return out


def write_cell_files(lay: ResultsLayout, label_sets: dict[str, "LabelSet"]) -> dict[str, "pd.DataFrame"]:
    """``labels.jsonl`` (and ``labels.provenance.json``: the judge-spec and prompt hashes of its provenance),
    ``scores.csv`` and ``runs.csv`` per cell; returns cell -> per-answer scores."""
    from metaeval.scoring import run_scores, score_answers

    from metaeval.io import LABELS_PROVENANCE, provenance_sidecar

    out = {}
    for cid, ls in label_sets.items():
        lay.write_labels(cid, ls)
        fp = {k: ls.provenance[k] for k in LABELS_PROVENANCE if k in ls.provenance}
        if fp:  # read back by load_labels, so `calibrate apply` compares the judge a model was fitted on
            lay.write_json(provenance_sidecar(lay.labels(cid)), {"cell": str(cid), **fp})
        per = score_answers(ls)
        lay.write_table(lay.scores(cid), per)
        lay.write_table(lay.runs(cid), run_scores(per))
        out[cid] = per
    return out


def write_reference(lay: ResultsLayout, reference: "LabelSet | None") -> "pd.DataFrame | None":
    from metaeval.scoring import run_scores, score_answers

    if reference is None:
        return None
    per = score_answers(reference)
    lay.write_table(lay.reference_scores, per)
    lay.write_table(lay.reference_runs, run_scores(per))
    return per


def study_cells(inp: StudyInput, scores: dict[str, "pd.DataFrame"], ref_scores: "pd.DataFrame | None"
                ) -> "tuple[StudyContext, dict[str, CellWork]]":
    """Every cell's own work (:func:`metaeval.study.fanout.cell_study`: analysis part, calibration, study.json
    figures, self-consistency) as tasks on the sweep's executor (``study.workers``: in this process, forked
    workers, or Ray tasks when the sweep's Ray runtime is up).  Returns the tasks' shared context (the reference's
    analysis side, reused by :func:`analyse`) and cell -> its results, in the cells' order.  Writes nothing: the
    steps below do."""
    from metaeval.study.compare import study_pairs
    from metaeval.study.fanout import CellTask, StudyContext, fans_out, make_context, run_cells

    names = list(inp.label_sets)
    if not names:
        return StudyContext(inp.reference, inp.settings), {}
    workers = inp.settings.fanout.workers
    in_pairs = {c for pair in study_pairs(inp) for c in pair} if inp.settings.analysis.bootstrap > 0 else set()
    ctx = make_context(inp.reference, inp.settings, ref_scores, inp.topics, fans_out(workers, len(names)))
    tasks = [CellTask(cid, inp.label_sets[cid], scores[cid], calibratable=cid in inp.calibratable,
                      paired=cid in in_pairs, draws=tuple(inp.samples.get(cid) or ()))
             for cid in names]
    t = time.perf_counter()
    ran, results = run_cells(ctx, tasks, workers)
    parts = f" (the parts of {len(tasks)} cells)" if len(ran.results) != len(tasks) else ""
    log.info("the cells' studies: %s%s, %.1f s", ran.describe(), parts, time.perf_counter() - t)
    works = dict(zip(names, results))
    for w in works.values():
        for line in w.warnings:
            log.warning("%s", line)
    return ctx, works


def analyse(lay: ResultsLayout, inp: StudyInput, works: "dict[str, CellWork]",
            ref_side: Any) -> tuple[dict[str, Any], Any]:
    """Every cell against the reference (``metaeval.analysis``: the cells' parts, computed by their tasks, combined
    on the reference's side ``ref_side`` with their paired comparisons), written to ``analysis/``; the cells are
    compared with their natural neighbours (``metaeval.study.compare.study_pairs``).  Returns (the cells'
    analysis blocks, the paired comparison table or None)."""
    from metaeval.analysis.meta_evaluation import combine
    from metaeval.study.compare import study_pairs

    parts = [w.analysis for w in works.values() if w.analysis is not None]
    if inp.reference is None or ref_side is None or not parts:
        return {}, None
    a = inp.settings.analysis
    res = combine(ref_side, parts, pairs=study_pairs(inp), variant=a.tau, n_boot=a.bootstrap, seed=a.seed)
    res.write(lay.analysis_dir)
    blocks = res.json.get("candidates", res.json)
    if isinstance(blocks, list):
        return {b.get("name"): b for b in blocks}, res.paired
    return (blocks if isinstance(blocks, dict) else {}), res.paired


def calibrate(lay: ResultsLayout, inp: StudyInput, works: "dict[str, CellWork]") -> dict[str, Any]:
    """Every cell's calibration (computed by its task, ``calibrate_study`` against the reference), written to
    ``cells/<cell>/calibration.json`` (and the fitted model, when the workflow returns one, to
    ``calibration-model.json``).  A failure is recorded, never hidden."""
    out: dict[str, Any] = {}
    for cid, w in works.items():
        if w.calibration is None:
            continue
        if "calibration" not in w.failed:
            lay.write_calibration(cid, w.calibration)
            if w.model is not None:
                lay.write_json(lay.calibration_model(cid), w.model)
        out[cid] = w.calibration
    return out


def self_consistency(lay: ResultsLayout, inp: StudyInput, works: "dict[str, CellWork]") -> dict[str, Any]:
    """For every sampled cell: its draws 1..k-1 as ``samples/labels.s<i>.jsonl`` and its self-consistency
    (``metaeval.study.consistency``, computed by its task) as ``consistency.json``, on the primary metric
    (``analysis.primary_metric``, the first of ``analysis.metrics``), with ``analysis.bootstrap`` (at most 1000)
    topic replicates and ``calibration.folds``.  A failure is recorded in the cell's row, never hidden."""
    out: dict[str, Any] = {}
    for cid, draws in inp.samples.items():
        if cid not in inp.label_sets or len(draws) < 2:
            continue
        for i, ls in enumerate(draws[1:], start=1):
            lay.write_labels(cid, ls, sample=i)
        res = works[cid].consistency
        if res is None:  # pragma: no cover - a sampled cell's task always computes it
            continue
        if "consistency" not in works[cid].failed:
            lay.write_json(lay.consistency(cid), res)
        out[cid] = res
    return out


def write_study_json(lay: ResultsLayout, inp: StudyInput, works: "dict[str, CellWork]",
                     provenance: "Provenance") -> "StudyDoc":
    """``study/study.json`` (:class:`metaeval.study.records.StudyDoc`): per cell and metric, per-topic tau and the
    raw leaderboard (the cells' tasks computed them); the disagreements (worst topics with their answers and
    labels) on the primary metric (``analysis.primary_metric``, the first of ``analysis.metrics``; recorded as
    ``primary_metric``), with the judge's replies from the cell's transcripts, and the transcript viewer."""
    from metaeval.io.jsonl import to_jsonable
    from metaeval.study.records import StudyCell, StudyDoc, decode

    a = inp.settings.analysis
    metrics = list(a.metrics)
    cells: dict[str, StudyCell] = {}
    for cid, w in works.items():
        cell = dict(w.figures)
        transcripts = _read_transcripts(lay, cid)  # read once: the replies and the viewer both come from it
        dis = (cell.get("disagreements") or {}).get(a.primary_metric)
        if dis is not None:
            _attach_replies(transcripts, dis)
        cell["transcript_view"] = _write_transcript_view(lay, inp, cid, transcripts)
        cells[cid] = decode(StudyCell, to_jsonable(cell), str(lay.study_json), f"cells.{cid}")
    doc = StudyDoc(metrics=tuple(metrics), primary_metric=a.primary_metric, variant=a.tau, bootstrap=a.bootstrap,
                   seed=a.seed, provenance=provenance, cells=cells)
    lay.write_json(lay.study_json, doc.to_json(), indent=None)
    return doc


def _read_transcripts(lay: ResultsLayout, cid: str) -> "list | Exception | None":
    """The cell's ``cells/<cell>/transcripts.jsonl`` records (None when the sweep wrote none; the
    :class:`~metaeval.errors.MetaevalError` when it cannot be read: the figures stand without what needs it)."""
    path = lay.transcripts(cid)
    if not path.exists():
        return None
    from metaeval.errors import MetaevalError
    from metaeval.io.transcripts import read_transcripts

    try:
        return read_transcripts(path)
    except MetaevalError as exc:
        return exc


def _attach_replies(transcripts: "list | Exception | None", dis: dict[str, Any]) -> None:
    """What the judge actually said for each disagreeing pair shown (from the cell's transcripts,
    :func:`_read_transcripts`, when the sweep wrote them): ``judge_reply`` (the raw reply of the assignment call,
    ``None`` for a judge that makes no model call), ``judge_position`` (the nugget's place in that call's list),
    ``judge_reasks``."""
    pairs = [(t["qid"], p) for t in dis.get("topics", []) for p in t.get("pairs", [])]
    if not pairs or transcripts is None:
        return
    from metaeval.errors import MetaevalError
    from metaeval.io.transcripts import assignment_replies

    try:
        if isinstance(transcripts, Exception):
            raise transcripts
        replies = assignment_replies(transcripts)
    except MetaevalError as exc:  # the figures stand without the replies; say why they are missing
        dis["replies_note"] = str(exc)
        return
    for qid, p in pairs:
        r = replies.get((str(qid), str(p["run_id"]), str(p["nugget"])))
        if r is not None:
            p.update(judge_reply=r.get("raw_reply"), judge_position=r.get("position"), judge_reasks=r.get("reasks"),
                     judge_model_call=r.get("raw_reply") is not None)


def _write_transcript_view(lay: ResultsLayout, inp: StudyInput, cid: str,
                           transcripts: "list | Exception | None") -> str | None:
    """``cells/<cell>/transcript_view.json`` for the report's transcript viewer (when the sweep wrote transcripts);
    returns its path relative to the results folder, or None."""
    if transcripts is None:
        return None
    from metaeval.errors import MetaevalError
    from metaeval.study.transcript_view import answer_index, transcript_view, view_json

    try:
        if isinstance(transcripts, Exception):
            raise transcripts
        view = transcript_view(transcripts, inp.reference, cid, queries=inp.topics,
                               answers=answer_index(inp.label_sets.get(cid), inp.reference))
    except MetaevalError as exc:  # the figures stand without the viewer; say why it is missing
        log.warning("no transcript viewer for %s: %s", cid, exc)
        return None
    out = lay.transcript_view(cid)
    lay.write_text(out, view_json(view) + "\n")
    return out.relative_to(lay.root).as_posix()


def _public_config(config: dict[str, Any]) -> dict[str, Any]:
    import json

    return json.loads(json.dumps(config, default=lambda o: f"<{type(o).__name__}>"))
