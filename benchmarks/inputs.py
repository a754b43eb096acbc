"""Inputs the benchmarks build from the real data."""

from __future__ import annotations


def resample_topics(labels, n_topics: int, seed: int):
    """A label set of ``n_topics`` topics drawn with replacement from ``labels`` (copies get new qids
    ``<qid>#<k>``), e.g. the 56-topic x 45-run inputs built from the NIST 21-topic file."""
    import numpy as np
    import pandas as pd

    from metaeval.types import LabelSet

    rng = np.random.default_rng(seed)
    qids = labels.qids
    picks = rng.choice(len(qids), size=n_topics, replace=True)
    labs, answers = [], []
    for k, i in enumerate(picks):
        q = qids[i]
        new = f"{q}#{k}"
        labs.append(labels.labels[labels.labels["qid"] == q].assign(qid=new))
        answers.append(labels.answers[labels.answers["qid"] == q].assign(qid=new))
    lab = pd.concat(labs, ignore_index=True)
    for col in ("importance", "support"):
        lab[col] = pd.Categorical(lab[col], categories=labels.labels[col].cat.categories)
    return LabelSet(f"{labels.name}-{n_topics}t", lab, pd.concat(answers, ignore_index=True))
