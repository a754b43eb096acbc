"""Judge label files on every NIST (nugget, answer) pair, for the coverage study (``run.py``).

Writes ``results/calibration_validity/labels/{nist,lexical,lexical_strict,fig6,run_bias}.jl`` (NIST assignment
format, same rows as the NIST file):

* ``lexical`` / ``lexical_strict``: the offline ``LexicalJudge`` with the catalog's settings
  (``metaeval/conf/judge/lexical{,_strict}.yaml``: support/partial thresholds 0.6/0.3 and 0.8/0.5);
* ``embedding``: the ``EmbeddingJudge`` when ``sentence_transformers`` and a model are installed (skipped otherwise;
  ``run.py`` says so);
* ``fig6``: every label redrawn through the paper's Figure 6 confusion (``metaeval.simulation.simulate_judge``),
  one fixed draw (stream ``simulation.calibration_validity``, seed 0);
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


def offline_judge_labels(human, judge, name: str):
    """``judge`` (a ``metaeval.judges`` Judge) on every (nugget, answer) pair of ``human``; same rows."""
    from metaeval.judges.base import SyncJudge
    from metaeval.types import Answer, Topic

    lab = human.labels
    texts = dict(zip(zip(human.answers["qid"], human.answers["run_id"]), human.answers["answer_text"]))
    out = np.empty(len(lab), dtype=object)
    with SyncJudge(judge) as sj:
        for (q, r), idx in lab.groupby(["qid", "run_id"], sort=False).indices.items():
            nuggets = lab["nugget"].to_numpy()[idx].tolist()
            labels = []
            for i in range(0, len(nuggets), 10):
                res = sj.assign(Topic(q, human.topics.get(q, "")), Answer(r, q, texts[(q, r)] or ""), nuggets[i:i + 10])
                labels += [lb.value for lb in res.labels]
            out[idx] = labels
    return human.with_labels(out, name=name, provenance={"judge_spec": name, "on": human.name})


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


def main() -> None:
    from metaeval.io import load_labels
    from metaeval.io.assignments import write_assignments
    from metaeval.judges.lexical import LexicalJudge
    from metaeval.random_streams import stream
    from metaeval.simulation import simulate_judge

    OUT.mkdir(parents=True, exist_ok=True)
    human = load_labels(str(NIST), name="nist")
    write_assignments(human, OUT / "nist.jl")
    sets = {"lexical": offline_judge_labels(human, LexicalJudge(0.6, 0.3), "lexical"),
            "lexical_strict": offline_judge_labels(human, LexicalJudge(0.8, 0.5), "lexical_strict"),
            "fig6": simulate_judge(human, seed=stream(0, "simulation.calibration_validity", "fig6"), name="fig6"),
            "run_bias": run_bias_labels(human)}
    try:
        from metaeval.judges.embedding import EmbeddingJudge

        sets["embedding"] = offline_judge_labels(human, EmbeddingJudge(), "embedding")
    except Exception as exc:  # optional extra: sentence_transformers and a local model
        print(f"embedding judge skipped: {type(exc).__name__}: {exc}")
    for name, ls in sets.items():
        write_assignments(ls, OUT / f"{name}.jl")
        print(f"wrote {OUT / (name + '.jl')}")


if __name__ == "__main__":
    main()
