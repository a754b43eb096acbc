"""Compare two sweep ``summary.json`` files, ignoring what legitimately differs between runs (wall-clock times,
absolute paths): ``python scripts/compare_summaries.py BASELINE NEW``.  Prints each differing key path with both
values and exits 1 when any differ, 0 when they are identical."""

from __future__ import annotations

import json
import sys
from typing import Any

#: keys naming a file on this machine (the same file read from another checkout); timings end in "_s"
IGNORED = {"path"}


def diff(a: Any, b: Any, path: str = "") -> list[str]:
    if isinstance(a, dict) and isinstance(b, dict):
        out = []
        for k in sorted(set(a) | set(b), key=str):
            if k in IGNORED or str(k).endswith("_s"):
                continue
            if k not in a or k not in b:
                out.append(f"{path}.{k}: {'missing' if k not in a else a[k]!r} != {'missing' if k not in b else b[k]!r}")
                continue
            out += diff(a[k], b[k], f"{path}.{k}")
        return out
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return [f"{path}: {len(a)} items != {len(b)} items"]
        return [d for i, (x, y) in enumerate(zip(a, b)) for d in diff(x, y, f"{path}[{i}]")]
    return [] if a == b else [f"{path}: {a!r} != {b!r}"]


def main(argv: list[str]) -> int:
    old, new = (json.load(open(p, encoding="utf-8")) for p in argv[1:3])
    found = diff(old, new)
    for line in found:
        print(line)
    print("identical" if not found else f"{len(found)} difference(s)")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
