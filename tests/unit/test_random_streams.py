"""metaeval.random_streams: one named stream per purpose, independent of the others and of new consumers."""

import numpy as np
import pytest

from metaeval.random_streams import stream, stream_entropy


def test_same_seed_purpose_keys_same_draws():
    assert np.array_equal(stream(7, "analysis.tau").random(5), stream(7, "analysis.tau").random(5))


def test_purpose_and_seed_and_key_each_move_the_stream():
    base = stream(7, "analysis.tau").random(5)
    assert not np.array_equal(base, stream(8, "analysis.tau").random(5))
    assert not np.array_equal(base, stream(7, "calibration.tau").random(5))
    assert not np.array_equal(base, stream(7, "analysis.tau", 1).random(5))


def test_entropy_is_documented_formula():
    import zlib
    assert stream_entropy(3, "planning.pilot", 2, "x") == [3, zlib.crc32(b"planning.pilot"), 2, zlib.crc32(b"x")]
    ref = np.random.default_rng(np.random.SeedSequence([3, zlib.crc32(b"planning.pilot")])).random(3)
    assert np.array_equal(stream(3, "planning.pilot").random(3), ref)


@pytest.mark.parametrize("seed,purpose", [(-1, "analysis"), (1.5, "analysis"), (True, "analysis"), (0, "nope.x")])
def test_bad_seed_or_purpose_raises(seed, purpose):
    with pytest.raises(ValueError):
        stream(seed, purpose)


# ---------------------------------------------------------------------------------------------------------------
# every draw goes through random_streams (a static scan) and analysis.seed reaches every analysis draw (a tracer)

import ast  # noqa: E402
import re  # noqa: E402
import json  # noqa: E402
from pathlib import Path  # noqa: E402

import metaeval  # noqa: E402
from metaeval import random_streams  # noqa: E402
from metaeval.random_streams import judge_stream  # noqa: E402

PACKAGE = Path(metaeval.__file__).parent
#: numpy constructors and legacy global-state functions that make random numbers without a named stream
_NUMPY_RANDOM = {"default_rng", "RandomState", "SeedSequence", "seed", "rand", "randn", "randint", "random",
                 "choice", "shuffle", "permutation", "normal", "uniform", "binomial", "gamma", "PCG64", "Generator"}
#: stdlib ``random`` outside the figures: the HTTP client's retry jitter and the test server's fault injection
_STDLIB_RANDOM_OK = {"judges/client.py", "testing/server.py"}


def _random_calls(path: Path) -> list[str]:
    """``default_rng(...)``, ``np.random.X(...)``, ``random.Random(...)`` calls and ``import random`` in one file."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            f = node.func
            name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
            owner = ast.unparse(f.value) if isinstance(f, ast.Attribute) else ""
            if name in ("default_rng", "RandomState", "SeedSequence") or \
                    (owner.endswith("np.random") or owner == "numpy.random") and name in _NUMPY_RANDOM:
                out.append(f"{node.lineno}: {ast.unparse(f)}(")
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            if "random" in names:
                out.append(f"{node.lineno}: import random")
    return out


def test_no_random_draw_outside_random_streams():
    """Fails on a ``default_rng(`` (or ``np.random.seed``/``RandomState``/legacy global draw) anywhere in the package
    but random_streams.py, and on the stdlib ``random`` outside the two non-figure uses."""
    found = []
    for p in sorted(PACKAGE.rglob("*.py")):
        rel = p.relative_to(PACKAGE).as_posix()
        if rel == "random_streams.py":
            continue
        found += [f"{rel}:{c}" for c in _random_calls(p)
                  if not (rel in _STDLIB_RANDOM_OK and ("import random" in c or "random.Random(" in c))]
    assert not found, found


def test_the_scan_sees_a_raw_draw(tmp_path):
    p = tmp_path / "x.py"
    p.write_text("import numpy as np\nrng = np.random.default_rng(0)\nnp.random.seed(1)\nimport random\n")
    assert len(_random_calls(p)) == 3


def test_judge_stream_is_the_historical_judge_draw():
    """A simulated judge's labels are data: ``judge_stream(seed)`` is ``default_rng(seed)`` and ``judge_stream(seed,
    item, ...)`` is ``default_rng([seed, item, ...])`` bit for bit (the labels of every recorded simulated judge)."""
    assert np.array_equal(judge_stream(5).random(6), np.random.default_rng(5).random(6))
    assert np.array_equal(judge_stream(5, 2**63 + 7, 2).random(3), np.random.default_rng([5, 2**63 + 7, 2]).random(3))
    for bad in (-1, None, 1.5, True):
        with pytest.raises(ValueError):
            judge_stream(bad)


def _study(tmp_path, analysis_seed: int, calibration_seed: int = 3) -> dict:
    from metaeval.data.dataset import load_dataset
    from metaeval.layout import ResultsLayout
    from metaeval.study.run import StudyInput, run_study
    from metaeval.study.settings import build_study_settings
    from metaeval.testing.relabel import judge_like

    ref = load_dataset("demo").labels
    settings = build_study_settings({"metrics": ["v_strict"], "tau": "b", "bootstrap": 60, "seed": analysis_seed},
                                    {"enabled": True, "folds": 4, "seed": calibration_seed,
                                     "workers": 1})  # every draw in this process, where the tracer is
    lay = ResultsLayout(tmp_path / f"s{analysis_seed}", "t")
    inp = StudyInput(layout=lay, label_sets={"jl__human_auto": judge_like(ref, name="jl")}, reference=ref,
                     settings=settings, config={"name": "t"}, calibratable=["jl__human_auto"], dataset={"name": "demo"})
    run_study(inp)
    docs = {name: json.loads(path.read_text(encoding="utf-8")) for name, path in
            (("study", lay.study_json), ("analysis", lay.analysis_dir / "analysis.json"),
             ("calibration", lay.calibration("jl__human_auto")))}
    docs["study"].pop("provenance")  # when and where the study ran (its clock time), not a figure
    return docs


def test_analysis_seed_reaches_every_analysis_draw(tmp_path, monkeypatch):
    """A tracer on the one entropy function: every stream the study opens under an ``analysis.*`` purpose gets the
    study's ``analysis.seed`` (7), every ``calibration.*`` stream the calibration seed (3); no other seed is used."""
    calls = []
    real = random_streams.stream_entropy

    def traced(seed, purpose, *keys):
        calls.append((int(seed), purpose))
        return real(seed, purpose, *keys)

    monkeypatch.setattr(random_streams, "stream_entropy", traced)
    _study(tmp_path, analysis_seed=7)
    purposes = {p for _, p in calls}
    assert {"analysis.topic_bootstrap", "calibration.rank_sets"} <= purposes, purposes
    wrong = {(s, p) for s, p in calls if s != {"analysis": 7, "calibration": 3}.get(p.split(".")[0])}
    assert not wrong, wrong


