"""Per-cell accounting of a sweep: what its jobs cost (this run and over every stored run) and its label counts,
one row per grid cell for the study's ``summary.json``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

from metaeval.pipeline.store import ResultsStore


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

    def estimate(self, stage: str, calls: int, input_tokens: int, output_tokens: int, cost_usd: float,
                 bound: bool) -> None:
        """Count one job's estimated calls, tokens and USD (``bound``: its nugget lists are at the caps)."""
        self.est_bound = self.est_bound or bound
        self.est_calls += calls
        self.est_stage_calls[stage] = self.est_stage_calls.get(stage, 0) + calls
        self.est_input_tokens += input_tokens
        self.est_output_tokens += output_tokens
        self.est_cost_usd += cost_usd

    def charge(self, status: str, stats: dict[str, Any]) -> None:
        """Count one job this cell executed: its status and its call stats."""
        self.executed += 1
        self.failed_jobs += status == "failed"
        for k in ("judge_calls", "calls", "cache_hits", "retries", "reasks", "input_tokens", "output_tokens"):
            setattr(self, k, getattr(self, k) + int(stats.get(k, 0)))
        self.cost_usd += float(stats.get("cost_usd", 0.0))
        self.prompts.update(stats.get("prompts", []))

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


def cell_summaries(cells: Sequence[Any], stats: dict[str, CellStats], store: Any, cell_samples: dict[str, int],
                   relevance_counts: dict[str, dict[str, int]], label_sets: dict[str, Any],
                   samples: dict[str, list[Any]] | None = None) -> list[dict[str, Any]]:
    """One row per grid cell: what it is, what its jobs cost (stored totals and this run) and its label counts
    (over all k draws of a sampled cell, like its calls: a draw that FAILED counts toward the FAILED rate)."""
    rows = []
    for c in cells:
        row: dict[str, Any] = {"cell": c.id, **c.describe()}
        if c.skipped:
            row["skipped"] = c.skipped
            rows.append(row)
            continue
        st = stats[c.id]
        this_run = st.as_dict()
        row["stats"] = {**st.totals(store), "jobs": st.jobs, "reused": st.reused, "executed": st.executed,
                        **{k: v for k, v in this_run.items() if k.startswith("est_")}}
        # runs of this folder killed or interrupted mid-flight: their in-flight requests were never stored, so
        # the stored totals (requests, tokens, cost) are lower bounds (pipeline.lock)
        row["stats"]["interrupted_runs"] = len(getattr(store, "interrupted_runs", ()))  # none in a dry run
        row["this_run"] = {k: this_run[k] for k in ("executed", "reused", "failed_jobs", "judge_calls", "calls",
                                                    "cache_hits", "retries", "reasks", "cost_usd")}
        row["samples"] = cell_samples.get(c.id, 1)
        ls = label_sets.get(c.id)
        if ls is not None:
            counts = [x.failure_counts() for x in ((samples or {}).get(c.id) or [ls])]
            row["labels"] = sum(fc["labels"] for fc in counts)
            row["failed_labels"] = sum(fc["support_failed"] for fc in counts)
            row["failed_importance"] = sum(fc["importance_failed"] for fc in counts)  # pipeline.health
            row["failure_rate"] = row["failed_labels"] / row["labels"] if row["labels"] else 0.0
        if c.id in relevance_counts:
            row["relevance"] = relevance_counts[c.id]
        rows.append(row)
    return rows
