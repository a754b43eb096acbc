"""Which topics to send to the assessors next, and a replay check that the order helps.

Design.  Picking the most uncertain topics deterministically and averaging their rectifiers biases PPI (the
labelled topics are then not representative).  We instead draw a probability-proportional-to-size order with
*sequential Poisson sampling* (Ohlsson 1998, J. Official Statistics 14:149): with a uniform ``U_t`` per topic
and a size measure ``u_t > 0``, sort topics by ``U_t / u_t``; the first ``n`` form an approximate pi-ps sample
with inclusion probabilities ``pi_t = min(1, n u_t / sum u)`` (capped iteratively).  The order is fixed, so
it is a list for the assessors, and it stays valid when the budget changes.  The rectifier is the Hajek
(ratio) mean, ``mu_hat = sum_L Delta_t / pi_t / sum_L 1 / pi_t``, and the calibrated run score
``mean_T J + mu_hat`` (Zrnic & Candes 2024, "Active statistical inference", ICML, for the idea of sampling
labels where the model is uncertain and reweighting).  With ``u`` constant this is simple random sampling and
plain PPI.

Size measures (Neyman allocation for a Hajek mean puts ``pi_t`` proportional to the sd of ``Delta_t - mu``):

* ``confusion``: ``u_t^2 = mean_r (Var[H_rt | J] + (m_rt - mean_t m_rt)^2)`` with ``m = E[H | J] - J`` from the
  reverse confusion of the labelled topics (``labels.expected_scores``); vote fractions enter here when the
  judge was sampled k times.
* ``votes``: ``u_t^2 = mean_r Var_votes[J_rt]``: the judge's own disagreement across its k samples.
* ``runs``: ``u_t = sd_r J_rt``: topics on which the runs differ most.
* ``random``: ``u_t = 1``.

Every size is mixed with the uniform design, ``u <- (1 - delta) u / mean(u) + delta`` (``delta = 0.3``; a
"defensive mixture", Hesterberg 1995, Technometrics 37:185): every topic keeps an inclusion probability of at
least ``delta`` times the uniform one, which the reweighting needs.  Without it, a strongly tilted design loses to
random order at small budgets (few, heavily weighted draws: MSE x1.5-1.7 at 2-4 of 20 topics in a
25:1-noise test world); with it the loss there is <= x1.1 and the gain at larger budgets is kept.  ``greedy`` (the largest ``confusion`` size first, unweighted mean) is kept
as a comparator only, to show the bias of the naive rule.
"""

from __future__ import annotations

import warnings

from typing import Any, Callable, Sequence

import numpy as np

from metaeval.errors import ConfigError

STRATEGIES = ("random", "confusion", "votes", "runs")
DEFENSIVE = 0.3


def defend(u: np.ndarray, delta: float = DEFENSIVE) -> np.ndarray:
    """Defensive mixture with the uniform design: ``(1 - delta) u / mean(u) + delta`` (all ones if ``u`` is 0)."""
    u = np.where(np.isfinite(u), np.asarray(u, dtype=float), 0.0)
    if not 0 <= delta <= 1:
        raise ConfigError(f"defensive share {delta} must be in [0, 1]")
    m = u.mean() if u.size else 0.0
    return (1.0 - delta) * u / m + delta if m > 0 else np.ones_like(u)


def sizes(strategy: str, *, J: np.ndarray, E: np.ndarray | None = None, V: np.ndarray | None = None,
          V_votes: np.ndarray | None = None, delta: float = DEFENSIVE) -> np.ndarray:
    """Size measure ``u_t`` per topic (rows of the (topic x run) matrices) for ``strategy``."""
    if strategy == "random":
        u = np.ones(J.shape[0])
    elif strategy == "runs":
        u = np.nanstd(J, axis=1)
    elif strategy == "confusion":
        if E is None or V is None:
            raise ConfigError("strategy 'confusion' needs the expected human scores (paired labels)")
        m = E - J
        with warnings.catch_warnings():  # a topic with no paired run scores gives NaN: ``defend`` sizes it delta
            warnings.simplefilter("ignore", RuntimeWarning)
            u = np.sqrt(np.nanmean(V + (m - np.nanmean(m, axis=0)) ** 2, axis=1))
    elif strategy == "votes":
        if V_votes is None:
            raise ConfigError("strategy 'votes' needs k > 1 judge samples")
        u = np.sqrt(np.nanmean(V_votes, axis=1))
    else:
        raise ConfigError(f"active-selection strategy {strategy!r}; expected one of {', '.join(STRATEGIES)}")
    return defend(u, delta)


