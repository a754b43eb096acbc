"""The vectorised / cached calibration paths give the same results as the plain implementations they replaced.

Each test keeps a slow reference implementation (the code before the speed-up, or scipy) and compares on
inputs built to hit the edge cases: nugget texts that differ only in case/spacing/punctuation, duplicated
texts on either side, answers only one side holds, FAILED labels; random parameters for the ordinal
likelihood; NaN and repeated degrees of freedom for the t quantiles.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from metaeval.types import LabelSet


def _slow_pair_by_text(reference, judge):
    """The dictionary loop pair_by_text used before it was vectorised (kept verbatim as the reference)."""
    from metaeval.calibration.pairing import normalise_text
    from metaeval.simulation import labels_to_codes

    jl = judge.labels
    ans = set(zip(judge.answers["qid"].astype(str), judge.answers["run_id"].astype(str)))
    key_ok = np.fromiter(((q, r) in ans for q, r in zip(jl["qid"].astype(str), jl["run_id"].astype(str))), dtype=bool,
                         count=len(jl))
    jl = jl[key_ok]
    rl = reference.labels
    j_ans = list(zip(jl["qid"].astype(str), jl["run_id"].astype(str)))
    r_ans = set(zip(reference.answers["qid"].astype(str), reference.answers["run_id"].astype(str)))
    j_ans_set = ans
    j_text = [normalise_text(t) for t in jl["nugget"].astype(str)]
    r_keys, dup_r = {}, set()
    r_codes = labels_to_codes(rl["support"].astype(object).to_numpy())
    r_shared = 0
    for q, r, t, c in zip(rl["qid"].astype(str), rl["run_id"].astype(str), rl["nugget"].astype(str), r_codes):
        if (q, r) not in j_ans_set:
            continue
        r_shared += 1
        k = (q, r, normalise_text(t))
        if k in r_keys:
            dup_r.add(k)
        r_keys[k] = int(c)
    seen = {}
    keys = [(q, r, t) for (q, r), t in zip(j_ans, j_text)]
    for k in keys:
        seen[k] = seen.get(k, 0) + 1
    human = np.full(len(keys), -1, dtype=np.int8)
    matched = dup = j_shared = 0
    for i, ((q, r), k) in enumerate(zip(j_ans, keys)):
        if (q, r) not in r_ans:
            continue
        j_shared += 1
        if k in r_keys:
            if seen[k] > 1 or k in dup_r:
                dup += 1
                continue
            matched += 1
            human[i] = r_keys[k]
    return human, matched, j_shared, r_shared, dup


def _perturbed(nist_labels):
    """A small reference and a judge that differs from it in every way pairing has to handle."""
    rng = np.random.default_rng(7)
    ref = nist_labels.subset(qids=nist_labels.qids[:4])
    lab = ref.labels.copy()
    text = lab["nugget"].astype(str).to_numpy(dtype=object)
    pick = rng.random(len(text))
    text = np.where(pick < 0.1, np.char.upper(text.astype(str)).astype(object), text)           # case only: matches
    text = np.where((pick >= 0.1) & (pick < 0.2), np.array(["  " + t + " ." for t in text], dtype=object), text)
    text = np.where((pick >= 0.2) & (pick < 0.3), np.array([t + " (edited)" for t in text], dtype=object), text)
    lab["nugget"] = text
    sup = lab["support"].astype(object).to_numpy()
    sup = np.where(rng.random(len(sup)) < 0.3, rng.choice(["support", "partial_support", "not_support", "FAILED"],
                                                             len(sup)), sup)
    lab["support"] = pd.Categorical(sup, categories=ref.labels["support"].cat.categories)
    dup_rows = lab.sample(40, random_state=1)                                                  # judge-side duplicates
    lab = pd.concat([lab, dup_rows], ignore_index=True)
    answers = ref.answers.iloc[: len(ref.answers) - 15].copy()                                 # judge lacks 15 answers
    extra = ref.answers.iloc[:5].assign(run_id="judge_only_run")                                # answers the ref lacks
    extra_lab = lab[lab["qid"].isin(extra["qid"]) & lab["run_id"].isin(ref.answers["run_id"].iloc[:5])].head(30)
    extra_lab = extra_lab.assign(run_id="judge_only_run")
    judge = LabelSet("judge", pd.concat([lab, extra_lab], ignore_index=True), pd.concat([answers, extra], ignore_index=True))
    # reference-side duplicates too
    rlab = pd.concat([ref.labels, ref.labels.sample(25, random_state=2)], ignore_index=True)
    for col in ("importance", "support"):
        rlab[col] = pd.Categorical(rlab[col], categories=ref.labels[col].cat.categories)
    for col in ("importance", "support"):
        judge.labels[col] = pd.Categorical(judge.labels[col].astype(object), categories=ref.labels[col].cat.categories)
    return LabelSet("ref", rlab, ref.answers), judge


def test_pairing_vectorised_matches_reference_loop(nist_labels):
    from metaeval.calibration.pairing import pair_by_text

    ref, judge = _perturbed(nist_labels)
    fast = pair_by_text(ref, judge)
    human, matched, j_shared, r_shared, dup = _slow_pair_by_text(ref, judge)
    assert (fast.matched, fast.judge_pairs, fast.reference_pairs, fast.duplicates) == (matched, j_shared, r_shared, dup)
    assert np.array_equal(fast.human, human)
    assert len(fast.human) == len(fast.judge.sup)
    # the input really exercises the edge cases
    assert dup > 0 and 0 < matched < j_shared and (human == -1).sum() > dup
    # identical label sets pair completely
    same = pair_by_text(nist_labels, nist_labels)
    assert same.coverage == 1.0 and same.duplicates == 0


def test_ordinal_sorted_objective_equals_masked_likelihood():
    from metaeval.calibration.methods.ordinal import _nll_grad, _sorted_objective

    rng = np.random.default_rng(3)
    X = rng.normal(size=(500, 4))
    y = rng.integers(0, 3, 500)
    fun = _sorted_objective(X, y)
    for _ in range(5):
        params = rng.normal(size=6) * 0.5
        f_ref, g_ref = _nll_grad(params, X, y)
        f, g = fun(params)
        assert f == pytest.approx(f_ref, rel=1e-12)
        assert np.allclose(g, g_ref, rtol=1e-10, atol=1e-10)


def test_ordinal_point_fit_equals_full_fit_params(nist_labels):
    from metaeval.calibration.methods import get_method
    from metaeval.calibration.pairing import pair_by_text

    p = pair_by_text(nist_labels, nist_labels.subset(qids=nist_labels.qids[:6]))
    m = get_method("ordinal")
    human = np.where(np.random.default_rng(0).random(len(p.human)) < 0.2, np.random.default_rng(1).integers(0, 3, len(p.human)), p.human)
    full = m.fit_pairs(p.judge, human)
    point = m.fit_pairs(p.judge, human, covariance=False)
    assert full["params"] == point["params"] and point["cov_params"] is None
    a = m.apply_pairs(full, p.judge)
    b = m.apply_pairs(point, p.judge)
    for k in a.run:
        assert np.array_equal(a.run[k], b.run[k])
    with pytest.raises(Exception, match="covariance"):
        m.apply_pairs(point, p.judge, rng=np.random.default_rng(0))


def test_t_quantiles_equal_scipy_stats():
    from scipy.stats import t

    from metaeval.calibration.scorelevel import _t

    df = np.array([[0.0, 1.0, 2.5, np.nan], [30.0, 2.0, 2.0, np.inf]])
    for level in (0.95, 0.9, 0.95):
        assert np.allclose(_t(level, df), t.ppf(0.5 + level / 2, np.maximum(df, 1.0)), equal_nan=True, rtol=0, atol=0)


def test_draw_variance_bincount_equals_per_draw_loop():
    """expected_credit_prediction's (draw, run) bincount equals one bincount per draw."""
    from metaeval.calibration.methods.base import expected_credit_prediction
    from metaeval.calibration.pairs import Pairs

    rng = np.random.default_rng(5)
    n, A = 300, 40
    ans = np.sort(rng.integers(0, A, n))
    pairs = Pairs(ans=ans, imp=rng.integers(0, 3, n).astype(np.int8), sup=rng.integers(-1, 3, n).astype(np.int8),
                  nug_len=np.ones(n), pos=np.zeros(n), nugget_id=np.arange(n), ans_run=rng.integers(0, 5, A),
                  ans_topic=rng.integers(0, 3, A), ans_len=np.ones(A), run_ids=tuple("abcde"), qids=("q1", "q2", "q3"))
    prob = rng.dirichlet(np.ones(3), n)
    draws = rng.dirichlet(np.ones(3), (20, n))
    pr = expected_credit_prediction(pairs, prob, draws, ["v_strict", "a"], 0.95)
    nr = 5
    prun = pairs.pair_run()
    for m, fam, strict in (("v_strict", "vital", True), ("a", "all", False)):
        w = pairs.run_weights(fam)
        c = draws[..., 2] if strict else draws[..., 2] + 0.5 * draws[..., 1]
        p2, p1 = prob[:, 2], prob[:, 1]
        v = p2 * (1 - p2) if strict else np.maximum(p2 + 0.25 * p1 - (p2 + 0.5 * p1) ** 2, 0.0)
        var = np.bincount(prun, weights=w ** 2 * v, minlength=nr)
        runs_b = np.stack([np.bincount(prun, weights=w * c[b], minlength=nr) for b in range(c.shape[0])])
        assert np.array_equal(pr.se[m], np.sqrt(var + runs_b.var(axis=0, ddof=1)))


