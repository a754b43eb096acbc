"""Active topic selection: inclusion probabilities, Hajek rectifier, sequential Poisson order, replay; and the
expected human scores given judge labels (metaeval.planning.active / labels)."""

import numpy as np
import pytest

from metaeval.errors import ConfigError
from metaeval.planning import active
from metaeval.planning.labels import expected_scores, label_arrays, reverse_confusion, votes_from_codes
from metaeval.scoring import score_answers
from metaeval.types import build_label_set


def test_inclusion_caps_and_sums_to_n():
    # naive 2 * 8 / 10 = 1.6 > 1: capped, the remaining 1 is shared equally
    assert active.inclusion(np.array([1.0, 1.0, 8.0]), 2) == pytest.approx([0.5, 0.5, 1.0])
    pi = active.inclusion(np.array([1.0, 2.0, 3.0, 4.0]), 2)
    assert pi == pytest.approx([0.2, 0.4, 0.6, 0.8]) and pi.sum() == pytest.approx(2)
    with pytest.raises(ConfigError):
        active.inclusion(np.ones(3), 4)


def test_hajek_rectifier_hand_value():
    delta = np.array([[0.1, 0.0], [0.3, 0.2]])
    pi = np.array([0.5, 0.25])   # weights 2, 4
    assert active.hajek_rectifier(delta, pi) == pytest.approx([(0.2 + 1.2) / 6, (0.0 + 0.8) / 6])
    # equal probabilities: the plain mean (ordinary PPI)
    assert active.hajek_rectifier(delta, np.array([0.3, 0.3])) == pytest.approx(delta.mean(0))


def test_sequential_poisson_order_has_the_pips_inclusion_probabilities():
    u = np.array([1.0, 1.0, 2.0, 2.0, 4.0, 1.0, 1.0, 3.0])
    n, reps = 3, 8000
    rng = np.random.default_rng(0)
    hits = np.zeros(len(u))
    for _ in range(reps):
        hits[active.poisson_order(u, rng)[:n]] += 1
    # Ohlsson's sequential Poisson sampling is approximately pi-ps (here within 0.04)
    assert np.abs(hits / reps - active.inclusion(u, n)).max() < 0.04


def test_sizes_defensive_mixture_and_unknown_strategy():
    J = np.array([[0.2, 0.2], [0.1, 0.9], [0.5, 0.5]])
    u = active.sizes("runs", J=J)   # raw sd over runs: 0, 0.4, 0 -> mean 0.4/3
    assert u == pytest.approx([0.3, 0.7 * 3 + 0.3, 0.3])  # every topic keeps >= 0.3 x the uniform weight
    assert (active.sizes("random", J=J) == 1).all()
    with pytest.raises(ConfigError):
        active.sizes("oracle", J=J)
    with pytest.raises(ConfigError):
        active.sizes("votes", J=J)


