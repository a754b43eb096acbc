"""The sweep driver: run every grid cell's judge stages and assemble one label set per cell.  It stops there.

``run_sweep(config, cells)`` takes plain dicts (composed by ``metaeval sweep`` with Hydra), stores every finished
job in ``<results_dir>/<name>/jobs.jsonl`` (paths from ``metaeval.layout``; the store drives resume) and returns a
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

from metaeval.errors import ConfigError
from metaeval.layout import ResultsLayout, results_layout
from metaeval.pipeline.executors import EXECUTORS, Job
from metaeval.pipeline.grid import RELEVANCE_MODES, Cell, check_cells
from metaeval.pipeline.specs import JobSpec
from metaeval.pipeline.stages import (StageSettings, assign_job, create_job, estimate_job, importance_job, make_worker,
                                      placeholder_nuggets, relevance_job, relevant_documents, sort_and_keep)
from metaeval.pipeline.store import ResultsStore, output_problem
from metaeval.types import Topic

log = logging.getLogger(__name__)

#: (stage, total) -> object with ``update(n, cache_hits=, failures=, retries=, cost_usd=)`` and ``close()``
ProgressFactory = Callable[[str, int], Any]

@dataclass
class CellStats:
    jobs: int = 0
    reused: int = 0
    executed: int = 0
    failed_jobs: int = 0
    judge_calls: int = 0
    calls: int = 0
    cache_hits: int = 0
    retries: int = 0
    reasks: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    est_calls: int = 0
    est_input_tokens: int = 0
    est_output_tokens: int = 0
    est_cost_usd: float = 0.0
    #: the estimate is an upper bound (judge-created nugget lists assumed at the caps; relevance: every document)
    est_bound: bool = False
    #: stage -> estimated judge calls (dry run / budget); a stage is a bound when its nugget lists are not known yet
    est_stage_calls: dict = field(default_factory=dict)
    prompts: set = field(default_factory=set)
    keys: set = field(default_factory=set)

    def as_dict(self) -> dict[str, Any]:
        d = {k: v for k, v in self.__dict__.items() if k != "keys"}
        d["prompts"] = sorted(self.prompts)
        return d

    def totals(self, store: ResultsStore) -> dict[str, Any]:
        """What the cell's results cost, over every run that produced them: summed job stats from the store
        (a job shared by several cells counts for each of them; replies replayed from the response cache count at
        what they cost when first paid for, ``replayed_cost_usd``)."""
        out: dict[str, Any] = {k: 0 for k in _TOTAL_KEYS}
        out["cost_usd"] = 0.0
        prompts: set[str] = set()
        for key in self.keys:
            rec = store.get(key)
            if rec is None:
                continue
            st = rec.get("stats") or {}
            for k in _TOTAL_KEYS:
                out[k] += int(st.get(k, 0))
            # a job run again from the response cache (after a quarantine, say) cost what its replies cost when
            # they were paid for: the results' cost does not fall because this run replayed them
            out["cost_usd"] += float(st.get("cost_usd", 0.0)) + float(st.get("replayed_cost_usd", 0.0))
            out["failed_jobs"] += rec["status"] == "failed"
            prompts.update(st.get("prompts", []))
        out["prompts"] = sorted(prompts)
        return out


_TOTAL_KEYS = ("judge_calls", "calls", "cache_hits", "retries", "reasks", "input_tokens", "output_tokens", "failed_jobs")


@dataclass
class SweepOutcome:
    """What a sweep hands to the study: one label set per active cell, per-cell usage rows and the reference."""

    config: dict[str, Any]
    layout: ResultsLayout
    label_sets: dict[str, Any]
    #: one row per grid cell: description, stats (totals over stored jobs), this_run, label/failure counts
    cells: list[dict[str, Any]]
    reference: Any
    #: cells whose judge labels the reference's own nuggets (human nuggets, judge assignment): calibratable
    calibratable: list[str]
    dataset: dict[str, Any]
    topics: dict[str, str]
    judging_s: float
    stopped: str | None
    dry_run: bool
    #: cells sampled k > 1 times (``sweep.samples``): cell -> its k label sets (draw 0 = ``label_sets[cell]``)
    samples: dict[str, list[Any]] = field(default_factory=dict)
    #: drops the results folder's lock (``run_sweep(..., hold_lock=True)`` keeps it for the study and report)
    release: Callable[[], None] = lambda: None


class Sweep:
    def __init__(self, config: dict[str, Any], cells: Sequence[Cell], progress: ProgressFactory | None = None,
                 hold_lock: bool = False):
        from metaeval.data.dataset import load_dataset

        self.config = config
        #: keep the folder lock after judging until ``SweepOutcome.release()`` (the study and report write there too)
        self.hold_lock = hold_lock
        self._exec = None  # the sweep's executor (``_shared_executor``)
        #: Ray: seconds from the first actor launched to the last one ready (its judge's SDK imported), else None
        self.actor_start_s: float | None = None
        #: Ray actors the sweep's executor started (replicas of every deployment; 0 in-process)
        self.actors = 0
        self.cells = list(cells)
        self.relevance = str(config.get("sweep", {}).get("relevance", "qrels"))
        if self.relevance not in RELEVANCE_MODES:
            raise ConfigError(f"sweep.relevance={self.relevance!r}; expected one of {', '.join(RELEVANCE_MODES)}")
        sw = config.get("sweep", {})
        self.dry_run = bool(sw.get("dry_run", False))
        # the driver's checks before anything is written (the CLI ran them already; library callers get them here)
        offline = bool(sw.get("offline", False))  # a replay from the response cache sends nothing: no key needed
        check_cells(self.cells, self.relevance, need_keys=not (self.dry_run or offline), single=bool(config.get("_single")))
        self.active = [c for c in self.cells if not c.skipped]
        #: (cell id, qid) -> the documents the cell's judge graded >= min_grade (sweep.relevance=judge)
        self.judged: dict[tuple[str, str], list] = {}
        self.relevance_counts: dict[str, dict[str, int]] = {}
        self.progress = progress
        self.settings = StageSettings.from_dict(sw)
        #: sweep.samples = k: draws 0..k-1 of every assignment call of a sampling judge (issue 16)
        self.samples = int(sw.get("samples", 1) or 1)
        if self.samples < 1:
            raise ConfigError(f"sweep.samples must be an integer >= 1, got {self.samples}")
        #: cells whose dry-run counts are upper bounds (nugget lists not known before creation: the caps are assumed)
        self.bounded: set[str] = set()
        self.budget = sw.get("budget_usd")
        ds_cfg = config.get("dataset", {})
        self.dataset = load_dataset(ds_cfg.get("source") or ds_cfg["name"])
        if ds_cfg.get("nuggets"):  # an edited or manual nugget set replaces the dataset's human nuggets
            from metaeval.io.nuggets import read_nuggets

            nug = read_nuggets(ds_cfg["nuggets"])
            self.dataset.nuggets = nug[["qid", "nugget_id", "nugget", "importance"]]
            unlabelled = int((nug["importance"] == "FAILED").sum())
            if unlabelled and any(c.strategy.importance == "human" for c in self.active):
                log.warning("%s: %d nugget(s) have no importance label; they count as FAILED importance "
                            "(use strategy=human_judge_importance to let the judge label importance)", ds_cfg["nuggets"], unlabelled)
        if self.dataset.labels is None and any(c.strategy.nuggets == "human" for c in self.active):
            raise ConfigError(f"dataset {self.dataset.name!r} has no human labels; human_* strategies need them")
        if not any(len(self.dataset.documents.get(q, [])) for q in self.dataset.qids):
            # nugget creation reads documents: a dataset without any (e.g. the NIST assignment export) cannot run it
            why = f"dataset {self.dataset.name!r} has no documents, so nugget creation cannot run"
            creating = [c for c in self.active if "create" in c.strategy.judge_stages]
            if creating and (config.get("_single") or len(creating) == len(self.active)):
                raise ConfigError(f"cell {creating[0].id}: {why}; use a human_* strategy")
            for c in creating:
                c.skipped = why
            self.active = [c for c in self.active if not c.skipped]
        self.cell_samples = {c.id: self.samples_for(c) for c in self.active}  # checked before anything is written
        self.layout = results_layout(config)  # validates name and every cell id before anything is written
        for c in self.cells:
            self.layout.cell_dir(c.id)
        if self.dry_run:  # a dry run writes nothing: it reads what is stored (done jobs are not counted) if anything
            self.out = self.layout.root
            self.store = _ReadOnlyStore(self.layout.job_records() if self.layout.jobs.is_file() else {})
        else:
            self.out = self.layout.ensure()
            self.store = ResultsStore(self.layout)  # jobs, quarantine and lock paths from the layout
        self.cell_keys: dict[str, list[str]] = {}
        self.stats: dict[str, CellStats] = {c.id: CellStats() for c in self.active}
        self.spent = 0.0
        self.stopped: str | None = None
        self.topics = {q: Topic(q, self.dataset.topics.get(q, "")) for q in self.dataset.qids}
        for c in self.active:  # the simulated/replay judges read the dataset's own reference labels
            if c.judge.config.get("reference") == "dataset":
                c.judge = c.judge.with_options(reference=self.dataset.labels)

    def samples_for(self, c: Cell) -> int:
        """How many draws of its assignment calls cell ``c`` makes: ``sweep.samples`` for a sampling judge that
        assigns; 1 for a deterministic judge (it would repeat its labels: said once, in the log) or a human-assigned
        cell.  An LLM judge at temperature 0 is sampled as asked, with a warning (draws then differ only by the
        server's nondeterminism)."""
        k = self.samples
        if k == 1 or c.strategy.assignment != "judge":
            return 1
        if not c.judge.sampling:
            if self.config.get("_single"):
                raise ConfigError(f"sweep.samples={k}: judge {c.judge_name!r} (kind {c.judge.kind!r}) is deterministic, "
                                  "so its samples would repeat its labels; use a sampling judge (llm at temperature > 0, simulated)")
            log.info("%s: judge %s is deterministic; sweep.samples=%d does not apply (1 sample)", c.id, c.judge_name, k)
            return 1
        dep = c.judge.deployment
        if dep is not None and float((dep.params or {}).get("temperature", 1.0) or 0.0) == 0.0:
            log.warning("%s: sweep.samples=%d at temperature 0: the draws differ only by the server's nondeterminism "
                        "(set judge.deployment.params.temperature=0.7 or similar to sample the judge)", c.id, k)
        return k

    # ------------------------------------------------------------------ dispatch
    def _executor(self):
        rt = self.config.get("runtime", {})
        kind = resolve_executor(rt.get("executor", "serial"), [c.judge for c in self.active])
        if kind not in EXECUTORS:
            raise ConfigError(f"runtime.executor={kind!r}; expected one of {', '.join(EXECUTORS)}")
        configs = {c.worker_id: c.judge for c in self.active}  # typed JudgeSpecs: the workers build from them
        conc = {c.worker_id: c.judge.concurrency for c in self.active}
        # judges calling a deployment in sync mode: the client's limiter holds the requests to the deployment's
        # concurrency, so as many jobs again may be in progress (executors: ``prefetch``); others run exactly
        # ``concurrency`` jobs at once
        prefetch = {c.worker_id: c.judge.concurrency for c in self.active
                    if getattr(c.judge, "deployment", None) is not None
                    and getattr(c.judge.deployment, "mode", "sync") == "sync"}
        if kind == "ray":  # replicas, runtime_env, cache actor
            return EXECUTORS[kind].from_runtime(make_worker, configs, conc, rt, prefetch=prefetch)
        return EXECUTORS[kind](make_worker, configs, conc, prefetch=prefetch)

    def dispatch(self, stage: str, items: list[tuple[Cell, JobSpec, dict, int]]) -> dict[str, dict[str, Any]]:
        """Run the jobs of one stage; ``items`` are (cell, spec, payload, n_items).  Returns key -> output."""
        owners: dict[str, list[Cell]] = {}
        todo: dict[str, tuple[Cell, JobSpec, dict, float]] = {}  # key -> (first cell, spec, payload, est. USD)
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
            st.est_bound = st.est_bound or cell.id in self.bounded
            st.est_calls += calls
            st.est_stage_calls[stage] = st.est_stage_calls.get(stage, 0) + calls
            st.est_input_tokens += tin
            st.est_output_tokens += tout
            st.est_cost_usd += cost
            if spec.key not in todo:  # the first cell asking for a job dispatches it, at its judge's prices
                todo[spec.key] = (cell, spec, payload, cost)
        if self.dry_run or self.stopped or not todo:
            return self._outputs(owners)
        jobs: list[Job] = []
        for key, (cell, spec, payload, cost) in todo.items():
            if self.budget is not None and self.spent + cost > float(self.budget):
                self.stopped = (f"budget cap of ${float(self.budget):.2f} reached before stage {stage!r}: "
                                f"{len(todo) - len(jobs)} job(s) not dispatched (estimated spend so far ${self.spent:.4f})")
                log.warning(self.stopped)
                break
            self.spent += cost
            jobs.append(Job(key=key, worker_id=cell.worker_id, stage=stage, payload=payload, meta={"spec": spec}))
        bar = self.progress(stage, len(jobs)) if self.progress else None
        live = {"cache_hits": 0, "failures": 0, "retries": 0, "cost_usd": 0.0}

        def on_result(job: Job, result: Any) -> None:
            spec: JobSpec = job.meta["spec"]
            if isinstance(result, BaseException):  # redacted again here: the store never holds a key
                output, status = {"error": job_error(result, self._secrets())}, "failed"
            else:  # no reply for some unit (transport failure): keep its FAILED labels, retry on a rerun
                output, status = result, ("failed" if result.get("transport_failures") else "done")
            stats = output.pop("stats", {}) if isinstance(output, dict) else {}
            self.store.put(spec, status, output, stats)
            for cell in owners[spec.key][:1]:  # work is charged to the first cell that asked for it
                st = self.stats[cell.id]
                st.executed += 1
                st.failed_jobs += status == "failed"
                for k in ("judge_calls", "calls", "cache_hits", "retries", "reasks", "input_tokens", "output_tokens"):
                    setattr(st, k, getattr(st, k) + int(stats.get(k, 0)))
                st.cost_usd += float(stats.get("cost_usd", 0.0))
                st.prompts.update(stats.get("prompts", []))
            if bar is not None:
                live["cache_hits"] += int(stats.get("cache_hits", 0))
                live["retries"] += int(stats.get("retries", 0))
                live["cost_usd"] += float(stats.get("cost_usd", 0.0))
                failed_items = len(output.get("failures", [])) if isinstance(output, dict) else 0
                live["failures"] += (status == "failed") + failed_items
                bar.update(1, **live)

        executor = self._shared_executor()  # one per sweep: Ray actors started for one stage serve the next
        try:
            executor.run(jobs, on_result)
        finally:
            if bar is not None:
                bar.close()
        return self._outputs(owners)

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
        out = {}
        for key in owners:
            rec = self.store.get(key)
            if rec is not None:
                out[key] = rec
        return out

    # ------------------------------------------------------------------ stages
    def documents_for(self, qid: str, cell: Cell | None = None):
        """Creation's documents: the ones ``cell``'s judge graded relevant (``sweep.relevance=judge``), else those
        graded >= min_grade in the qrels (all of the topic's documents when the dataset has no qrels)."""
        if cell is not None and (cell.id, qid) in self.judged:
            return list(self.judged[(cell.id, qid)])
        memo = self.__dict__.setdefault("_docs_memo", {})  # per topic: the same for every cell (a 1,000-judge grid)
        if qid not in memo:
            docs = self.dataset.documents.get(qid, [])
            qrels = self.dataset.qrels
            if qrels is None or not len(docs):
                memo[qid] = list(docs)
            else:
                graded = qrels[(qrels["qid"] == qid) & (qrels["grade"] >= self.settings.min_grade)]
                keep = set(graded["docid"])
                memo[qid] = [d for d in docs if d.docid in keep]
        return list(memo[qid])

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
        t0 = time.perf_counter()
        s = self.settings
        if self.relevance == "judge":  # 0. relevance grading by the judge (instead of the qrels)
            self.grade_relevance()
        # 1. creation
        created: dict[tuple[str, str], list[str]] = {}
        items, index = [], {}
        for c in self.active:
            if "create" not in c.strategy.judge_stages:
                continue
            for qid in self.dataset.qids:
                docs = self.documents_for(qid, c)
                spec, payload = create_job(c.judge_id, c.prompt_id, self.topics[qid], docs, s)
                items.append((c, spec, payload, len(docs)))
                index[(c.id, qid)] = spec.key
        outs = self.dispatch("create", items)
        for (cid, qid), key in index.items():
            rec = outs.get(key)
            if rec is None and self.dry_run:  # not created yet: count importance/assignment for the caps (a bound)
                created[(cid, qid)] = placeholder_nuggets(s.max_nuggets)
                self.bounded.add(cid)
                continue
            created[(cid, qid)] = list(rec["output"].get("nuggets", [])) if rec else []
        # 2. importance
        nugget_lists: dict[tuple[str, str], list[tuple[str, str]]] = {}
        items, index = [], {}
        for c in self.active:
            for qid in self.dataset.qids:
                if c.strategy.nuggets == "judge":
                    texts = created.get((c.id, qid), [])
                else:
                    texts = self.human_nuggets(qid)
                if c.strategy.importance == "judge":
                    spec, payload = importance_job(c.judge_id, c.prompt_id, self.topics[qid], texts, self.documents_for(qid, c), s)
                    items.append((c, spec, payload, len(texts)))
                    index[(c.id, qid)] = (spec.key, texts)
                else:
                    nugget_lists[(c.id, qid)] = self.human_nuggets(qid, with_importance=True)
        outs = self.dispatch("importance", items)
        for (cid, qid), (key, texts) in index.items():
            rec = outs.get(key)
            imp = list(rec["output"].get("importance", [])) if rec else []
            imp = imp + ["FAILED"] * (len(texts) - len(imp))
            cell_created = next(c for c in self.active if c.id == cid).strategy.nuggets == "judge"
            pairs = sort_and_keep(texts, imp, s.keep_top) if cell_created else list(zip(texts, imp))
            nugget_lists[(cid, qid)] = pairs
        # 3. assignment
        items, index = [], {}
        for c in self.active:
            if c.strategy.assignment != "judge":
                continue
            for k in range(self.cell_samples[c.id]):  # sample 0 first: its keys are those of a one-sample sweep
                for a in self.dataset.answers:
                    nuggets = nugget_lists.get((c.id, a.qid), [])
                    spec, payload = assign_job(c.judge_id, c.prompt_id, self.topics[a.qid], a, nuggets, s, sample=k)
                    items.append((c, spec, payload, len(nuggets)))
                    index[(c.id, a.qid, a.run_id) + ((k,) if k else ())] = spec.key
        outs = self.dispatch("assign", items)
        label_sets = {} if self.dry_run else {c.id: self.label_set(c, nugget_lists, index, outs) for c in self.active}
        samples = {} if self.dry_run else {
            c.id: [label_sets[c.id]] + [self.label_set(c, nugget_lists, index, outs, sample=k)
                                        for k in range(1, self.cell_samples[c.id])]
            for c in self.active if self.cell_samples[c.id] > 1}
        if not self.dry_run:
            self.write_transcripts()
        self.judging_s = time.perf_counter() - t0
        self.store.close(keep_lock=self.hold_lock)
        out = self.outcome({} if self.dry_run else label_sets, {} if self.dry_run else samples)
        if self.hold_lock:
            out.release = self.store.release
        return out

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
            config=self.config, layout=self.layout, label_sets=label_sets, cells=self.cell_summaries(label_sets, samples),
            reference=ds.labels, calibratable=calibratable,
            dataset={"name": ds.name, "topics": len(ds.qids), "runs": len(ds.run_ids), "answers": len(ds.answers),
                     "provenance": ds.provenance},
            topics=dict(ds.topics), judging_s=self.judging_s, stopped=self.stopped, dry_run=self.dry_run,
            samples=samples or {})

    def human_nuggets(self, qid: str, with_importance: bool = False):
        memo = self.__dict__.setdefault("_nuggets_memo", {})  # per topic: the same for every cell
        if (qid, with_importance) not in memo:
            nug = self.dataset.nuggets
            if nug is None:
                raise ConfigError(f"dataset {self.dataset.name!r} has no human nuggets")
            g = nug[nug["qid"] == qid].sort_values("nugget_id")
            memo[(qid, with_importance)] = ([(t, str(i)) for t, i in zip(g["nugget"], g["importance"])]
                                            if with_importance else list(g["nugget"]))
        return list(memo[(qid, with_importance)])

    def label_set(self, c: Cell, nugget_lists, index, outs, sample: int = 0):
        """The cell's labels as a LabelSet (same answers as the dataset; FAILED where a job failed); ``sample`` k > 0:
        the judge's k-th draw (``sweep.samples``), named ``<cell>~s<k>``."""
        from metaeval.types import build_label_set

        if c.strategy.assignment == "human":
            ls = self.dataset.labels
            return ls.with_labels(ls.labels["support"], name=c.id, provenance={"cell": c.id})
        rows, answers = [], []
        for a in self.dataset.answers:
            nuggets = nugget_lists.get((c.id, a.qid), [])
            rec = outs.get(index.get((c.id, a.qid, a.run_id) + ((sample,) if sample else ()), ""))
            out = rec["output"] if rec else {}
            labels = list(out.get("labels", []))
            reasons = [f.get("reason") for f in out.get("failures", []) if f.get("reason")]
            raw = None if labels else (out.get("error") or "not run")
            why = raw or (reasons[0] if reasons else None)  # kept as the raw value of FAILED labels
            labels = labels + ["FAILED"] * (len(nuggets) - len(labels))
            for i, ((text, imp), lab) in enumerate(zip(nuggets, labels)):
                imp_v = imp if imp in ("vital", "okay") else "FAILED"
                sup_v = lab if lab in ("support", "partial_support", "not_support") else "FAILED"
                rows.append((a.qid, a.run_id, i, text, imp_v, sup_v, imp, lab if sup_v != "FAILED" else (why or lab), -1))
            answers.append((a.qid, a.run_id, a.text, a.response_length, -1))
        name = f"{c.id}~s{sample}" if sample else c.id
        prov = {"cell": c.describe(), **({"sample": sample} if sample else {})}
        return build_label_set(name, rows, answers, topics=dict(self.dataset.topics), provenance=prov)

    def cell_summaries(self, label_sets: dict[str, Any], samples: dict[str, list[Any]] | None = None) -> list[dict[str, Any]]:
        """One row per grid cell: what it is, what its jobs cost (stored totals and this run) and its label counts
        (over all k draws of a sampled cell, like its calls: a draw that FAILED counts toward the FAILED rate)."""
        rows = []
        for c in self.cells:
            row: dict[str, Any] = {"cell": c.id, **c.describe()}
            if c.skipped:
                row["skipped"] = c.skipped
                rows.append(row)
                continue
            st = self.stats[c.id]
            this_run = st.as_dict()
            row["stats"] = {**st.totals(self.store), "jobs": st.jobs, "reused": st.reused, "executed": st.executed,
                            **{k: v for k, v in this_run.items() if k.startswith("est_")}}
            # runs of this folder killed or interrupted mid-flight: their in-flight requests were never stored, so
            # the stored totals (requests, tokens, cost) are lower bounds (pipeline.lock)
            row["stats"]["interrupted_runs"] = len(getattr(self.store, "interrupted_runs", ()))  # none in a dry run
            row["this_run"] = {k: this_run[k] for k in ("executed", "reused", "failed_jobs", "judge_calls", "calls",
                                                        "cache_hits", "retries", "reasks", "cost_usd")}
            row["samples"] = self.cell_samples.get(c.id, 1)
            ls = label_sets.get(c.id)
            if ls is not None:
                counts = [x.failure_counts() for x in ((samples or {}).get(c.id) or [ls])]
                row["labels"] = sum(fc["labels"] for fc in counts)
                row["failed_labels"] = sum(fc["support_failed"] for fc in counts)
                row["failed_importance"] = sum(fc["importance_failed"] for fc in counts)  # pipeline.health
                row["failure_rate"] = row["failed_labels"] / row["labels"] if row["labels"] else 0.0
            if c.id in self.relevance_counts:
                row["relevance"] = self.relevance_counts[c.id]
            rows.append(row)
        return rows


