"""Pooled (all topic x run cells) rank correlations under topic resampling, without re-forming pairs.

Resampling topics with replacement gives each topic ``t`` a multiplicity ``w_t``; the pooled list holds ``w_t``
copies of every cell of ``t``.  Every pair statistic of that list is a quadratic form in ``w``, so one pass over
the ``N^2`` cell pairs gives ``T x T`` block matrices and each bootstrap replicate costs ``O(T^2)``:

* ``M[t,u]  = sum_{i in t, j in u} sign(x_i - x_j) sign(y_i - y_j)``  ->  ``S(w) = w'Mw / 2``
* ``X[t,u]  = #{i in t, j in u : x_i = x_j}`` (``i = j`` included)  ->  ``n1(w) = (w'Xw - w'n) / 2``
* likewise ``Y`` for ``n2``; ``N(w) = w'n`` cells and ``n0(w) = N(N-1)/2`` pairs.

Two copies of one cell form a pair tied on both sides, exactly as when the resampled list is written out and
given to ``scipy.stats.kendalltau``.  tau_AP is linear in ``w`` per item: with ``G[i,u]`` the cells of topic
``u`` strictly above cell ``i`` in the candidate and ``H[i,u]`` their credit (1 above in the reference, 1/2 tied),
``p_i(w) = (H w)_i / (G w)_i`` and ``tau_AP(w)`` is the ``w``-weighted mean of ``2 p_i - 1`` over items with
``(G w)_i > 0`` (tie policy of :mod:`metaeval.analysis.kendall`).
"""

from __future__ import annotations

import numpy as np

from metaeval.analysis.kendall import _div, get_variant

_CHUNK_ELEMENTS = 4_000_000


class PooledKernel:
    """Block statistics of a ``(T, R)`` reference ``x`` and candidate ``y`` (NaN = missing cell)."""

    def __init__(self, x: np.ndarray, y: np.ndarray, kind: str = "pairs"):
        x = np.asarray(x, dtype=float)
        y = np.asarray(y, dtype=float)
        ok = ~(np.isnan(x) | np.isnan(y))
        self.n_topics = x.shape[0]
        self.topic = np.nonzero(ok)[0]
        self.xs = x[ok]
        self.ys = y[ok]
        self.n = np.bincount(self.topic, minlength=self.n_topics).astype(float)
        self.kind = kind
        if kind == "pairs":
            self._pairs_blocks()
        elif kind == "ap":
            self.ap_fwd = self._ap_blocks(self.xs, self.ys)
            self._ap_rev: tuple[np.ndarray, np.ndarray] | None = None
        else:
            raise ValueError(f"unknown pooled kernel {kind!r}")

    def _by_topic(self, rows: np.ndarray) -> np.ndarray:
        """Sum a ``(k, N)`` matrix over its rows, then its columns by topic -> ``(T,)``."""
        return np.bincount(self.topic, weights=rows.sum(axis=0), minlength=self.n_topics)

    def _pairs_blocks(self) -> None:
        t_count = self.n_topics
        self.M = np.zeros((t_count, t_count))
        self.X = np.zeros((t_count, t_count))
        self.Y = np.zeros((t_count, t_count))
        for t in range(t_count):
            idx = self.topic == t
            if not idx.any():
                continue
            dx = self.xs[idx, None] - self.xs[None, :]
            dy = self.ys[idx, None] - self.ys[None, :]
            self.M[t] = self._by_topic(np.sign(dx) * np.sign(dy))
            self.X[t] = self._by_topic((dx == 0).astype(float))
            self.Y[t] = self._by_topic((dy == 0).astype(float))

    def _ap_blocks(self, ref: np.ndarray, cand: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        g = np.zeros((len(ref), self.n_topics))
        h = np.zeros((len(ref), self.n_topics))
        for u in range(self.n_topics):
            idx = self.topic == u
            if not idx.any():
                continue
            above = cand[None, idx] > cand[:, None]  # (N, n_u): cell j of topic u above cell i in the candidate
            rj, ri = ref[None, idx], ref[:, None]
            credit = (rj > ri) + 0.5 * (rj == ri)
            g[:, u] = above.sum(axis=1)
            h[:, u] = (above * credit).sum(axis=1)
        return g, h

    @property
    def ap_rev(self) -> tuple[np.ndarray, np.ndarray]:
        """Blocks with the roles swapped (for the symmetric tau_AP), built on first use."""
        if self._ap_rev is None:
            self._ap_rev = self._ap_blocks(self.ys, self.xs)
        return self._ap_rev

    # ----------------------------------------------------------------- statistics
    def tau(self, weights: np.ndarray, variant: str = "b") -> np.ndarray:
        """Pooled tau for each row of ``weights`` (``(B, T)`` topic multiplicities; ones = the observed data)."""
        v = get_variant(variant)
        w = np.atleast_2d(np.asarray(weights, dtype=float))
        if v.kind == "ap":
            if self.kind != "ap":
                raise ValueError("kernel was built for tau-a/b; build it with kind='ap'")
            fwd = self._ap(w, *self.ap_fwd)
            return fwd if v.name == "ap" else 0.5 * (fwd + self._ap(w, *self.ap_rev))
        if self.kind != "pairs":
            raise ValueError("kernel was built for tau_AP; build it with kind='pairs'")
        quad = lambda m: np.einsum("bt,tu,bu->b", w, m, w)  # noqa: E731
        n_w = w @ self.n
        n0 = n_w * (n_w - 1) / 2.0
        s = quad(self.M) / 2.0
        if v.name == "a":
            return _div(s, n0)
        n1 = (quad(self.X) - n_w) / 2.0
        n2 = (quad(self.Y) - n_w) / 2.0
        return _div(s, np.sqrt(np.clip(n0 - n1, 0, None) * np.clip(n0 - n2, 0, None)))

    def _ap(self, w: np.ndarray, g: np.ndarray, h: np.ndarray) -> np.ndarray:
        step = max(1, _CHUNK_ELEMENTS // max(g.shape[0], 1))  # bound the (B, N) temporaries
        if len(w) > step:
            return np.concatenate([self._ap(w[s:s + step], g, h) for s in range(0, len(w), step)])
        p = w @ g.T  # (B, N) items above each cell
        c = w @ h.T
        wi = w[:, self.topic]
        used = (p > 0) & (wi > 0)
        per_item = np.where(used, 2.0 * _div(c, p) - 1.0, 0.0)
        return _div((wi * per_item).sum(axis=1), (wi * used).sum(axis=1))