def test_answer_index_and_word_counts_match_dict_loop():
    from metaeval.calibration.pairs import _answer_index, _word_counts

    answers = pd.DataFrame({"qid": ["q1", "q1", "q2", "q2", "q1"], "run_id": ["a", "b", "a", "a", "b"]})  # (q2,a), (q1,b) twice
    lab = pd.DataFrame({"qid": ["q1", "q2", "q3", "q1", "q2", "q1"], "run_id": ["b", "a", "a", "a", "b", "c"]})
    key = {k: i for i, k in enumerate(zip(answers["qid"], answers["run_id"]))}
    slow = np.array([key.get(k, -1) for k in zip(lab["qid"], lab["run_id"])])
    assert np.array_equal(_answer_index(answers, lab), slow)
    texts = pd.Series(["a b  c", None, "", "  x\ty ", "a b  c"], dtype=object)
    slow_len = texts.fillna("").astype(str).str.split().str.len().to_numpy(float)
    assert np.array_equal(_word_counts(texts), slow_len)


def test_ordinal_newton_hessian_and_fit_agree_with_bfgs():
    from scipy.optimize import minimize

    from metaeval.calibration.methods.ordinal import _sorted_objective, fit_cumulative_logit

    rng = np.random.default_rng(11)
    X = rng.normal(size=(3000, 3))
    eta = X @ np.array([0.8, -0.5, 0.2])
    u = rng.logistic(size=3000)
    y = np.where(u < -0.3 - eta, 0, np.where(u < 0.9 - eta, 1, 2))
    fun = _sorted_objective(X, y)
    x0 = rng.normal(size=5) * 0.3
    _, _, H = fun(x0, True)
    num = np.column_stack([(fun(x0 + e)[1] - fun(x0 - e)[1]) / 2e-6 for e in np.eye(5) * 1e-6])
    assert np.allclose(H, num, rtol=1e-5, atol=1e-5)
    params, cov, llf, ok = fit_cumulative_logit(X, y)
    res = minimize(fun, np.zeros(5) + [0, 0, 0, -0.3, 0.2], jac=True, method="BFGS", options={"gtol": 1e-8})
    assert ok and np.allclose(params, res.x, atol=1e-6) and llf == pytest.approx(-res.fun, rel=1e-10)
    hess_opt = np.column_stack([(fun(params + e)[1] - fun(params - e)[1]) / 2e-6 for e in np.eye(5) * 1e-6])
    assert np.allclose(cov, np.linalg.inv((hess_opt + hess_opt.T) / 2), rtol=1e-4)


