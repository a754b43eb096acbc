"""The results schema: typed, versioned records of what the study writes and the report, the API and the LaTeX
export read back.

* :class:`Summary` (``summary.json``) with its :class:`CellSummary` rows, :class:`CellAnalysis`,
  :class:`TauEstimate`...  (``metaeval.study.records.summary``);
* a cell's calibration (:class:`CellCalibration`, or :class:`CalibrationFailure`; ``metaeval.study.records.calibration``),
  its label agreement (:class:`LabelAgreement`) and self-consistency (:class:`CellConsistency`;
  ``metaeval.study.records.blocks``, open records: the keys read are fields, the rest kept as written);
* :class:`StudyDoc` (``study/study.json``) with :class:`StudyCell` (``metaeval.study.records.study``);
* :class:`Provenance`, recorded when the study runs (``metaeval.study.records.provenance``);
* the codec (``metaeval.study.records.codec``): annotations checked field by field, and a JSON Schema derived from
  them (:func:`results_json_schema`, written to ``docs/results-schema.json``).

Both files carry ``format`` and ``schema_version`` (:data:`RESULTS_SCHEMA`); :func:`read_summary` and
:func:`read_study` refuse a file of another version with one line naming the file, its version and the command
that rewrites it.  This package imports nothing above the study's core (the report may import it).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from metaeval.study.records.blocks import (CellConsistency, ClusteredAgreement, Consistency, ConsistencyCalibration,
                                           ConsistencyFailure, LabelAgreement)
from metaeval.study.records.calibration import (NOT_WRITTEN, CalibratedLeaderboard, Calibration, CalibrationFailure,
                                                CalibrationSettings, CalibrationTopics, Candidate, CellCalibration,
                                                HeldOut, HeldOutTau, LeaderboardRow, MeanSE, MetricCalibration, Pairing,
                                                RankPair, RankSetRow, RankSets, RankSetsSummary, RankSetsTau,
                                                RankSetsUnavailable, Selection, TrackTau)
from metaeval.study.records.codec import decode, encode, json_schema
from metaeval.study.records.document import RESULTS_SCHEMA, Document, ResultsSchemaError
from metaeval.study.records.provenance import PACKAGES, GitState, Provenance, record_provenance
from metaeval.study.records.study import (Bias, BiasMean, DisagreementAnswer, Disagreements, DisagreementTopic,
                                          Leaderboard, MetricBias, RunBias, StrictnessByImportance, Stratum, StudyCell,
                                          StudyDoc, TopicTau)
from metaeval.study.records.summary import (LEVELS, NO_ESTIMATE, CellAnalysis, CellStats, CellSummary, DataFile,
                                            DatasetInfo, Diagnostics, DatasetProvenance, MetricAnalysis, Summary, TauEstimate,
                                            ThisRun)

if TYPE_CHECKING:  # pragma: no cover
    from metaeval.layout import ResultsLayout


def rerun_command(lay: "ResultsLayout") -> str:
    """The command that rewrites a results folder: ``metaeval sweep`` with the overrides it was made with
    (``overrides.yaml``) and the folder's name and results_dir as they are now."""
    import shlex

    ov: Any = None
    if lay.overrides_yaml.exists():
        try:
            import yaml

            ov = yaml.safe_load(lay.overrides_yaml.read_text(encoding="utf-8"))
        except Exception:  # noqa: BLE001 - only a hint: fall back to the folder's name
            ov = None
    here = [f"name={lay.name}", f"results_dir={lay.root.parent}"]  # where the folder is now (it may have moved)
    if isinstance(ov, list) and ov:
        kept = [str(o) for o in ov if not str(o).lstrip("+~").startswith(("name=", "results_dir="))]
        return "`metaeval sweep " + " ".join(shlex.quote(o) for o in [*kept, *here]) + "`"
    return "`metaeval sweep ... " + " ".join(here) + "`"


def read_summary(lay: "ResultsLayout") -> Summary:
    """``summary.json`` of a results folder as a :class:`Summary` (a missing file names the folders below that have
    one; a dry run is refused: there is nothing to read)."""
    from metaeval.errors import ConfigError

    f = lay.summary_json
    if not f.exists():
        subs = sorted(q.parent.name for q in lay.root.glob("*/summary.json"))
        hint = f"; did you mean {', '.join(str(lay.root / s) for s in subs)}?" if subs else "; run `metaeval sweep` first"
        raise ConfigError(f"{lay.root}: no summary.json{hint}")
    doc = lay.read_json(f)
    if isinstance(doc, dict) and doc.get("dry_run"):
        raise ConfigError(f"{f}: a dry run; there is nothing to report")
    return Summary.from_json(doc, f, rerun_command(lay))


def read_study(lay: "ResultsLayout") -> StudyDoc | None:
    """``study/study.json`` as a :class:`StudyDoc`, None when the study wrote none (no reference)."""
    doc = lay.read_json(lay.study_json, required=False)
    return None if doc is None else StudyDoc.from_json(doc, lay.study_json, rerun_command(lay))


def results_json_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of ``summary.json`` and ``study/study.json``, from the records."""
    out: dict[str, Any] = {"$schema": "https://json-schema.org/draft/2020-12/schema",
                           "title": f"metaeval results schema {RESULTS_SCHEMA}", "$defs": {}}
    files = {}
    for cls, name in ((Summary, "summary.json"), (StudyDoc, "study/study.json")):
        ref = json_schema(cls, out["$defs"])
        props = out["$defs"][cls.__name__]["properties"]
        out["$defs"][cls.__name__]["properties"] = {"format": {"const": cls.FORMAT},
                                                     "schema_version": {"const": cls.SCHEMA_VERSION}, **props}
        out["$defs"][cls.__name__]["required"] = ["format", "schema_version", *out["$defs"][cls.__name__]["required"]]
        files[name] = ref
    out["oneOf"] = list(files.values())
    out["description"] = "One of: " + ", ".join(f"{n} ({r['$ref'].rsplit('/', 1)[1]})" for n, r in files.items())
    return out


__all__ = ["Diagnostics", "DisagreementAnswer", "Disagreements", "DisagreementTopic", "CellConsistency", "ClusteredAgreement", "Consistency", "ConsistencyCalibration", "ConsistencyFailure",
           "LabelAgreement", "NOT_WRITTEN", "CalibratedLeaderboard", "Calibration", "CalibrationFailure",
           "CalibrationSettings", "CalibrationTopics", "Candidate", "CellCalibration", "HeldOut", "HeldOutTau",
           "LeaderboardRow", "MeanSE", "MetricCalibration", "Pairing", "RankPair", "RankSetRow", "RankSets",
           "RankSetsSummary", "RankSetsTau", "RankSetsUnavailable", "Selection", "TrackTau", "RESULTS_SCHEMA", "Document", "ResultsSchemaError", "PACKAGES", "GitState", "Provenance",
           "record_provenance", "Bias", "BiasMean", "MetricBias", "RunBias", "StrictnessByImportance", "Stratum",
           "Leaderboard", "StudyCell", "StudyDoc", "TopicTau", "LEVELS", "NO_ESTIMATE",
           "CellAnalysis", "CellStats", "CellSummary", "DataFile", "DatasetInfo", "DatasetProvenance",
           "MetricAnalysis", "Summary", "TauEstimate", "ThisRun", "decode", "encode", "json_schema", "read_summary",
           "read_study", "rerun_command", "results_json_schema"]