def _hetero_world(seed=0, T=24, R=6):
    """Topics 0..T/2-1 have a noisy judge, the rest an almost exact one (known to the oracle size)."""
    rng = np.random.default_rng(seed)
    H = rng.uniform(0.2, 0.8, size=(T, R))
    noise = np.where(np.arange(T)[:, None] < T // 2, 0.25, 0.01)
    J = H - 0.05 + rng.normal(0, 1, size=(T, R)) * noise
    return H, J, noise[:, 0]


def test_replay_active_beats_random_when_the_size_knows_the_noise_and_greedy_is_biased():
    H, J, noise = _hetero_world()
    fns = {"random": lambda pil, pool, rng: np.ones(len(pool)),
           "oracle": lambda pil, pool, rng: active.defend(noise[pool]),
           "greedy": lambda pil, pool, rng: noise[pool]}
    res = active.replay(H, J, fns, pilot=4, budgets=[8, 12], reps=200, seed=1)
    rnd = {r["n"]: r for r in res["strategies"]["random"]}
    for r in res["strategies"]["oracle"]:
        assert r["mse_minus_random"] + 2 * r["mse_minus_random_se"] < 0      # a real win, in MC SEs
        assert r["relative_mse"] < 0.8
        assert "mse_minus_random" not in rnd[r["n"]]
    # greedy (noisiest first, unweighted) labels only noisy topics: worse than the reweighted order
    for g, o in zip(res["strategies"]["greedy"], res["strategies"]["oracle"]):
        assert g["mse"] > o["mse"]


def test_replay_size_that_is_backwards_loses():
    """The check can fail: sizes pointing at the exact topics make PPI worse than random."""
    H, J, noise = _hetero_world(1)
    fns = {"random": lambda pil, pool, rng: np.ones(len(pool)),
           "backwards": lambda pil, pool, rng: 1.0 / noise[pool]}
    res = active.replay(H, J, fns, pilot=4, budgets=[6], reps=150, seed=2)
    r = res["strategies"]["backwards"][0]
    assert r["mse_minus_random"] - 2 * r["mse_minus_random_se"] > 0


def test_replay_rejects_too_small_pool():
    with pytest.raises(ConfigError):
        active.replay(np.ones((6, 2)), np.ones((6, 2)), {"random": None}, pilot=4)


def test_rank_topics_excludes_labelled_and_is_a_permutation():
    u = np.array([1.0, 2.0, 3.0, 4.0])
    out = active.rank_topics(u, ["a", "b", "c", "d"], np.random.default_rng(0), exclude=["b"])
    assert sorted(r["qid"] for r in out) == ["a", "c", "d"] and [r["rank"] for r in out] == [1, 2, 3]
    assert out[-1]["pi_at_rank"] == pytest.approx(1.0)


# ---------------------------------------------------------------- expected human scores given judge labels
def _labels(sup, name="j"):
    rows = [("q1", "r1", 0, "alpha beta", "vital", sup[0], "vital", sup[0], 1),
            ("q1", "r1", 1, "gamma delta", "vital", sup[1], "vital", sup[1], 1),
            ("q1", "r1", 2, "eps zeta", "okay", sup[2], "okay", sup[2], 1),
            ("q1", "r2", 0, "alpha beta", "vital", sup[3], "vital", sup[3], 2),
            ("q1", "r2", 1, "gamma delta", "vital", sup[4], "vital", sup[4], 2),
            ("q1", "r2", 2, "eps zeta", "okay", sup[5], "okay", sup[5], 2)]
    ans = [("q1", "r1", "text one", 2, 1), ("q1", "r2", "text two", 2, 2)]
    return build_label_set(name, rows, ans)


def test_identity_expected_scores_equal_the_scoring_module():
    j = _labels(["support", "partial_support", "support", "not_support", "FAILED", "support"])
    arr = label_arrays(j, ["q1"], ["r1", "r2"])
    sc = score_answers(j).set_index("run_id")
    for metric in ("v_strict", "v", "a_strict", "a", "w_strict", "w"):
        E, V = expected_scores(arr, metric)
        assert E[0] == pytest.approx([sc.loc["r1", metric], sc.loc["r2", metric]])
        assert V[0] == pytest.approx([0.0, 0.0])


def test_expected_scores_with_reverse_confusion_hand_value():
    j = _labels(["support", "not_support", "support", "support", "support", "support"])
    arr = label_arrays(j, ["q1"], ["r1", "r2"])
    P = np.array([[0.7, 0.2, 0.1], [0.3, 0.4, 0.3], [0.1, 0.2, 0.7]])   # rows judge, cols human
    E, V = expected_scores(arr, "v_strict", P)
    # r1: vital nuggets judged support and not_support -> P(human support) 0.7 and 0.1
    assert E[0, 0] == pytest.approx((0.7 + 0.1) / 2)
    assert V[0, 0] == pytest.approx((0.7 * 0.3 + 0.1 * 0.9) / 4)
    # partial credit: E[c] = 0.5 P(partial) + P(support)
    Ev, _ = expected_scores(arr, "v", P)
    assert Ev[0, 0] == pytest.approx(((0.1 + 0.7) + (0.1 + 0.1)) / 2)


def test_vote_fractions_give_the_mean_score_over_draws():
    draws = [["support", "not_support", "support", "partial_support", "support", "not_support"],
             ["support", "support", "not_support", "partial_support", "not_support", "not_support"],
             ["not_support", "support", "support", "support", "support", "FAILED"]]
    sets = [_labels(d, f"s{i}") for i, d in enumerate(draws)]
    from metaeval.simulation import labels_to_codes

    codes = np.stack([labels_to_codes(np.array(d, dtype=object)) for d in draws])
    arr = label_arrays(sets[0], ["q1"], ["r1", "r2"], votes=votes_from_codes(codes))
    for metric in ("v_strict", "a", "w"):
        E, _ = expected_scores(arr, metric)
        mean = np.mean([score_answers(s).set_index("run_id").loc[["r1", "r2"], metric].to_numpy() for s in sets], axis=0)
        assert E[0] == pytest.approx(mean)


def test_reverse_confusion_pairs_by_text_not_position():
    human = _labels(["support", "not_support", "support", "support", "support", "support"], "h")
    judge = _labels(["support", "support", "support", "support", "not_support", "support"])
    judge.labels["nugget"] = judge.labels["nugget"].replace({"alpha beta": "Alpha  beta.", "gamma delta": "something else"})
    arr = label_arrays(judge, ["q1"], ["r1", "r2"], reference=human)
    assert (arr.human >= 0).sum() == 4            # "something else" has no human label
    P, n = reverse_confusion(arr, prior=0.0)
    assert n == 4 and P[2] == pytest.approx([0.0, 0.0, 1.0])


def test_stratified_ppi_hand_values():
    H = np.array([[0.5, 0.2], [0.4, 0.6], [0.9, 0.1], [np.nan, np.nan]])
    J = np.array([[0.3, 0.2], [0.4, 0.4], [0.5, 0.3], [0.2, 0.6]])
    pilot = np.array([True, False, False, False])
    sizes = np.array([0.0, 1.0, 3.0, 1.0])   # pilot entry ignored
    pi = active.inclusion(np.array([1.0, 3.0, 1.0]), 2)
    d1, d2 = H[1] - J[1], H[2] - J[2]
    hajek = (d1 / pi[0] + d2 / pi[1]) / (1 / pi[0] + 1 / pi[1])
    expect = J.mean(0) + ((H[0] - J[0]) + 3 * hajek) / 4
    assert active.stratified_ppi(H, J, pilot, sizes) == pytest.approx(expect)
    # everything labelled, equal sizes: the human mean exactly
    Hf = H.copy()
    Hf[3] = [0.3, 0.3]
    assert active.stratified_ppi(Hf, J, pilot, np.ones(4)) == pytest.approx(Hf.mean(0))
    # only the pilot: its rectifier for all topics
    Hp = np.full_like(H, np.nan)
    Hp[0] = H[0]
    assert active.stratified_ppi(Hp, J, pilot, sizes) == pytest.approx(J.mean(0) + (H[0] - J[0]))
    with pytest.raises(ConfigError):
        active.stratified_ppi(Hp, J, np.array([False, True, False, False]), sizes)