def _leaves(x, path=""):
    if isinstance(x, dict):
        for k, v in x.items():
            yield from _leaves(v, f"{path}.{k}")
    elif isinstance(x, list):
        for i, v in enumerate(x):
            yield from _leaves(v, f"{path}[{i}]")
    else:
        yield path, x


def test_analysis_seed_same_reproduces_other_moves_every_interval(tmp_path):
    """The same ``analysis.seed`` writes the same study.json, analysis.json and calibration.json; another moves the
    raw leaderboard's, the run bias's, the taus' and the clustered label agreement's intervals and the calibrated
    leaderboard's judge-score interval (each kind at least once), and no point estimate."""
    a, again, b = _study(tmp_path / "a", 7), _study(tmp_path / "b", 7), _study(tmp_path / "c", 8)
    assert json.dumps(a, sort_keys=True) == json.dumps(again, sort_keys=True)
    la, lb = dict(_leaves(a)), dict(_leaves(b))
    moved = {p for p in la if la[p] != lb.get(p) and not p.endswith((".seed", ".analysis_seed"))}
    for kind in (".leaderboard.metrics.v_strict[", ".bias.metrics.v_strict.", "v_strict.run.ci", "v_strict.pooled.ci",
                 "top_heavy.kendall@k.ci", "clustered.strictness_ci_topic", "leaderboard.rows[0].judge_score_ci"):
        paths = [p for p in moved if kind in p]
        assert paths, (kind, sorted(moved)[:8])
    assert all(re.search(r"ci|_se\b|\.se\b|p_|boot|sd\b|interval|half", p) for p in moved), \
        sorted(p for p in moved if not re.search(r"ci|_se\b|\.se\b|p_|boot|sd\b|interval|half", p))[:8]


def test_calibrate_analysis_seed_reaches_the_strictness_bootstrap(tmp_path):
    """``metaeval calibrate --strictness``: the within-topic bootstrap of the per-topic strata is an analysis draw
    (stream ``analysis.answer_bootstrap``) and ``--analysis-seed`` moves it (it used the default seed 0 whatever
    ``--analysis-seed`` said); only intervals move."""
    from metaeval.cli import main
    from metaeval.data.dataset import load_dataset
    from metaeval.io.assignments import write_assignments
    from metaeval.testing.relabel import judge_like

    ref = load_dataset("demo").labels
    write_assignments(judge_like(ref, name="jl"), tmp_path / "judge.jl")
    human = PACKAGE / "data" / "demo" / "assignments.jsonl"
    got = {}
    for s in (0, 3):
        out = tmp_path / f"s{s}"
        assert main(["calibrate", "--human", str(human), "--judge", str(tmp_path / "judge.jl"), "--repeats", "2",
                     "--nested-splits", "0", "--bootstrap", "50", "--strictness", "--analysis-seed", str(s),
                     "--out", str(out), "-q"]) == 0
        got[s] = dict(_leaves(json.loads((out / "calibration.json").read_text(encoding="utf-8"))["strictness"]))
    moved = {p for p in got[0] if got[0][p] != got[3].get(p)}
    assert moved and all(re.search(r"\.topic\.\w+\.(ci|se)_cluster", p) for p in moved), sorted(moved)[:8]