def _old_fit(X, y):
    """fit_cumulative_logit as it was before Newton: BFGS on _nll_grad, central-difference covariance."""
    from scipy.optimize import minimize
    from scipy.special import logit

    from metaeval.calibration.methods.ordinal import _nll_grad

    p = X.shape[1]
    q0 = np.clip(np.mean(y == 0), 1e-3, 1 - 1e-3)
    q1 = np.clip(np.mean(y <= 1), q0 + 1e-3, 1 - 1e-4)
    start = np.concatenate([np.zeros(p), [logit(q0), np.log(logit(q1) - logit(q0))]])
    res = minimize(_nll_grad, start, args=(X, y), jac=True, method="BFGS", options={"gtol": 1e-6, "maxiter": 1000})
    k = len(start)
    hess = np.zeros((k, k))
    for i in range(k):
        h = 1e-5 * max(1.0, abs(res.x[i]))
        e = np.zeros(k)
        e[i] = h
        hess[:, i] = (_nll_grad(res.x + e, X, y)[1] - _nll_grad(res.x - e, X, y)[1]) / (2 * h)
    return res.x, np.linalg.pinv((hess + hess.T) / 2), -float(res.fun), bool(res.success)


def test_ordinal_degenerate_fit_reproduces_the_former_optimiser_exactly():
    """A covariate that separates the top label (quasi-separation): the information is singular, so the fit
    takes the former BFGS path and gives the former numbers exactly; a regular fit agrees to optimiser precision."""
    from metaeval.calibration.methods.ordinal import fit_cumulative_logit

    rng = np.random.default_rng(2)
    y = rng.integers(0, 3, 400)
    X = np.column_stack([rng.normal(size=400), (y == 2).astype(float)])
    new, old = fit_cumulative_logit(X, y), _old_fit(X, y)
    # same point estimates; the covariance is the former one projected onto the PSD cone (its indefinite inverse
    # Hessian cannot be sampled from: numpy warned and drew nonsense), equal to it where it already was PSD
    from metaeval.calibration.methods.ordinal import _psd

    assert np.array_equal(new[0], old[0]) and np.allclose(new[1], _psd(old[1]), rtol=0, atol=1e-12) and new[2:] == old[2:]
    assert np.linalg.eigvalsh(new[1]).min() >= -1e-12
    Xr = rng.normal(size=(400, 2))
    yr = np.clip(np.round(Xr[:, 0] + rng.normal(size=400)) + 1, 0, 2).astype(int)
    new, old = fit_cumulative_logit(Xr, yr), _old_fit(Xr, yr)
    assert np.allclose(new[0], old[0], atol=1e-6) and np.allclose(new[1], old[1], rtol=1e-4, atol=1e-8)


