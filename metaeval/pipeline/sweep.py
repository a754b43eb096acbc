"""The sweep: run every grid cell's judge stages and assemble one label set per cell.  It stops there.

``run_sweep(settings, cells)`` takes the typed ``PipelineSettings`` (built once at the edge,
``metaeval.workflow.settings``) and the grid's cells, stores every finished job in ``<results_dir>/<name>/jobs.jsonl``
(paths from ``metaeval.layout``; the store drives resume) and returns a
:class:`SweepOutcome`: the label sets, the per-cell usage rows and the reference.  Scores, analysis, calibration,
``summary.json`` and the report are the study's and the report's (``metaeval.study``, ``metaeval.report``).

Stages run in the paper's order with a barrier between them ([relevance ->] creation -> importance -> assignment),
jobs are deduplicated across cells by their spec key, and jobs already in the store are not sent again.  With
``sweep.relevance=judge`` the judge of every cell that creates nuggets first grades all of a topic's candidate
documents 0-3 (UMBRELA), and creation uses those it graded >= ``sweep.min_grade`` instead of the dataset's qrels.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from metaeval.layout import ResultsLayout
from metaeval.pipeline.cellstats import CellStats, cell_summaries
from metaeval.pipeline.choose_executor import make_executor
from metaeval.pipeline.executors import Job
from metaeval.pipeline.grid import Cell
from metaeval.pipeline.labelsets import cell_label_set
from metaeval.pipeline.sweep_plan import SweepPlan, plan_sweep
from metaeval.pipeline.settings import PipelineSettings
from metaeval.pipeline.specs import JobSpec
from metaeval.pipeline.stages import (assign_job, create_job, estimate_job, importance_job, make_worker,
                                      placeholder_nuggets, relevance_job, relevant_documents, sort_and_keep)
from metaeval.pipeline.store import ResultsStore, output_problem
from metaeval.pipeline.store_views import ReadOnlyStore, job_error
from metaeval.pipeline.topic_inputs import TopicInputs

log = logging.getLogger(__name__)

#: (stage, total) -> object with ``update(n, cache_hits=, failures=, retries=, cost_usd=)`` and ``close()``
ProgressFactory = Callable[[str, int], Any]


@dataclass
class SweepOutcome:
    """What a sweep hands to the study: one label set per active cell, per-cell usage rows and the reference."""

    settings: PipelineSettings
    layout: ResultsLayout
    label_sets: dict[str, Any]
    #: one row per grid cell: description, stats (totals over stored jobs), this_run, label/failure counts
    cells: list[dict[str, Any]]
    reference: Any
    #: cells whose judge labels the reference's own nuggets (human nuggets, judge assignment): calibratable
    calibratable: list[str]
    dataset: dict[str, Any]
    topics: dict[str, str]
    #: the stages' wall time less ``runtime_start_s`` (job building, dispatch, the calls, store, label sets; a Ray
    #: replica started after the first of its deployment, or restarted, starts inside it)
    judging_s: float
    stopped: str | None
    dry_run: bool
    #: cells sampled k > 1 times (``sweep.samples``): cell -> its k label sets (draw 0 = ``label_sets[cell]``)
    samples: dict[str, list[Any]] = field(default_factory=dict)
    #: the executor's own start-up in this sweep, seconds, and what it was (Ray's start; the judges' SDK imports
    #: in-process); not in ``judging_s``
    runtime_start_s: float = 0.0
    runtime_start_what: str = ""
    #: the part of ``runtime_start_s`` that was the Ray actors' start (their processes, judges and SDK imports,
    #: until the first job could go out); 0 in-process
    actors_start_s: float = 0.0
    #: drops the results folder's lock (``run_sweep(..., hold_lock=True)`` keeps it for the study and report)
    release: Callable[[], None] = lambda: None


class Sweep:
    """One sweep's judging: every stage's jobs deduplicated across cells, dispatched on one executor, stored.  It
    receives what :func:`run_sweep` prepared (typed settings, the plan with the loaded dataset, the layout and the
    store); it loads and checks nothing itself."""

    def __init__(self, settings: PipelineSettings, plan: SweepPlan, layout: ResultsLayout, store: Any,
                 progress: ProgressFactory | None = None, hold_lock: bool = False,
                 when_idle: Callable[[], Any] | None = None):
        self.pipeline = settings
        #: the caller's preparation for what follows the judging (imports), given to the executor for the last
        #: stage, assignment: it runs while that stage's last jobs are in flight (``AsyncioExecutor.run``)
        self.when_idle = when_idle
        self.settings = settings.sweep  # batch sizes and caps of every stage job (``metaeval.pipeline.stages``)
        self.relevance = settings.sweep.relevance
        self.dry_run = settings.sweep.dry_run
        self.budget = settings.sweep.budget_usd
        #: keep the folder lock after judging until ``SweepOutcome.release()`` (the study and report write there too)
        self.hold_lock = hold_lock
        self.progress = progress
        self.dataset, self.cells, self.active = plan.dataset, plan.cells, plan.active
        self.cell_samples, self.topics = plan.cell_samples, plan.topics
        self.inputs = TopicInputs(plan.dataset, settings.sweep.min_grade)  # per topic, once for every cell
        self.layout, self.store = layout, store
        self._exec = None  # the sweep's executor (``_shared_executor``)
        #: Ray: seconds from the first actor launched to the last one ready (its judge's SDK imported), else None
        self.actor_start_s: float | None = None
        #: Ray actors the sweep's executor started (replicas of every deployment; 0 in-process)
        self.actors = 0
        #: (cell id, qid) -> the documents the cell's judge graded >= min_grade (sweep.relevance=judge)
        self.judged: dict[tuple[str, str], list] = {}
        self.relevance_counts: dict[str, dict[str, int]] = {}
        #: cells whose dry-run counts are upper bounds (nugget lists not known before creation: the caps are assumed)
        self.bounded: set[str] = set()
        self.cell_keys: dict[str, list[str]] = {}
        self.stats: dict[str, CellStats] = {c.id: CellStats() for c in self.active}
        self.spent = 0.0
        self.stopped: str | None = None
        self.judging_s = 0.0
        #: the executor's own start inside the stages' wall time (Ray's start; in-process, the judges' SDK imports),
        #: reported apart and not in ``judging_s``; ``runtime_start_what`` says which
        self.runtime_start_s = 0.0
        self.runtime_start_what = ""
        self.actors_start_s = 0.0

    # ------------------------------------------------------------------ dispatch
    def _executor(self):
        return make_executor(self.pipeline.runtime, self.active, make_worker)

    def dispatch(self, stage: str, items: list[tuple[Cell, JobSpec, dict, int]]) -> dict[str, dict[str, Any]]:
        """Run the jobs of one stage; ``items`` are (cell, spec, payload, n_items).  Returns key -> output."""
        owners, todo = self._jobs_to_run(stage, items)
        if self.dry_run or self.stopped or not todo:
            return self._outputs(owners)
        jobs = self._within_budget(stage, todo)
        bar = self.progress(stage, len(jobs)) if self.progress else None
        live = {"cache_hits": 0, "failures": 0, "retries": 0, "cost_usd": 0.0}

        def on_result(job: Job, result: Any) -> None:
            output, status, stats = self._store_result(job, result)
            self.stats[owners[job.key][0].id].charge(status, stats)  # charged to the first cell that asked for it
            if bar is not None:
                live["cache_hits"] += int(stats.get("cache_hits", 0))
                live["retries"] += int(stats.get("retries", 0))
                live["cost_usd"] += float(stats.get("cost_usd", 0.0))
                failed_items = len(output.get("failures", [])) if isinstance(output, dict) else 0
                live["failures"] += int(status == "failed" or failed_items > 0)  # jobs, each counted once
                bar.update(1, **live)

        executor = self._shared_executor()  # one per sweep: Ray actors started for one stage serve the next
        try:
            executor.run(jobs, on_result, when_draining=self.when_idle if stage == "assign" else None)
        finally:
            if bar is not None:
                bar.close()
        return self._outputs(owners)

    def _jobs_to_run(self, stage: str, items: list[tuple[Cell, JobSpec, dict, int]]):
        """(owners: key -> the cells asking for it, todo: key -> (first cell, spec, payload, est. USD)) with every
        cell's job counts and estimates updated; a stored job whose output is usable is reused, one that is not is
        set aside and run again."""
        owners: dict[str, list[Cell]] = {}
        todo: dict[str, tuple[Cell, JobSpec, dict, float]] = {}
        for cell, spec, payload, n in items:
            owners.setdefault(spec.key, []).append(cell)
            self.cell_keys.setdefault(cell.id, []).append(spec.key)  # in stage order: the cell's transcript
            st = self.stats[cell.id]
            st.jobs += 1
            st.keys.add(spec.key)
            rec = self.store.get(spec.key)
            if rec is not None and rec["status"] == "done":
                problem = output_problem(stage, rec.get("output"), n)
                if problem is None:
                    st.reused += 1
                    continue
                set_aside = getattr(self.store, "set_aside", None)  # a dry run's view of the store has none
                if set_aside is not None:
                    set_aside(spec.key, problem)
            calls, tin, tout, cost = estimate_job(stage, n, payload, self.settings, cell.judge.prices)
            if not cell.judge.prompted:  # lexical, embedding, simulated: no model is prompted, no token is sent
                tin = tout = 0
            st.estimate(stage, calls, tin, tout, cost, bound=cell.id in self.bounded)
            if spec.key not in todo:  # the first cell asking for a job dispatches it, at its judge's prices
                todo[spec.key] = (cell, spec, payload, cost)
        return owners, todo

    def _within_budget(self, stage: str, todo: dict[str, tuple[Cell, JobSpec, dict, float]]) -> list[Job]:
        """The jobs to send, in order, while the estimated spend stays within ``sweep.budget_usd`` (the rest are
        not sent: ``stopped`` says why)."""
        jobs: list[Job] = []
        for key, (cell, spec, payload, cost) in todo.items():
            if self.budget is not None and self.spent + cost > float(self.budget):
                self.stopped = (f"budget cap of ${float(self.budget):.2f} reached before stage {stage!r}: "
                                f"{len(todo) - len(jobs)} job(s) not dispatched (estimated spend so far ${self.spent:.4f})")
                log.warning(self.stopped)
                break
            self.spent += cost
            jobs.append(Job(key=key, worker_id=cell.worker_id, stage=stage, payload=payload, meta={"spec": spec}))
        return jobs

    def _store_result(self, job: Job, result: Any) -> tuple[Any, str, dict[str, Any]]:
        """Store one finished job: (output, status, call stats).  A job that raised is stored FAILED with its
        error (keys redacted again: the store never holds one); a job with a transport failure in some unit keeps
        its FAILED labels and is retried on a rerun."""
        spec: JobSpec = job.meta["spec"]
        if isinstance(result, BaseException):
            output, status = {"error": job_error(result, self._secrets())}, "failed"
        else:
            output, status = result, ("failed" if result.get("transport_failures") else "done")
        stats = output.pop("stats", {}) if isinstance(output, dict) else {}
        self.store.put(spec, status, output, stats)
        return output, status, stats

    def _shared_executor(self):
        """The sweep's executor, built at the first stage with jobs and shut down when the sweep ends
        (``run``): actors, replicas and the cache actor are started once, not once per stage."""
        if self._exec is None:
            self._exec = self._executor()
        return self._exec

    def close_executor(self) -> None:
        ex, self._exec = self._exec, None
        if ex is not None:
            self.actor_start_s = getattr(ex, "actor_start_s", None)
            self.actors = getattr(ex, "actor_count", 0)
            ex.shutdown()

    def _secrets(self) -> list[str]:
        """The API keys of the active judges (from their ``api_key_env`` variables; never stored)."""
        import os

        return [v for v in {os.environ.get(c.judge.key_env or "") for c in self.active if c.judge.key_env} if v]

    def _outputs(self, owners: dict[str, list[Cell]]) -> dict[str, dict[str, Any]]:
        return {key: rec for key in owners if (rec := self.store.get(key)) is not None}

    # ------------------------------------------------------------------ stages
    def documents_for(self, qid: str, cell: Cell | None = None):
        """Creation's documents: the ones ``cell``'s judge graded relevant (``sweep.relevance=judge``), else the
        topic's (``TopicInputs.documents``: qrels grade >= min_grade)."""
        if cell is not None and (cell.id, qid) in self.judged:
            return list(self.judged[(cell.id, qid)])
        return self.inputs.documents(qid)

    def grade_relevance(self) -> None:
        """Stage 0 (``sweep.relevance=judge``): per (judge, prompt, topic) one job grading all candidate documents
        in batches; fills ``self.judged`` and per-cell counts (documents, relevant, FAILED grades)."""
        items, index = [], {}
        for c in self.active:
            if "create" not in c.strategy.judge_stages:
                continue
            for qid in self.dataset.qids:
                docs = list(self.dataset.documents.get(qid, []))
                spec, payload = relevance_job(c.judge_id, c.prompt_id, self.topics[qid], docs, self.settings)
                items.append((c, spec, payload, len(docs)))
                index[(c.id, qid)] = (spec.key, docs)
        outs = self.dispatch("relevance", items)
        for (cid, qid), (key, docs) in index.items():
            rec = outs.get(key)
            if rec is None:  # not run: a dry run estimates creation over every candidate, a budget stop creates nothing
                self.judged[(cid, qid)] = docs if self.dry_run else []
                if self.dry_run:
                    self.bounded.add(cid)
                continue
            kept, n_failed = relevant_documents(docs, rec["output"], self.settings.min_grade)
            self.judged[(cid, qid)] = kept
            n = self.relevance_counts.setdefault(cid, {"documents": 0, "relevant": 0, "failed_grades": 0})
            n["documents"] += len(docs)
            n["relevant"] += len(kept)
            n["failed_grades"] += n_failed
        for cid, n in self.relevance_counts.items():
            if n["failed_grades"]:
                log.warning("%s: %d of %d relevance grade(s) FAILED; those documents are left out of nugget creation",
                            cid, n["failed_grades"], n["documents"])

    def run(self) -> "SweepOutcome":
        """Every stage in order (one executor for all of them), then the label sets."""
        try:
            return self._run_stages()
        finally:
            self.close_executor()

    def _run_stages(self) -> "SweepOutcome":
        from metaeval.process_policy import settle

        settle()  # dataset, jobs and configuration are long-lived from here (the command's process only)
        t0 = time.perf_counter()
        if self.relevance == "judge":  # 0. relevance grading by the judge (instead of the qrels)
            self.grade_relevance()
        created = self.create_nuggets()  # 1. creation
        nugget_lists = self.label_importance(created)  # 2. importance
        label_sets, samples = self.assign(nugget_lists)  # 3. assignment
        if not self.dry_run:
            self.write_transcripts()
        # judging = the stages' wall time less the executor's own start-up (Ray's GCS, raylet and agents, then the
        # wait for its actors - process, judge, SDK import - before the first job goes out; in-process, the judges'
        # SDK imports): the figure
        # benchmarks/bench_scale and the bare-SDK scripts time (they start Ray and import the SDK before the timer)
        self.runtime_start_s = float(getattr(self._exec, "runtime_start_s", 0.0) or 0.0)
        self.runtime_start_what = str(getattr(self._exec, "runtime_start_what", "") or "")
        self.actors_start_s = float(getattr(self._exec, "actors_start_s", 0.0) or 0.0)
        # ... less the wait, after the last job, for the preparation of the study (``when_idle``) to finish
        prep = float(getattr(self._exec, "preparation_wait_s", 0.0) or 0.0)
        self.judging_s = time.perf_counter() - t0 - self.runtime_start_s - prep
        self.store.close(keep_lock=self.hold_lock)
        out = self.outcome({} if self.dry_run else label_sets, {} if self.dry_run else samples)
        if self.hold_lock:
            out.release = self.store.release
        return out

    def create_nuggets(self) -> dict[tuple[str, str], list[str]]:
        """Stage 1: per (cell that creates, topic) one job over the creation windows; (cell, qid) -> nugget texts
        (in a dry run the caps stand in for lists not created yet: the counts downstream are bounds)."""
        created: dict[tuple[str, str], list[str]] = {}
        items, index = [], {}
        for c in self.active:
            if "create" not in c.strategy.judge_stages:
                continue
            for qid in self.dataset.qids:
                docs = self.documents_for(qid, c)
                spec, payload = create_job(c.judge_id, c.prompt_id, self.topics[qid], docs, self.settings)
                items.append((c, spec, payload, len(docs)))
                index[(c.id, qid)] = spec.key
        outs = self.dispatch("create", items)
        for (cid, qid), key in index.items():
            rec = outs.get(key)
            if rec is None and self.dry_run:  # not created yet: count importance/assignment for the caps (a bound)
                created[(cid, qid)] = placeholder_nuggets(self.settings.max_nuggets)
                self.bounded.add(cid)
                continue
            created[(cid, qid)] = list(rec["output"].get("nuggets", [])) if rec else []
        return created

    def label_importance(self, created: dict[tuple[str, str], list[str]]) -> dict[tuple[str, str], list[tuple[str, str]]]:
        """Stage 2: (cell, qid) -> the (nugget, importance) list the cell assigns: the human nuggets with their
        importance, or the judge's importance of its own / the human nuggets (judge-created lists sorted vital
        first and cut to ``sweep.keep_top``)."""
        nugget_lists: dict[tuple[str, str], list[tuple[str, str]]] = {}
        items, index = [], {}
        for c in self.active:
            for qid in self.dataset.qids:
                if c.strategy.importance != "judge":
                    nugget_lists[(c.id, qid)] = self.inputs.human_nuggets(qid, with_importance=True)
                    continue
                texts = (created.get((c.id, qid), []) if c.strategy.nuggets == "judge"
                         else self.inputs.human_nuggets(qid))
                spec, payload = importance_job(c.judge_id, c.prompt_id, self.topics[qid], texts,
                                               self.documents_for(qid, c), self.settings)
                items.append((c, spec, payload, len(texts)))
                index[(c.id, qid)] = (spec.key, texts)
        outs = self.dispatch("importance", items)
        creates = {c.id for c in self.active if c.strategy.nuggets == "judge"}
        for (cid, qid), (key, texts) in index.items():
            rec = outs.get(key)
            imp = list(rec["output"].get("importance", [])) if rec else []
            imp = imp + ["FAILED"] * (len(texts) - len(imp))
            nugget_lists[(cid, qid)] = (sort_and_keep(texts, imp, self.settings.keep_top) if cid in creates
                                        else list(zip(texts, imp)))
        return nugget_lists

    def assign(self, nugget_lists: dict[tuple[str, str], list[tuple[str, str]]]):
        """Stage 3: per (cell, answer, sample) one job over the assignment batches; returns the label sets (cell ->
        draw 0) and, for cells sampled k > 1 times, cell -> its k label sets."""
        items, index = [], {}
        for c in self.active:
            if c.strategy.assignment != "judge":
                continue
            for k in range(self.cell_samples[c.id]):  # sample 0 first: its keys are those of a one-sample sweep
                for a in self.dataset.answers:
                    nuggets = nugget_lists.get((c.id, a.qid), [])
                    spec, payload = assign_job(c.judge_id, c.prompt_id, self.topics[a.qid], a, nuggets, self.settings,
                                               sample=k)
                    items.append((c, spec, payload, len(nuggets)))
                    index[(c.id, a.qid, a.run_id) + ((k,) if k else ())] = spec.key
        outs = self.dispatch("assign", items)
        ds = self.dataset
        if self.dry_run:  # nothing was judged: no label sets to build (a 1,000-judge dry run)
            return {}, {}
        label_sets = {c.id: cell_label_set(ds, c, nugget_lists, index, outs) for c in self.active}
        samples = {c.id: [label_sets[c.id]] + [cell_label_set(ds, c, nugget_lists, index, outs, sample=k)
                                               for k in range(1, self.cell_samples[c.id])]
                   for c in self.active if self.cell_samples[c.id] > 1}
        return label_sets, samples

    def write_transcripts(self) -> None:
        """Per cell, ``layout.transcripts(cell)``: the transcript records of every job the cell used (relevance,
        creation, importance, assignment, in that order; a job shared by several cells is in each of their files;
        a reused job's records come from the store).  Cells whose judge made no job write nothing."""
        from metaeval.io.jsonl import write_jsonl

        for c in self.active:
            keys = list(dict.fromkeys(self.cell_keys.get(c.id, [])))
            if not keys:
                continue
            # streamed: read back job by job from jobs.jsonl (the store does not hold transcripts in memory)
            write_jsonl(self.layout.transcripts(c.id), (r for key in keys for r in self.store.transcripts(key)))

    def outcome(self, label_sets: dict[str, Any], samples: dict[str, list[Any]] | None = None) -> SweepOutcome:
        ds = self.dataset
        calibratable = [c.id for c in self.active if c.strategy.nuggets == "human" and c.strategy.assignment == "judge"
                        and c.id in label_sets]
        return SweepOutcome(
            settings=self.pipeline, layout=self.layout, label_sets=label_sets,
            cells=cell_summaries(self.cells, self.stats, self.store, self.cell_samples, self.relevance_counts,
                                 label_sets, samples),
            reference=ds.labels, calibratable=calibratable,
            dataset={"name": ds.name, "topics": len(ds.qids), "runs": len(ds.run_ids), "answers": len(ds.answers),
                     "provenance": ds.provenance},
            topics=dict(ds.topics), judging_s=self.judging_s, stopped=self.stopped, dry_run=self.dry_run,
            samples=samples or {}, runtime_start_s=self.runtime_start_s, runtime_start_what=self.runtime_start_what,
            actors_start_s=self.actors_start_s)