def poisson_order(u: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Sequential Poisson sampling order: topics sorted by ``U_t / u_t`` (ascending)."""
    return np.argsort(rng.random(len(u)) / np.asarray(u, dtype=float), kind="stable")


def inclusion(u: np.ndarray, n: int) -> np.ndarray:
    """pi-ps inclusion probabilities ``min(1, n u_t / sum u)``, capped iteratively so they sum to ``n``."""
    u = np.asarray(u, dtype=float)
    if not 0 < n <= len(u):
        raise ConfigError(f"sample size {n} must be in [1, {len(u)}]")
    pi = np.zeros_like(u)
    capped = np.zeros(len(u), dtype=bool)
    for _ in range(len(u)):
        rest = n - capped.sum()
        free = ~capped
        pi[free] = rest * u[free] / u[free].sum()
        pi[capped] = 1.0
        over = free & (pi >= 1.0)
        if not over.any():
            break
        capped |= over
    return np.clip(pi, 1e-12, 1.0)


def hajek_rectifier(delta: np.ndarray, pi: np.ndarray) -> np.ndarray:
    """Per run ``sum_t Delta_t / pi_t / sum_t 1 / pi_t`` over the labelled rows of ``delta`` (n x R)."""
    w = 1.0 / np.asarray(pi, dtype=float)
    ok = np.isfinite(delta)
    return (np.where(ok, delta, 0.0) * w[:, None]).sum(0) / (ok * w[:, None]).sum(0)


def stratified_ppi(H: np.ndarray, J: np.ndarray, pilot: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """Calibrated run means after following the plan: the pilot topics are one stratum (all labelled), the other
    topics a second stratum of which the labelled ones (finite rows of ``H``) were taken in the plan's
    sequential-Poisson order with ``sizes`` (one per topic; pilot entries ignored):

        theta_r = mean_T J_r + (sum_{t in pilot} Delta_rt + |R| * Hajek_R(Delta_r)) / T

    with ``Hajek_R`` over the labelled non-pilot topics at inclusion probabilities ``inclusion(sizes_R, n_R)``
    (0 when none is labelled yet, i.e. only the pilot rectifies).  ``H``: (T, R) with NaN rows for unlabelled
    topics; ``J``: (T, R) judge scores on all topics.  With equal sizes this is ordinary PPI over all labelled
    topics weighted by stratum size."""
    H, J = np.asarray(H, dtype=float), np.asarray(J, dtype=float)
    pilot = np.asarray(pilot, dtype=bool)
    labelled = np.isfinite(H).all(1)
    if not labelled[pilot].all():
        raise ConfigError("every pilot topic needs human labels")
    T = H.shape[0]
    rest = ~pilot
    D = H - J
    total = np.where(pilot[:, None], D, 0.0).sum(0)
    lab_rest = labelled & rest
    n = int(lab_rest.sum())
    if n:
        u = np.asarray(sizes, dtype=float)[rest]
        pi_rest = inclusion(u, n)
        pi = np.zeros(T)
        pi[rest] = pi_rest
        total = total + rest.sum() * hajek_rectifier(D[lab_rest], pi[lab_rest])
    elif not pilot.any():
        raise ConfigError("no labelled topic")
    else:
        total = total + rest.sum() * D[pilot].mean(0)
    return J.mean(0) + total / T


def rank_topics(u: np.ndarray, qids: Sequence[str], rng: np.random.Generator, exclude: Sequence[str] = ()) -> list[dict[str, Any]]:
    """The assessors' list: unlabelled topics in sequential-Poisson order, each with its size and the
    inclusion probability it has when the first ``k`` topics of the list are labelled."""
    keep = np.array([q not in set(exclude) for q in qids])
    idx = np.flatnonzero(keep)
    if not idx.size:
        return []
    uu = np.asarray(u, dtype=float)[idx]
    order = poisson_order(uu, rng)
    out = []
    for k, o in enumerate(order, start=1):
        out.append({"rank": k, "qid": qids[idx[o]], "size": float(uu[o]), "pi_at_rank": float(inclusion(uu, k)[o])})
    return out


def replay(H: np.ndarray, J: np.ndarray, size_fns: dict[str, Callable[[np.ndarray, np.ndarray, np.random.Generator], np.ndarray]],
           *, pilot: int = 5, budgets: Sequence[int] | None = None, reps: int = 200, seed: int = 0,
           judge_draw: Callable[[np.random.Generator], tuple[np.ndarray, Callable]] | None = None) -> dict[str, Any]:
    """Replay the labelling loop on topics that have human labels.

    Per replication: ``pilot`` random topics are the labelled pilot (used only to fit the size measure), the
    other topics are the pool whose human labels are held back; each strategy orders the pool, and for each
    budget ``n`` the calibrated run means over the pool (``mean_pool J + Hajek rectifier of the first n``)
    are compared with the pool's human run means.  Records the mean over runs of the squared error.

    ``size_fns[name](pilot_idx, pool_idx, rng) -> u`` (sizes for the pool topics); ``"greedy"`` in
    ``size_fns`` means: that size, largest first, unweighted mean.  ``judge_draw(rng) -> (J, size_fns)``
    redraws a simulated judge per replication (then ``J``/``size_fns`` given here are ignored).  Every draw
    (pilots, Poisson orders, redrawn judges) comes from ``random_streams.stream(seed, "planning.replay")``.
    Returns per strategy and budget the RMSE with its Monte-Carlo SE and the paired difference of the mean
    squared error against ``random`` (negative = better than random) with its SE.
    """
    H = np.asarray(H, dtype=float)
    keep = np.isfinite(H).all(0) & (np.isfinite(J).all(0) if J is not None else True)
    T = H.shape[0]
    if not 2 <= pilot <= T - 3:
        raise ConfigError(f"pilot of {pilot} topics leaves too small a pool of {T - pilot} (need >= 3)")
    pool_n = T - pilot
    budgets = sorted({int(b) for b in (budgets or range(2, pool_n))} & set(range(1, pool_n)))
    from metaeval.random_streams import stream

    rng = stream(seed, "planning.replay")
    names = list(size_fns)
    mse = {s: np.zeros((reps, len(budgets))) for s in names}
    for rep in range(reps):
        Jr, fns = (J, size_fns) if judge_draw is None else judge_draw(rng)
        ok = keep & np.isfinite(Jr).all(0)
        perm = rng.permutation(T)
        pil, pool = np.sort(perm[:pilot]), np.sort(perm[pilot:])
        Hp, Jp = H[pool][:, ok], Jr[pool][:, ok]
        truth, jmean, D = Hp.mean(0), Jp.mean(0), Hp - Jp
        for s in names:
            greedy = s == "greedy"
            u = fns[s](pil, pool, rng)
            order = np.argsort(-u, kind="stable") if greedy else poisson_order(u, rng)
            for b_i, n in enumerate(budgets):
                lab = order[:n]
                pi = np.ones(n) if greedy else inclusion(u, n)[lab]
                est = jmean + hajek_rectifier(D[lab], pi)
                mse[s][rep, b_i] = float(np.mean((est - truth) ** 2))
    out: dict[str, Any] = {"pilot": pilot, "pool": pool_n, "reps": reps, "budgets": budgets, "strategies": {}}
    base = mse.get("random")
    for s in names:
        m = mse[s]
        mean, se = m.mean(0), m.std(0, ddof=1) / np.sqrt(reps)
        rmse = np.sqrt(mean)
        rows = []
        for b_i, n in enumerate(budgets):
            row = {"n": n, "rmse": float(rmse[b_i]), "rmse_se": float(se[b_i] / (2 * rmse[b_i])) if rmse[b_i] > 0 else 0.0,
                   "mse": float(mean[b_i]), "mse_se": float(se[b_i])}
            if base is not None and s != "random":
                d = m[:, b_i] - base[:, b_i]
                row["mse_minus_random"] = float(d.mean())
                row["mse_minus_random_se"] = float(d.std(ddof=1) / np.sqrt(reps))
                row["relative_mse"] = float(mean[b_i] / base[:, b_i].mean()) if base[:, b_i].mean() > 0 else None
            rows.append(row)
        out["strategies"][s] = rows
    return out
