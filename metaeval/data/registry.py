"""Registry of named datasets: where each file comes from publicly, and the checksums that pin it.

Every entry lists its files with the public download address (``url``; ``None`` where we know of no stable direct
link, in which case ``metaeval data fetch NAME --from PATH`` is the way in), the page that documents the file
(``source``), its format (a name from ``metaeval.io.FORMATS``) and its checksums.  A checksum of ``None`` means
*not recorded*: fetch then says so plainly and prints the computed values so they can be pinned here - it never
pretends a file was verified.

Checksums were computed from the copies in ``../shared/data`` (see ``tests/unit/test_data_registry.py``, which
recomputes them).  Where the public copy at ``url`` was not downloaded here (the machines that built this are
offline), the description says what was and was not checked.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping


@dataclass(frozen=True)
class DataFile:
    """One file of a dataset.

    Attributes:
        filename: the name it has in the dataset's cache folder (and in a ``--from`` folder).
        format: a ``metaeval.io`` format name (``assignments``, ``answers``, ``nuggets`` ...).
        url: a public direct-download address, or ``None`` when none is known.
        md5, sha256: hex digests, or ``None`` when not recorded.
        size: size in bytes when known.
        source: a page that documents where the file comes from.
    """

    filename: str
    format: str
    url: str | None = None
    md5: str | None = None
    sha256: str | None = None
    size: int | None = None
    source: str = ""

    @property
    def has_checksum(self) -> bool:
        return bool(self.md5 or self.sha256)


@dataclass(frozen=True)
class DatasetEntry:
    """A named dataset.

    ``kind`` picks the loader in ``metaeval.data.dataset.LOADERS``: ``nist`` (a NIST nugget-assignment file: answers,
    human nuggets and human labels), ``folder`` (the demo layout: topics, documents, qrels, runs, nuggets,
    assignments), or ``files`` (each file read by its format into the matching ``Dataset`` field).
    ``bundled`` datasets ship inside the package and are never fetched; ``synthetic`` ones hold made-up labels (the
    demo), which every summary and report says next to its figures.
    """

    name: str
    description: str
    files: tuple[DataFile, ...]
    kind: str = "files"
    source: str = ""
    license: str = ""
    bundled: bool = False
    synthetic: bool = False

    def file(self, filename: str) -> DataFile:
        for f in self.files:
            if f.filename == filename:
                return f
        raise KeyError(filename)


TREC_RAG24_PAGE = "https://trec.nist.gov/data/rag2024.html"
TREC_RAG_SITE = "https://trec-rag.github.io/"
PYTERRIER_NUGGETIZER = "https://github.com/NamaWho/pyterrier-nuggetizer"
# The commit at which the stored public copies were compared with ours (same size, same text where read).
_PTN_COMMIT_NUGGETS = "d99d38c0461967b00e43e5bc2b821dfee46b6767"
_PTN_COMMIT_DATA = "54849a4519aa08c4747a16693f6c161b4f026bfe"
_PTN_RAW = "https://raw.githubusercontent.com/NamaWho/pyterrier-nuggetizer/{commit}/data/{path}"


def _entries() -> tuple[DatasetEntry, ...]:
    return (
        DatasetEntry(
            name="trec-rag-2024",
            kind="nist",
            description=(
                "TREC 2024 RAG Track, NIST nugget evaluation export of 2024-11-08 (the initial report, "
                "arXiv:2411.09607): 21 topics x 45 runs, 927 answers, human nuggets with importance and 13,158 "
                "human assignment labels. No stable public download link is known to us for this export; fetch it "
                "with --from a local copy. The 56-topic release (trec-rag-2024-nist-56) is its public superset. "
                "Also accepted under its former name trec-rag-2024-nist-21."
            ),
            source=TREC_RAG24_PAGE,
            license="NIST TREC data (public research data)",
            files=(
                DataFile(
                    filename="nugget_assignment.20241108.jl",
                    format="assignments",
                    url=None,
                    md5="918bb96e714eec2e3a0c64d0771a6a6f",
                    sha256="84ceb734107dbe26fb1c98bff103121be8bb8f52bab5513e6b28a468102095ae",
                    size=2894439,
                    source=TREC_RAG24_PAGE,
                ),
            ),
        ),
        DatasetEntry(
            name="trec-rag-2024-nist-56",
            kind="nist",
            description=(
                "TREC 2024 RAG Track, NIST nugget evaluation release of 2024-12-18: 56 topics, same schema as "
                "the 21-topic export. Public at trec.nist.gov. CHECKSUM NOT RECORDED: the file was not available "
                "where this registry was built, so fetch cannot verify it; it prints the computed md5/sha256 so "
                "you can pin them."
            ),
            source=TREC_RAG24_PAGE,
            license="NIST TREC data (public research data)",
            files=(
                DataFile(
                    filename="nugget_assignment.20241218.jsonl",
                    format="assignments",
                    url="https://trec.nist.gov/data/rag/nugget_assignment.20241218.jsonl",
                    source=TREC_RAG24_PAGE,
                ),
            ),
        ),
        DatasetEntry(
            name="trec-rag-2024-topics",
            description=(
                "TREC 2024 RAG Track test topics (301), qid<TAB>text. Public copy on the track site; checksum "
                "recorded from our local copy (same name), not re-downloaded here."
            ),
            source=TREC_RAG_SITE,
            files=(
                DataFile(
                    filename="topics.rag24.test.txt",
                    format="topics",
                    url="https://trec-rag.github.io/assets/txt/topics.rag24.test.txt",
                    md5="234113ab626a5ca31d57d4c0c7a87b6e",
                    sha256="a05c85cceb11d0967befcd2fb12696ba5dc9f97c9430b548906e8fa34c63509b",
                    size=19216,
                    source=TREC_RAG_SITE,
                ),
            ),
        ),
        DatasetEntry(
            name="trec-rag-2024-qrels-nist",
            description=(
                "TREC 2024 RAG Track NIST relevance judgments (grades 0-3; 20,283 lines, 86 topics, 20,194 passages). "
                "Believed to be NIST's 2024-retrieval-qrels.txt under a local name (same line, topic and passage "
                "counts as reported for that file); checksum recorded from our copy and NOT checked against the public "
                "file, so a download may report a mismatch - then fetch a copy you trust with --from."
            ),
            source=TREC_RAG24_PAGE,
            files=(
                DataFile(
                    filename="qrels.rag24.test-nist.txt",
                    format="qrels",
                    url="https://trec.nist.gov/data/rag/2024-retrieval-qrels.txt",
                    md5="45da8ddf295cc35376babd8408f6ee05",
                    sha256="92fcf7ca4943c7913eb28b66c91ac239eb58d80ce875842c42dd6fc1dd99ebc7",
                    size=1192417,
                    source=TREC_RAG24_PAGE,
                ),
            ),
        ),
        DatasetEntry(
            name="trec-rag-2024-baselines",
            description=(
                "The three organizer baseline runs of the TREC 2024 RAG Track (Ragnarok: GPT-4o, Command R+, "
                "Llama 3.1 70B; top-20 segments) over all 301 test topics, in the track's answer format. Source: "
                "castorini/ragnarok baselines; no stable direct link known to us (copies in pyterrier-nuggetizer "
                "data/answers differ in size from ours), so fetch with --from."
            ),
            source="https://github.com/castorini/ragnarok",
            files=tuple(
                DataFile(filename=fn, format="answers", url=None, md5=md5, sha256=sha, size=size,
                         source="https://github.com/castorini/ragnarok")
                for fn, md5, sha, size in (
                    ("baseline_rag24.test_gpt-4o_top20.jsonl", "105efa85a2dc8bf979e0a64cbce1f1f4",
                     "d5e307ea90217506b863718feef12f1d8ed82d6b8d2c65fcd66b2f6c788432f3", 917940),
                    ("baseline_rag24.test_command-r-plus_top20.jsonl", "5fea3f55a1d35a3e04f67ff6812ca545",
                     "01b4646a9a112837ebd54163350aed499297495890b81e0a8e3c24cc76d998ea", 841275),
                    ("baseline_rag24.test_l31_70b_instruct_top20.jsonl", "24861a53f62faa896fd6a0ad43e56268",
                     "03ac356eb2615ddcce498c037adf7a15a1e3a0f25de18173e373b2d1c57bfa45", 634608),
                )
            ),
        ),
        DatasetEntry(
            name="nuggetizer-rag24-mistral",
            description=(
                "LLM (Mistral) nuggets for 300 RAG24 topics, that model's assignments to the GPT-4o baseline "
                "answers, and the per-topic metrics pyterrier-nuggetizer computed from them (castorini/nuggetizer "
                "formats; Apache-2.0). These are judge labels, not human labels. URLs point at the "
                "NamaWho/pyterrier-nuggetizer commits whose stored copies have the same size and text as ours; the "
                "downloads themselves were not checksummed here."
            ),
            source=PYTERRIER_NUGGETIZER,
            license="Apache-2.0",
            files=(
                DataFile(
                    filename="rag24_nuggets_mistral.jsonl",
                    format="nuggets",
                    url=_PTN_RAW.format(commit=_PTN_COMMIT_NUGGETS, path="nuggets/rag24_nuggets_mistral.jsonl"),
                    md5="26ca9c5f9b2959d727adb4df4c8d52db",
                    sha256="1d26849ea9b804892beaadb844587ff6956863622a8e20ff8e4e7ea5a04af126",
                    size=488033,
                    source=PYTERRIER_NUGGETIZER,
                ),
                DataFile(
                    filename="assignments_baseline_rag24.test_gpt4o_top20.jsonl",
                    format="assignments",
                    url=_PTN_RAW.format(commit=_PTN_COMMIT_DATA, path="assignments/baseline_rag24.test_gpt4o_top20.jsonl"),
                    md5="6d59146a78a401adb8968ab906360981",
                    sha256="6f42efb699441f1a4e5fa780d4a1ffaba9a8710c69f334fb39f64e462d57689c",
                    size=1319845,
                    source=PYTERRIER_NUGGETIZER,
                ),
                DataFile(
                    filename="metrics_baseline_rag24.test_gpt_4o_top20.jsonl",
                    format="metrics",
                    url=_PTN_RAW.format(commit=_PTN_COMMIT_DATA, path="metrics/baseline_rag24.test_gpt_4o_top20.jsonl"),
                    md5="58cde7a85e0ba656c6dc795d6be42bec",
                    sha256="f1c94ff74cecbd258a8f53b41241e0d379ecd9758ceb653c7b1ed0fdbf47d3e5",
                    size=68216,
                    source=PYTERRIER_NUGGETIZER,
                ),
            ),
        ),
        DatasetEntry(
            name="demo",
            kind="folder",
            bundled=True,
            synthetic=True,
            description=(
                "ILLUSTRATIVE DEMO DATA written by the metaeval authors, NOT real assessments: 8 everyday "
                "questions, short hand-written documents, qrels, human-style nuggets and assignment labels, and "
                "8 synthetic runs of graded quality. For trying the tool offline in seconds; draw no conclusions "
                "about real judges from it."
            ),
            source="bundled with metaeval (metaeval/data/demo/, generated by scripts/build_demo.py)",
            license="Apache-2.0 (same as metaeval)",
            files=tuple(
                DataFile(filename=fn, format=fmt, source="bundled")
                for fn, fmt in (
                    ("topics.tsv", "topics"),
                    ("documents.jsonl", "documents"),
                    ("qrels.txt", "qrels"),
                    ("runs.jsonl", "answers"),
                    ("nuggets.jsonl", "nuggets"),
                    ("assignments.jsonl", "assignments"),
                )
            ),
        ),
    )


REGISTRY: Mapping[str, DatasetEntry] = {e.name: e for e in _entries()}


#: other names accepted for a dataset (old name -> registry name)
ALIASES: dict[str, str] = {"trec-rag-2024-nist-21": "trec-rag-2024"}


def get_entry(name: str) -> DatasetEntry:
    """The registry entry for ``name`` (or an alias); ``ConfigError`` listing the known names otherwise."""
    try:
        return REGISTRY[ALIASES.get(name, name)]
    except KeyError:
        from metaeval.errors import ConfigError

        raise ConfigError(f"unknown dataset {name!r}; known datasets: {', '.join(REGISTRY)}") from None