def job_error(exc: BaseException, secrets: Sequence[str] = ()) -> str:
    """The stored text of a job that raised: ``Type: message`` with every key in ``secrets`` (and any 8+-character
    fragment of one) replaced - the client redacts what it raises, this is the store's own guarantee."""
    from metaeval.judges.backends.base import redact

    text = f"{type(exc).__name__}: {exc}"
    for secret in secrets:
        text = redact(text, secret)
    return text


def resolve_executor(kind: str, judges: Sequence[Any]) -> str:
    """``runtime.executor=auto`` (the default runtime) on one machine: Ray when the grid's judges call two or more
    model-server deployments (one actor process per deployment) or a deployment asks for what only Ray gives
    (``replicas`` > 1, ``resources`` such as GPUs); otherwise the in-process asyncio executor.  One deployment's
    network-bound calls need no second process: measured with ``benchmarks.bench_scale`` (NIST, 1,721 calls,
    32/64/128 in flight), the serial executor's judging time is 0.96-1.02x the bare SDK script's and Ray's
    0.85-1.09x (``replicas: auto``), before Ray's own start (4-6 s on 2 cores); offline judges (lexical,
    simulated, embedding, local LLM) would likewise only pay that start."""
    if kind != "auto":
        return kind
    deps = [j.deployment for j in judges if getattr(j, "deployment", None) is not None]
    # replicas: auto never asks for Ray by itself (it adds actors only on a Ray runtime)
    needs_ray = any(isinstance(r := getattr(d, "replicas", 1), int) and r > 1 or getattr(d, "resources", None)
                    for d in deps)
    return "ray" if needs_ray or len({getattr(d, "name", id(d)) for d in deps}) >= 2 else "serial"


class _ReadOnlyStore:
    """The store a dry run reads: stored job records by key; nothing can be written."""

    def __init__(self, records: dict[str, dict[str, Any]]):
        self._records = records

    def get(self, key: str) -> dict[str, Any] | None:
        return self._records.get(key)

    def transcripts(self, key: str) -> list[dict[str, Any]]:
        out = (self._records.get(key) or {}).get("output")
        return list(out.get("transcripts") or []) if isinstance(out, dict) else []

    def put(self, *args: Any, **kwargs: Any) -> None:  # pragma: no cover - a dry run dispatches nothing
        raise RuntimeError("a dry run stores nothing")

    def close(self, keep_lock: bool = False) -> None:
        pass

    def release(self) -> None:
        pass


def run_sweep(config: dict[str, Any], cells: Sequence[Cell], progress: ProgressFactory | None = None,
              hold_lock: bool = False) -> SweepOutcome:
    """Judge every cell and return its label sets.  ``hold_lock``: keep the results folder's lock after judging;
    the caller writes the study and report and then calls ``outcome.release()`` (a second sweep of the same
    folder waits for neither half-written summaries nor a half-written report)."""
    return Sweep(config, cells, progress, hold_lock=hold_lock).run()
