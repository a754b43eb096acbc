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
_GLOBAL_GRID = 4_000_000  # topics x distinct x values x distinct y values below which one dense grid is used


def _position_table(local: np.ndarray, k: int) -> np.ndarray:
    """Extended-grid position of every global value code ``0..k-1`` relative to a topic's distinct codes.

    ``local``: the topic's distinct value codes, sorted.  Position ``2l`` lies strictly between ``local[l-1]``
    and ``local[l]``; ``2l + 1`` equals ``local[l]``, so for a cell ``j`` of the topic (position ``2c_j + 1``)
    ``sign(v_i - v_j) = sign(pos_i - (2c_j + 1))``.
    """
    codes = np.arange(k)
    left = np.searchsorted(local, codes, side="left")
    eq = local[np.minimum(left, len(local) - 1)] == codes
    return 2 * left + eq


class PooledKernel:
    """Block statistics of a ``(T, R)`` reference ``x`` and candidate ``y`` (NaN = missing cell).

    Blocks are built one topic ``u`` at a time without forming the ``N x N`` pair matrix: the topic's cells are
    counted on the grid of its distinct (x, y) values (``k_x x k_y``, at most ``R x R``), the pair kernel
    (``sign(.) sign(.)`` or the tau_AP credit) is applied to that grid with two small matrix products over an
    extended grid of "below / equal / between" positions (:func:`_position_table`), and every distinct
    ``(x, y)`` value pair ("combo", ``K2 <= N`` of them) reads its value ``sum_{j in u} k(i, j)`` from the grid;
    cells with the same combo share it, so ``M = C G`` with ``C[t, combo]`` the cell counts.  Cost
    ``O(T (K_x + K_y + K2 + R^3))`` and memory ``O(N + T^2 + K2 T)`` instead of ``O(N^2)``.
    """

    def __init__(self, x: np.ndarray, y: np.ndarray, kind: str = "pairs"):
        from metaeval.analysis.kendall import settle

        x = settle(x)
        y = settle(y)
        ok = ~(np.isnan(x) | np.isnan(y))
        self.n_topics = x.shape[0]
        self.topic = np.nonzero(ok)[0]
        self.xs = x[ok]
        self.ys = y[ok]
        self.n = np.bincount(self.topic, minlength=self.n_topics).astype(float)
        self.kind = kind
        _, self.xcode = np.unique(self.xs, return_inverse=True)
        _, self.ycode = np.unique(self.ys, return_inverse=True)
        self.xcode, self.ycode = self.xcode.ravel(), self.ycode.ravel()
        self.kx = int(self.xcode.max()) + 1 if len(self.xcode) else 0
        self.ky = int(self.ycode.max()) + 1 if len(self.ycode) else 0
        combos, self.combo = np.unique(self.xcode * max(self.ky, 1) + self.ycode, return_inverse=True)
        self.combo = self.combo.ravel()
        self.cx, self.cy = combos // max(self.ky, 1), combos % max(self.ky, 1)
        k2 = len(combos)
        self.C = np.bincount(self.topic * k2 + self.combo, minlength=self.n_topics * k2).reshape(self.n_topics, k2)
        self.C = self.C.astype(float)  # C[t, combo]: cells of topic t with that (x, y) value pair
        self._local_grids: list | None = None
        if kind == "pairs":
            self._pairs_blocks()
        elif kind == "ap":
            self._ap_cache: dict[tuple[bool, float], tuple[np.ndarray, np.ndarray]] = {}
        else:
            raise ValueError(f"unknown pooled kernel {kind!r}")

    @property
    def _local(self) -> list:
        """Per topic: its distinct x / y codes and count grid (built on first use)."""
        if self._local_grids is None:
            starts = np.searchsorted(self.topic, np.arange(self.n_topics + 1))  # cells are ordered by topic
            self._local_grids = [self._topic_grid(starts[u], starts[u + 1]) for u in range(self.n_topics)]
        return self._local_grids

    def _topic_grid(self, lo: int, hi: int):
        """A topic's distinct (global) x / y codes and its count grid over them; None for an empty topic."""
        if hi <= lo:
            return None
        vx, cx = np.unique(self.xcode[lo:hi], return_inverse=True)
        vy, cy = np.unique(self.ycode[lo:hi], return_inverse=True)
        h = np.zeros((len(vx), len(vy)))
        np.add.at(h, (cx.ravel(), cy.ravel()), 1.0)
        return vx, vy, h

    @staticmethod
    def _signed_cumsum(a: np.ndarray, axis: int) -> np.ndarray:
        """``out[..., k, ...] = sum_l sign(k - l) a[..., l, ...]`` along ``axis`` (in place on a cumulative sum)."""
        c = np.cumsum(a, axis=axis)
        last = np.take(c, [-1], axis=axis)
        c *= 2.0
        c -= a
        c -= last  # (sum below) - (sum above) = 2 cumsum - a - total
        return c

    def _pairs_blocks(self) -> None:
        t_count = self.n_topics
        if t_count * self.kx * self.ky <= _GLOBAL_GRID:  # all topics at once on the global value grid
            h = np.bincount((self.topic * self.kx + self.xcode) * self.ky + self.ycode,
                            minlength=t_count * self.kx * self.ky).reshape(t_count, self.kx, self.ky).astype(float)
            grid = self._signed_cumsum(self._signed_cumsum(h, 1), 2)  # grid[u, a, b] = sum sign(a-c) sign(b-d) h[u,c,d]
            del h
            self.M = self.C @ grid[:, self.cx, self.cy].T
            self.X = self._tie_blocks(self.xcode, self.kx)
            self.Y = self._tie_blocks(self.ycode, self.ky)
            return
        g = np.zeros((self.C.shape[1], t_count))  # g[combo, u] = sum_{j in u} sign(dx) sign(dy)
        for u, loc in enumerate(self._local):
            if loc is None:
                continue
            vx, vy, h = loc
            sx = np.sign(np.arange(2 * len(vx) + 1)[:, None] - (2 * np.arange(len(vx)) + 1)[None, :])
            sy = np.sign(np.arange(2 * len(vy) + 1)[:, None] - (2 * np.arange(len(vy)) + 1)[None, :])
            grid = sx @ h @ sy.T
            g[:, u] = grid[_position_table(vx, self.kx)[self.cx], _position_table(vy, self.ky)[self.cy]]
        self.M = self.C @ g
        self.X = self._tie_blocks(self.xcode, self.kx)
        self.Y = self._tie_blocks(self.ycode, self.ky)

    def _tie_blocks(self, code: np.ndarray, k: int) -> np.ndarray:
        """``[t, u] = #{i in t, j in u : v_i = v_j}`` (``i = j`` included) from per-topic value histograms."""
        hist = np.bincount(self.topic * k + code.ravel(), minlength=self.n_topics * k).reshape(self.n_topics, k)
        hist = hist.astype(float)
        return hist @ hist.T

    def ap_blocks(self, reverse: bool = False, tie_credit: float = 0.5) -> tuple[np.ndarray, np.ndarray]:
        """``(G, H)`` per value combo (``self.combo[i]`` is cell ``i``'s row): ``G[c, u]`` cells of topic ``u``
        strictly above a cell with combo ``c`` in the candidate (the reference with ``reverse``), ``H[c, u]``
        their credit (1 above in the other side, ``tie_credit`` tied)."""
        key = (reverse, float(tie_credit))
        if key not in self._ap_cache:
            self._ap_cache[key] = self._ap_blocks(reverse, float(tie_credit))
        return self._ap_cache[key]

    def _ap_blocks(self, reverse: bool, tie_credit: float) -> tuple[np.ndarray, np.ndarray]:
        g = np.zeros((self.C.shape[1], self.n_topics))
        h = np.zeros((self.C.shape[1], self.n_topics))
        ref, cand = (self.cy, self.cx) if reverse else (self.cx, self.cy)
        kr, kc = (self.ky, self.kx) if reverse else (self.kx, self.ky)
        for u, loc in enumerate(self._local):
            if loc is None:
                continue
            vr, vc, counts = (loc[1], loc[0], loc[2].T) if reverse else loc
            pr = np.arange(2 * len(vr) + 1)[:, None]
            pc = np.arange(2 * len(vc) + 1)[:, None]
            above_c = ((2 * np.arange(len(vc)) + 1)[None, :] > pc).astype(float)  # (2kc+1, kc)
            jr = (2 * np.arange(len(vr)) + 1)[None, :]
            credit_r = (jr > pr) + tie_credit * (jr == pr)  # (2kr+1, kr)
            qr, qc = _position_table(vr, kr)[ref], _position_table(vc, kc)[cand]
            g[:, u] = (above_c @ counts.sum(axis=0))[qc]
            h[:, u] = (credit_r @ counts @ above_c.T)[qr, qc]
        return g, h

    # ----------------------------------------------------------------- statistics
    def tau(self, weights: np.ndarray, variant: str = "b") -> np.ndarray:
        """Pooled tau for each row of ``weights`` (``(B, T)`` topic multiplicities; ones = the observed data)."""
        v = get_variant(variant)
        w = np.atleast_2d(np.asarray(weights, dtype=float))
        if v.kind == "ap":
            if self.kind != "ap":
                raise ValueError("kernel was built for tau-a/b; build it with kind='ap'")
            credit = v.tie_credit
            fwd = self._ap(w, *self.ap_blocks(False, credit))
            return fwd if not v.symmetric else 0.5 * (fwd + self._ap(w, *self.ap_blocks(True, credit)))
        if self.kind != "pairs":
            raise ValueError("kernel was built for tau_AP; build it with kind='pairs'")
        quad = lambda m: np.einsum("bt,tu,bu->b", w, m, w, optimize=True)  # noqa: E731
        n_w = w @ self.n
        n0 = n_w * (n_w - 1) / 2.0
        s = quad(self.M) / 2.0
        if v.name == "a":
            return _div(s, n0)
        n1 = (quad(self.X) - n_w) / 2.0
        n2 = (quad(self.Y) - n_w) / 2.0
        return _div(s, np.sqrt(np.clip(n0 - n1, 0, None) * np.clip(n0 - n2, 0, None)))

    def _ap(self, w: np.ndarray, g: np.ndarray, h: np.ndarray) -> np.ndarray:
        step = max(1, _CHUNK_ELEMENTS // max(g.shape[0], 1))  # bound the (B, K2) temporaries
        if len(w) > step:
            return np.concatenate([self._ap(w[s:s + step], g, h) for s in range(0, len(w), step)])
        p = w @ g.T  # (B, K2) items above a cell of each combo
        c = w @ h.T
        wi = w @ self.C  # (B, K2) weighted number of cells with each combo
        used = (p > 0) & (wi > 0)
        per_item = np.where(used, 2.0 * _div(c, p) - 1.0, 0.0)
        return _div((wi * per_item).sum(axis=1), (wi * used).sum(axis=1))
