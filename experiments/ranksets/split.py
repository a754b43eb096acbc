"""Write the human labels of ``--labelled`` random NIST topics (seeded) to ``--out``: the labelled part of a split,
for ``metaeval calibrate --human <that file> --judge <all judge labels>`` (experiments/ranksets/README.md).

    .venv/bin/python experiments/ranksets/split.py --labelled 10 --seed 0 --out results/ranksets/human10.jl
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from run import NIST


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--labelled", type=int, required=True)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    import numpy as np

    lines = NIST.read_text(encoding="utf-8").splitlines()
    qids = sorted({json.loads(x)["qid"] for x in lines if x.strip()})
    keep = set(np.random.default_rng(args.seed).permutation(qids)[:args.labelled].tolist())
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    kept = [x for x in lines if x.strip() and json.loads(x)["qid"] in keep]
    out.write_text("\n".join(kept) + "\n", encoding="utf-8")
    print(f"wrote {len(kept)} answers of {len(keep)} of {len(qids)} topics to {out}")


if __name__ == "__main__":
    main()
