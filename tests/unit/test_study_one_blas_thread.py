"""The study runs with one BLAS thread (metaeval.forked.one_blas_thread), and gives the threads back afterwards.

OpenBLAS threads cost many times the CPU of one thread on the study's tiny products and change no figure
(docs/benchmarks.md, issue 34); fails before the change: the study ran with the parent's BLAS thread pool."""

import pytest


def _blas_threads() -> list[int]:
    import numpy  # noqa: F401  (load the BLAS libraries whose pools are inspected)
    import scipy.linalg  # noqa: F401
    from threadpoolctl import threadpool_info

    return [p["num_threads"] for p in threadpool_info() if p.get("user_api") == "blas"]


def test_one_blas_thread_restores_the_pool():
    from threadpoolctl import threadpool_limits

    from metaeval.forked import one_blas_thread

    if not _blas_threads():
        pytest.skip("numpy has no BLAS thread pool here")
    with threadpool_limits(2):  # a pool of two, as the default on two cores
        before = _blas_threads()
        with one_blas_thread():
            assert set(_blas_threads()) == {1}
        assert _blas_threads() == before


def test_the_study_computes_with_one_blas_thread(nist_labels, tmp_path, monkeypatch):
    from threadpoolctl import threadpool_limits

    import metaeval.study.run as study_run
    from metaeval.layout import ResultsLayout
    from metaeval.study.run import StudyInput, run_study
    from metaeval.study.settings import build_study_settings
    from metaeval.testing.relabel import judge_like

    if not _blas_threads():
        pytest.skip("numpy has no BLAS thread pool here")
    seen: list[list[int]] = []
    real = study_run.analyse

    def recording(*args, **kwargs):
        seen.append(_blas_threads())
        return real(*args, **kwargs)

    monkeypatch.setattr(study_run, "analyse", recording)
    ref = nist_labels.subset(qids=nist_labels.qids[:6])
    settings = build_study_settings({"bootstrap": 0, "metrics": ["v_strict"]}, {"enabled": False})
    cells = {"a__v1__h": judge_like(ref, "a")}
    with threadpool_limits(2):
        before = _blas_threads()
        run_study(StudyInput(layout=ResultsLayout(tmp_path, "one"), label_sets=cells, reference=ref,
                             settings=settings))
        assert _blas_threads() == before
    assert seen and set(seen[0]) == {1}
