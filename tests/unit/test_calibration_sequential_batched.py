"""The batched sequential rule (metaeval.study.calibration_workflow.sequential: ``_block_stats``, ``_bands``,
``status``, ``can_settle``) gives bit-identical statistics and exactly the same settle / not-settled answers as the per-comparison
code it replaced, kept below verbatim as the reference."""

from __future__ import annotations

import numpy as np

from metaeval.study.calibration_workflow import sequential as seq

S = 20


# --------------------------------------------------------------------------- the former per-comparison code
def _old_sd_of_sd(d):
    s = d.size
    c = d - d.mean()
    v = float((c ** 2).mean())
    kurt = float((c ** 4).mean()) / v ** 2 if v > 0 else 3.0
    return max(0.5 * np.sqrt(max(kurt - (s - 3) / (s - 1), 0.0) / s), 1.0 / np.sqrt(2.0 * (s - 1)))


def _old_band(d, k, total, n_fit, n_held, z, min_splits):
    d = np.asarray(d, dtype=float)
    d = d[np.isfinite(d)]
    s = d.size
    if s < min(min_splits, total) or s < 2:
        return None
    r = n_held / max(n_fit, 1)
    sigma = float(d.std(ddof=1))
    se_proj = float(np.sqrt((1.0 / total + r) * sigma ** 2))
    g = float(d.mean()) + k * se_proj
    g_now = float(d.mean()) + k * float(np.sqrt((1.0 / s + r) * sigma ** 2))
    left = max(total - s, 0)
    spread = sigma * np.sqrt(left / (total * s)) + k * se_proj * left / total * _old_sd_of_sd(d)
    if g == 0.0 or abs(g) <= z * spread or g_now == 0.0 or (g > 0) != (g_now > 0):
        return None
    return 1 if g > 0 else -1


def _old_status(err, tau, total, n_fit, n_held, z=seq.Z, min_splits=seq.MIN_SPLITS):
    if len(err["raw"]) >= total:
        return True, set()

    def sign(x, a, b, k):
        return _old_band(np.asarray(x[a], float) - np.asarray(x[b], float), k, total, n_fit, n_held, z, min_splits)

    def tau_ok(c):
        g = sign(tau, c, "raw", 1)
        return None if g is None else g > 0

    base = "raw"
    if "composite" in err:
        lower = sign(err, "composite", "raw", 0)
        if lower is None:
            return False, set()
        if lower < 0:
            ok = tau_ok("composite")
            if ok is None:
                return False, set()
            base = "composite" if ok else "raw"
    passing, out, done = [], set(), True
    for c in err:
        if c in ("raw", "composite"):
            continue
        beats = sign(err, c, base, 1)
        if beats is not None and beats > 0:
            out.add(c)
            continue
        ok = tau_ok(c)
        if ok is False:
            out.add(c)
            continue
        if beats is None or ok is None:
            done = False
            continue
        passing.append(c)
    if done and len(passing) > 1:
        means = {c: np.nanmean(np.asarray(err[c], float)) for c in passing}
        lead = min(passing, key=lambda c: (means[c], c))
        done = all(sign(err, c, lead, 0) is not None for c in passing if c != lead)
    return done, out


# --------------------------------------------------------------------------- inputs
def _rows(rng, n):
    """Rows of 2..40 values: normal, heavy-tailed, constant, tiny and huge scales, some with NaN / inf."""
    rows = []
    for _ in range(n):
        s = int(rng.integers(2, 41))
        kind = rng.integers(5)
        scale = 10.0 ** rng.uniform(-6, 2)
        if kind == 0:
            d = rng.normal(rng.normal(0, 2) * scale, scale, s)
        elif kind == 1:
            d = rng.standard_t(2, s) * scale
        elif kind == 2:
            d = np.full(s, rng.normal() * scale)
        elif kind == 3:
            d = rng.choice([-1.0, 1.0, 0.0], s) * scale
        else:
            d = rng.exponential(scale, s) - scale
        rows.append(d)
    return rows