def open_sweep(settings: PipelineSettings, cells: Sequence[Cell], progress: ProgressFactory | None = None,
               hold_lock: bool = False, when_idle: Callable[[], Any] | None = None) -> Sweep:
    """A ready :class:`Sweep`: every check (judges, dataset, cell ids) done and the dataset loaded; the store
    opened (and the folder locked) unless it is a dry run, which writes nothing and reads what is stored."""
    plan = plan_sweep(settings, cells)
    layout = ResultsLayout(settings.results_dir, settings.name)
    for c in plan.cells:  # validates every cell id before anything is written
        layout.cell_dir(c.id)
    if settings.sweep.dry_run:  # done jobs are not counted
        store: Any = ReadOnlyStore(layout.job_records() if layout.jobs.is_file() else {})
    else:
        layout.ensure()
        store = ResultsStore(layout)  # jobs, quarantine and lock paths from the layout
    return Sweep(settings, plan, layout, store, progress, hold_lock=hold_lock, when_idle=when_idle)


def run_sweep(settings: PipelineSettings, cells: Sequence[Cell], progress: ProgressFactory | None = None,
              hold_lock: bool = False, when_idle: Callable[[], Any] | None = None) -> SweepOutcome:
    """Judge every cell and return its label sets (:func:`open_sweep`, then ``Sweep.run``).  ``hold_lock``: keep
    the results folder's lock after judging; the caller writes the study and report and then calls
    ``outcome.release()`` (a second sweep of the same folder waits for neither half-written summaries nor a
    half-written report).  ``when_idle``: see ``Sweep.when_idle``."""
    return open_sweep(settings, cells, progress, hold_lock=hold_lock, when_idle=when_idle).run()