def _slow_eq_solution_map(A, support):
    """_eq_solution_map before the KKT solve was shared with the stacked paths (kept verbatim as the reference)."""
    S = list(support)
    As = A[:, S]
    k = len(S)
    kkt = np.zeros((k + 1, k + 1))
    kkt[:k, :k] = As.T @ As
    kkt[:k, k] = 1.0
    kkt[k, :k] = 1.0
    inv = np.linalg.pinv(kkt)
    P = np.zeros((3, A.shape[0]))
    r = np.zeros(3)
    P[S] = inv[:k, :k] @ As.T
    r[S] = inv[:k, k]
    return P, r


def _slow_simplex_lstsq(A, q, t, maps):
    """simplex_lstsq before the supports were stacked: one pass per support (kept verbatim as the reference)."""
    q = np.atleast_2d(np.asarray(q, dtype=float))
    t = np.broadcast_to(np.asarray(t, dtype=float), q.shape[:1])
    best = np.full((q.shape[0], 3), np.nan)
    best_res = np.full(q.shape[0], np.inf)
    tol = 1e-12 * max(1.0, float(np.abs(t).max(initial=0.0)))
    for P, r in maps:
        p = q @ P.T + t[:, None] * r[None, :]
        feasible = (p >= -tol).all(axis=1)
        res = ((p @ A.T - q) ** 2).sum(axis=1)
        better = feasible & (res < best_res - 1e-15)
        best[better] = np.clip(p[better], 0.0, None)
        best_res[better] = res[better]
    return best


