"""Content hashing: the one canonical digest of a JSON-able object (job keys, judge identities, study keys,
dataset and grid fingerprints).

``content_hash(obj, n)`` = the first ``n`` hex characters of ``sha256(canonical_json(obj))``, where the canonical
JSON has sorted keys, no whitespace, non-ASCII characters kept as UTF-8 and ``str()`` for anything JSON cannot
encode.  Equal objects give equal digests in every process and on every machine (key order never matters).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

#: the canonical JSON encoder (``json.dumps(obj, sort_keys=True, ensure_ascii=False, separators=(",", ":"),
#: default=str)``, built once)
canonical_json = json.JSONEncoder(sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str).encode


def content_hash(obj: Any, n: int = 16) -> str:
    """Hex digest (first ``n`` characters of sha256) of ``obj``'s canonical JSON."""
    return hashlib.sha256(canonical_json(obj).encode("utf-8")).hexdigest()[:n]
