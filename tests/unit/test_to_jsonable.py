"""to_jsonable: JSON types out of numpy, sets, tuples, paths and subclasses; NaN/inf -> null; non-str keys as str()."""

from __future__ import annotations

import collections
import json
import math
from pathlib import Path

import numpy as np

from metaeval.io.jsonl import to_jsonable


class Sub(dict):
    pass


class Num(float):
    pass


def test_every_kind_of_node():
    doc = {"s": "x", "i": 3, "b": True, "n": None, "f": 0.5, "nan": float("nan"), "inf": -math.inf,
           5: "int key", None: "none key", True: "bool key", 2.5: "float key",
           "np": [np.float64(0.25), np.int64(7), np.bool_(False), np.arange(3), np.array([[1.0, np.nan]])],
           "tuple": (1, (2, 3)), "set": {3, 1, 2}, "frozen": frozenset({"b", "a"}), "path": Path("/tmp/x"),
           "sub": Sub(a=1), "ordered": collections.OrderedDict(z=1, a=2), "num": Num(1.5), "nan_sub": Num("nan"),
           "other": complex(1, 2)}
    out = to_jsonable(doc)
    assert out == {"s": "x", "i": 3, "b": True, "n": None, "f": 0.5, "nan": None, "inf": None,
                   "5": "int key", "None": "none key", "True": "bool key", "2.5": "float key",
                   "np": [0.25, 7, False, [0, 1, 2], [[1.0, None]]],
                   "tuple": [1, [2, 3]], "set": [1, 2, 3], "frozen": ["a", "b"], "path": "/tmp/x",
                   "sub": {"a": 1}, "ordered": {"z": 1, "a": 2}, "num": 1.5, "nan_sub": None, "other": "(1+2j)"}
    assert list(out["ordered"]) == ["z", "a"]  # order kept
    json.dumps(out, allow_nan=False)  # strict JSON: no NaN left anywhere
    assert type(out["np"][1]) is int and type(out["tuple"]) is list


def test_exact_types_come_out_as_themselves():
    rows = [{"qid": str(i), "vals": [float(j) for j in range(5)], "ok": bool(i % 2), "n": i} for i in range(100)]
    assert to_jsonable(rows) == rows