def test_stacked_support_maps_and_simplex_equal_the_per_support_loop():
    """The stacked pinv over every (stratum, support) and the vectorised simplex solve give the same numbers, bit
    for bit, as one ``_eq_solution_map`` per support and one pass per support; on random and degenerate
    (rank-deficient, one-hot) misclassification matrices, with group mixes inside and outside the simplex."""
    from metaeval.calibration.methods.matrix import (_SUPPORTS, _eq_solution_map, _eq_solution_map_batch, simplex_lstsq,
                                                     support_maps_stack)

    rng = np.random.default_rng(7)
    for trial in range(400):
        M = rng.dirichlet(np.full(4, 0.3 if trial % 3 else 2.0), size=(3, 3))  # (strata, human, judge)
        if trial % 10 == 0:
            M[:, 1] = M[:, 0]                      # two identical rows: a singular KKT system
        if trial % 10 == 1:
            M[:, 2] = np.eye(4)[3]                 # a one-hot row
        As = np.swapaxes(M, 1, 2)
        P, r = support_maps_stack(As)
        q = rng.random((25, 4)) * rng.choice([1.0, 0.01, 5.0])
        q[:3] = 0.0                                # empty groups
        t = q.sum(axis=1)
        Pb, rb = _eq_solution_map_batch(As)  # the drawn matrices' full-support maps
        for k in range(3):
            slow_maps = [_slow_eq_solution_map(As[k], S) for S in _SUPPORTS]
            for i, (Ps, rs) in enumerate(slow_maps):
                assert np.array_equal(P[k, i], Ps) and np.array_equal(r[k, i], rs)
                assert np.array_equal(_eq_solution_map(As[k], _SUPPORTS[i])[0], Ps)
            assert np.array_equal(Pb[k], slow_maps[0][0]) and np.array_equal(rb[k], slow_maps[0][1])
            fast = simplex_lstsq(As[k], q, t, maps=(P[k], r[k]))
            slow = _slow_simplex_lstsq(As[k], q, t, slow_maps)
            assert np.array_equal(fast, slow, equal_nan=True)
            lin = simplex_lstsq(As[k], q, t, constrained=False, maps=(P[k], r[k]))
            assert np.array_equal(lin, q @ slow_maps[0][0].T + t[:, None] * slow_maps[0][1][None, :])


def test_point_only_applies_give_the_same_estimates(nist_labels):
    """``point_only=True`` (what cross-fitting asks of label-level methods) leaves every estimate as it was and
    computes no interval."""
    from metaeval.calibration.methods import get_method
    from metaeval.calibration.pairing import pair_by_text
    from metaeval.testing.relabel import judge_like

    judge = judge_like(nist_labels, name="jl")
    pairing = pair_by_text(nist_labels, judge)
    jp, human = pairing.judge, pairing.human
    for name in ("posterior", "matrix", "matrix_unconstrained", "ordinal"):
        m = get_method(name)
        model = m.fit_pairs(jp, human)
        full = m.apply_pairs(model, jp, rng=np.random.default_rng(0))
        point = m.apply_pairs(model, jp, rng=np.random.default_rng(0), point_only=True)
        assert point.run.keys() == full.run.keys() and not point.se and not point.lo
        for k in full.run:
            assert np.array_equal(point.run[k], full.run[k], equal_nan=True), (name, k)
            assert np.array_equal(point.answers[k], full.answers[k], equal_nan=True), (name, k)
