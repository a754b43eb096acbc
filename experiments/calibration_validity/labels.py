"""Judge label files on every NIST (nugget, answer) pair, for the coverage study (``run.py``).

Writes ``results/calibration_validity/labels/{nist,lexical,lexical_strict,fig6,run_bias}.jl`` (NIST assignment
format, same rows as the NIST file):

* ``lexical`` / ``lexical_strict``: the offline ``LexicalJudge`` with the catalog's settings
  (``metaeval/conf/judge/lexical{,_strict}.yaml``: support/partial thresholds 0.6/0.3 and 0.8/0.5);
* ``embedding``: the ``EmbeddingJudge`` when ``sentence_transformers`` and a model are installed (skipped otherwise;
  ``run.py`` says so); ``labels.py embedding --until=HH:MM`` (UTC) labels it run by run with a memoised encode and
  one torch thread (:func:`memo_encoder`, :func:`labels_by_run`: ~13 min on a shared 2-core machine instead of ~50),
  rewriting the file after each run and stopping after the run that passes ``HH:MM`` (``--resume``: keep the
  runs an existing file holds);
* ``embedding_auto``: ``labels.py auto --until=HH:MM``, the same on the Mistral-made nuggets of ``lexical_auto``
  (:func:`mistral_skeleton`);
* ``fig6``: every label redrawn through the paper's Figure 6 confusion (``metaeval.simulation.simulate_judge``),
  one fixed draw (stream ``simulation.calibration_validity``, seed 0);
* ``hetero`` / ``skewed``: heteroscedastic and skewed per-topic differences (:func:`hetero_skew_labels`);
* ``run_bias``: the simulation's per-run-bias judge (``simulate_structured(kind="run_bias")``): each run gets a
  strictness shift ``s_r ~ N(0, 0.8^2)``, one fixed draw.

    .venv/bin/python experiments/calibration_validity/labels.py
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
DATA = Path(os.environ.get("METAEVAL_SHARED_DATA", ROOT.parent / "shared" / "data"))
NIST = DATA / "trec-rag-2024" / "nugget_assignment.20241108.jl"
OUT = ROOT / "results" / "calibration_validity" / "labels"


def offline_judge_labels(human, judge, name: str, done: dict | None = None):
    """``judge`` (a ``metaeval.judges`` Judge) on every (nugget, answer) pair of ``human``; same rows.  ``done``:
    labels per (qid, run_id) already judged (used, not judged again) and filled with the new ones."""
    from metaeval.judges.base import SyncJudge
    from metaeval.types import Answer, Topic

    lab = human.labels
    texts = dict(zip(zip(human.answers["qid"], human.answers["run_id"]), human.answers["answer_text"]))
    out = np.empty(len(lab), dtype=object)
    with SyncJudge(judge) as sj:
        for (q, r), idx in lab.groupby(["qid", "run_id"], sort=False).indices.items():
            if done is not None and (q, r) in done:
                out[idx] = done[(q, r)]
                continue
            nuggets = lab["nugget"].to_numpy()[idx].tolist()
            labels = []
            for i in range(0, len(nuggets), 10):
                res = sj.assign(Topic(q, human.topics.get(q, "")), Answer(r, q, texts[(q, r)] or ""), nuggets[i:i + 10])
                labels += [lb.value for lb in res.labels]
            out[idx] = labels
            if done is not None:
                done[(q, r)] = labels
    return human.with_labels(out, name=name, provenance={"judge_spec": name, "on": human.name})


def memo_encoder(judge):
    """Give ``judge`` (an ``EmbeddingJudge``) an encode that embeds each distinct text once per process: a topic's
    nuggets recur in all 45 runs' calls and an answer's sentence windows in each of its 10-nugget calls (about 3x
    fewer texts encoded on NIST).  The embedding of a text does not depend on what it is batched with beyond float
    rounding (padding is masked), so labels agree with the plain judge up to a cosine within ~1e-6 of a threshold."""
    plain, memo = judge._encode, {}

    def encode(texts):
        new = list(dict.fromkeys(t for t in texts if t not in memo))
        if new:
            memo.update(zip(new, plain(new)))
        return np.stack([memo[t] for t in texts])

    judge._encode = encode
    return judge


def labels_by_run(human, judge, name: str, out: Path, until: float | None = None):
    """:func:`offline_judge_labels` one run at a time over every topic (sorted run ids), rewriting ``out`` with the
    runs done after each; stops after the run that passes the wall clock ``until`` (epoch seconds).  A partial file
    holds every topic of its runs, so the topic designs of ``run.py`` are unchanged (on fewer runs)."""
    import time

    from metaeval.io.assignments import write_assignments

    runs = sorted(human.labels["run_id"].astype(str).unique())
    done, judged = [], {}
    if "--resume" in sys.argv[1:] and out.exists():  # keep the runs an earlier (stopped) call labelled
        from metaeval.io import load_labels

        old = load_labels(str(out)).labels
        for (q, r), idx in old.groupby(["qid", "run_id"], sort=False).indices.items():
            judged[(q, r)] = old["support"].astype(object).to_numpy()[idx].tolist()
    for r in runs:
        done.append(r)
        if all((q, r) in judged for q in human.labels.loc[human.labels["run_id"] == r, "qid"].unique()):
            continue
        ls = offline_judge_labels(human.subset(run_ids=done), judge, name, judged)
        write_assignments(ls, out)
        print(f"{name}: {len(done)} of {len(runs)} runs ({time.strftime('%H:%M:%S', time.gmtime())} UTC)", flush=True)
        if until is not None and time.time() > until:
            break
    return done


def mistral_skeleton(out: Path) -> Path:
    """The NIST answers with the Mistral-made nuggets (``nuggetizer-interop/rag24_nuggets_mistral.jsonl``, the
    nuggets of ``lexical_auto``'s sweep) in the NIST assignment format, every assignment ``not_support`` as a
    placeholder that the judge overwrites: the rows an ``embedding_auto`` label file needs."""
    import json

    nug = {}
    for line in (DATA / "nuggetizer-interop" / "rag24_nuggets_mistral.jsonl").open(encoding="utf-8"):
        d = json.loads(line)
        nug[d["qid"]] = d["nuggets"]
    with NIST.open(encoding="utf-8") as f, out.open("w", encoding="utf-8") as w:
        for line in f:
            d = json.loads(line)
            d["nuggets"] = [{"text": n["text"], "importance": n.get("importance", "okay"), "assignment": "not_support"}
                            for n in nug[d["qid"]]]
            w.write(json.dumps(d) + "\n")
    return out


def run_bias_labels(human, seed: int = 0):
    from metaeval.random_streams import stream
    from metaeval.simulation import codes_to_labels, labels_to_codes, simulate_structured

    lab = human.labels
    codes = labels_to_codes(lab["support"].astype(object).to_numpy())
    run_idx = lab["run_id"].astype("category").cat.codes.to_numpy()
    topic_idx = lab["qid"].astype("category").cat.codes.to_numpy()
    zero = np.zeros(len(lab))
    new = simulate_structured(codes, run_idx, topic_idx, zero, "run_bias", stream(seed, "simulation.calibration_validity", "run_bias"))
    return human.with_labels(codes_to_labels(new), name="run_bias", provenance={"judge_spec": "run_bias", "on": human.name})


def hetero_skew_labels(human, kind: str, seed: int = 0):
    """Judges that break the equal-variance / symmetric-error assumptions (one fixed draw each):

    * ``hetero`` (heteroscedastic per-topic differences): run ``r`` gets a noise level ``p_r ~ U(0, 0.6)``; each
      of its labels is redrawn through the paper's Figure 6 confusion with probability ``p_r``, else kept - some
      runs' human-minus-judge differences are near zero on every topic, others' vary a lot;
    * ``skewed`` (skewed per-topic differences): a third of the runs get a topic-level failure rate 0.15 - with that
      probability the judge marks every nugget of the run's answer not_support (a one-sided heavy tail of the
      per-topic differences); every label is otherwise redrawn through Figure 6 with probability 0.1.
    """
    from metaeval.random_streams import stream
    from metaeval.simulation import codes_to_labels, labels_to_codes, resolve_confusion, simulate_codes

    rng = stream(seed, "simulation.calibration_validity", kind)
    lab = human.labels
    codes = labels_to_codes(lab["support"].astype(object).to_numpy())
    runs = lab["run_id"].astype("category").cat.codes.to_numpy()
    R = int(runs.max()) + 1
    redrawn = simulate_codes(codes, resolve_confusion(), rng)
    if kind == "hetero":
        p = rng.uniform(0.0, 0.6, R)[runs]
        new = np.where(rng.random(len(codes)) < p, redrawn, codes)
    else:
        new = np.where(rng.random(len(codes)) < 0.1, redrawn, codes)
        skewed = rng.random(R) < 1 / 3
        answer = (lab["qid"].astype(str) + "\t" + lab["run_id"].astype(str)).astype("category").cat.codes.to_numpy()
        fails = rng.random(int(answer.max()) + 1) < 0.15
        hit = skewed[runs] & fails[answer] & (codes >= 0)
        new = np.where(hit, 0, new)
    new = np.where(codes < 0, codes, new).astype(np.int8)
    return human.with_labels(codes_to_labels(new), name=kind, provenance={"judge_spec": kind, "on": human.name})


def main() -> None:
    from metaeval.io import load_labels
    from metaeval.io.assignments import write_assignments
    from metaeval.judges.lexical import LexicalJudge
    from metaeval.random_streams import stream
    from metaeval.simulation import simulate_judge

    OUT.mkdir(parents=True, exist_ok=True)
    human = load_labels(str(NIST), name="nist")
    write_assignments(human, OUT / "nist.jl")
    makers = {"lexical": lambda: offline_judge_labels(human, LexicalJudge(0.6, 0.3), "lexical"),
              "lexical_strict": lambda: offline_judge_labels(human, LexicalJudge(0.8, 0.5), "lexical_strict"),
              "fig6": lambda: simulate_judge(human, seed=stream(0, "simulation.calibration_validity", "fig6"), name="fig6"),
              "run_bias": lambda: run_bias_labels(human), "hetero": lambda: hetero_skew_labels(human, "hetero"),
              "skewed": lambda: hetero_skew_labels(human, "skewed")}
    only = [a for a in sys.argv[1:] if a in makers or a in ("embedding", "auto")]  # e.g. `labels.py hetero skewed`: just those
    sets = {k: f() for k, f in makers.items() if not only or k in only}
    until = next((a.split("=", 1)[1] for a in sys.argv[1:] if a.startswith("--until=")), None)
    if until is not None:  # `labels.py embedding --until=HH:MM` (UTC): run by run, memoised encode, partial file
        import datetime as dt

        import torch

        torch.set_num_threads(1)  # a shared 2-core machine: one intra-op thread, no spin-waiting pool
        from metaeval.judges.embedding import EmbeddingJudge

        h, m = map(int, until.split(":"))
        end = dt.datetime.now(dt.timezone.utc).replace(hour=h, minute=m, second=0, microsecond=0).timestamp()
        if "auto" in sys.argv[1:]:  # `labels.py auto --until=HH:MM`: the judge on the Mistral-made nuggets
            on = load_labels(str(mistral_skeleton(OUT / "mistral_skeleton.jl")), name="nist_mistral")
            labels_by_run(on, memo_encoder(EmbeddingJudge()), "embedding_auto", OUT / "embedding_auto.jl", end)
        else:
            labels_by_run(human, memo_encoder(EmbeddingJudge()), "embedding", OUT / "embedding.jl", end)
        return
    try:
        if only and "embedding" not in only:
            raise RuntimeError("not asked for")
        from metaeval.judges.embedding import EmbeddingJudge

        sets["embedding"] = offline_judge_labels(human, EmbeddingJudge(), "embedding")
    except Exception as exc:  # optional extra: sentence_transformers and a local model
        print(f"embedding judge skipped: {type(exc).__name__}: {exc}")
    for name, ls in sets.items():
        write_assignments(ls, OUT / f"{name}.jl")
        print(f"wrote {OUT / (name + '.jl')}")


if __name__ == "__main__":
    main()
