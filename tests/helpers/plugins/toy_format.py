"""A toy dataset format, outside the package: one file, registered by ``register_format`` on import.

``toy_answers``: answer runs as ``run_id<TAB>qid<TAB>answer text`` lines in a ``.toyanswers`` file."""

from __future__ import annotations

from metaeval.errors import FormatError
from metaeval.io import FileFormat, register_format
from metaeval.types import Answer


def read_toy_answers(path) -> list[Answer]:
    out = []
    with open(path, encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            parts = line.rstrip("\n").split("\t")
            if len(parts) != 3:
                raise FormatError(str(path), n, "", f"expected run_id, qid and answer text, got {len(parts)} field(s)")
            out.append(Answer(run_id=parts[0], qid=parts[1], text=parts[2]))
    return out


TOY_ANSWERS = register_format(FileFormat("toy_answers", "toy answer runs: run_id<TAB>qid<TAB>text",
                                         read_toy_answers, role="answers", suffixes=(".toyanswers",)))