def _scenario(rng, names=("composite", "ppi", "ppi_pp", "regression", "matrix", "ordinal")):
    """Per-split errors and taus with effects around the rule's thresholds; some candidates missing on later
    splits (NaN: dropped, or failed there), sometimes no composite."""
    n_fit, n_held = int(rng.integers(8, 60)), int(rng.integers(4, 50))
    sd = rng.uniform(0.002, 0.02)
    se1 = sd * np.sqrt(1 / S + n_held / n_fit)
    err = {"raw": rng.normal(0.05, sd, S) + rng.normal(0, sd, S)}
    tau = {"raw": 0.7 + rng.normal(0, 0.05, S)}
    for name in names:
        if name == "composite" and rng.random() < 0.2:
            continue
        err[name] = err["raw"] + rng.normal(rng.uniform(-4, 2) * se1, sd * rng.uniform(0.1, 1.5), S)
        tau[name] = tau["raw"] + rng.normal(rng.uniform(-3, 3) * 0.05 * np.sqrt(1 / S + n_held / n_fit),
                                            0.05 * rng.uniform(0.1, 1.5), S)
        if rng.random() < 0.15:
            cut = int(rng.integers(1, S))
            err[name][cut:] = np.nan
            tau[name][cut:] = np.nan
        if rng.random() < 0.1:
            tau[name][int(rng.integers(S))] = np.nan
        if rng.random() < 0.05:  # a candidate that coincides with raw on every split (sigma = 0)
            err[name] = err["raw"].copy()
    return err, tau, n_fit, n_held


# --------------------------------------------------------------------------- tests
def test_row_statistics_are_bit_identical_to_the_per_row_code():
    rng = np.random.default_rng(34)
    for _ in range(300):
        s = int(rng.integers(2, 41))
        block = np.stack([np.resize(d, s) for d in _rows(rng, int(rng.integers(1, 30)))])
        got = np.array(seq._block_stats(block), dtype=float)
        want = np.array([[float(d.mean()) for d in block], [float(d.std(ddof=1)) for d in block],
                         [_old_sd_of_sd(d) for d in block]])
        assert np.array_equal(got, want), "batched statistics moved"


def test_bands_equal_the_former_band_on_every_row_and_both_ks():
    rng = np.random.default_rng(35)
    for _ in range(300):
        rows = _rows(rng, int(rng.integers(1, 25)))
        for d in rows:
            if rng.random() < 0.2:
                d[rng.integers(d.size)] = rng.choice([np.nan, np.inf])
        total = int(rng.integers(2, 41))
        rows = [d[:total] for d in rows]
        ks = [int(k) for k in rng.integers(0, 2, len(rows))]
        n_fit, n_held = int(rng.integers(1, 60)), int(rng.integers(1, 50))
        z, ms = float(rng.choice([0.5, 2.0, seq.Z])), int(rng.integers(1, 12))
        got = seq._bands(rows, ks, total, n_fit, n_held, z, ms)
        assert got == [_old_band(d, k, total, n_fit, n_held, z, ms) for d, k in zip(rows, ks)]


def test_status_gives_the_former_answers_at_every_prefix_and_can_settle_is_exact():
    rng = np.random.default_rng(36)
    settled = excluded = 0
    for _ in range(400):
        err, tau, a, b = _scenario(rng)
        z = float(rng.choice([1.0, 2.0, seq.Z]))
        for s in range(1, S + 1):
            e, t = {k: v[:s] for k, v in err.items()}, {k: v[:s] for k, v in tau.items()}
            old = _old_status(e, t, S, a, b, z)
            assert seq.status(e, t, S, a, b, z) == old, (s, old)
            if not seq.can_settle(s, S):
                assert old == (False, set())
            settled += old[0] and s < S
            excluded += bool(old[1])
    assert settled > 100 and excluded > 100  # the scenarios reach both outcomes, not only "not yet"
