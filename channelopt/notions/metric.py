"""eps d-privacy (metric LDP): the budget between two inputs grows with their distance.

    q[x, y] <= e^{eps d(x, x')} q[x', y]   for all inputs x, x' and outputs y

(Chatzikokolakis et al., "Broadening the scope of differential privacy using metrics", PETS 2013;
geo-indistinguishability is d the Euclidean distance between locations). With d(x, x') = 1 for
every pair it is eps-LDP.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import shortest_path

from ..errors import ProblemError
from ..problem import MAX_EPSILON, as_matrix
from .base import Notion, ratio_rows

MAX_DISTANCE_D = 1000
"""Largest alphabet for metric-ldp: the d x d metric is formed and reduced in O(d^3) operations."""


@dataclass(frozen=True)
class MetricLDP(Notion):
    """eps d-privacy; leakage is the smallest eps with which q satisfies it,
    max over x != x' and y of log(q[x, y] / q[x', y]) / d(x, x') (computed over every pair).

    The metric is one of (at most one key; none means the problem's values):
      (none)                 d(x, x') = |values[x] - values[x']| (distinct values required);
      distance = [[...]]     a d x d matrix, finite and > 0 off the diagonal, 0 on it;
      graph = [[i, j, w]]    shortest paths of an undirected graph with edge lengths w > 0 (inputs
                             in different components are not constrained against each other);
      grid = [rows, cols]    the rows x cols grid graph, input x at (x // cols, x % cols), unit
                             steps between 4-neighbours: d is the Manhattan distance.

    Constraints: pair (x, x') is implied by (x, z) and (z, x') whenever
    d(x, z) + d(z, x') <= d(x, x'), by chaining the two ratios; since every distance is > 0 the
    chains end, so only the pairs with no such z are written (`pairs`). For a graph metric these
    are among the graph's own edges: O(edges) rows per output instead of d (d - 1). (The test
    `d(x,z) + d(z,x') <= d(x,x')` is in floating point: a pair dropped on a rounding tie is implied
    up to a factor e^{eps d 1e-16}.)
    """

    epsilon: float
    distance: Any = None
    graph: Any = None
    grid: Any = None
    name: ClassVar[str] = "metric-ldp"
    keys: ClassVar[tuple[str, ...]] = ("epsilon", "distance", "graph", "grid")

    def __post_init__(self):
        super().__post_init__()
        given = [k for k in ("distance", "graph", "grid") if getattr(self, k) is not None]
        if len(given) > 1:
            raise ProblemError(f"give at most one of distance, graph, grid; got {', '.join(given)}")

    @classmethod
    def example(cls, d, epsilon, rng, latent_k=None):
        """Geo-indistinguishability for d random locations in the unit square."""
        pts = rng.random((d, 2))
        D = np.sqrt(((pts[:, None, :] - pts[None, :, :]) ** 2).sum(axis=2))
        return {"notion": cls.name, "epsilon": epsilon, "distance": D.tolist()}

    def validate(self, problem, key):
        D = self.distances(problem, key)
        finite = D[np.isfinite(D)]
        if finite.size and self.epsilon * finite.max() <= MAX_EPSILON:
            return                      # no pair at all can reach the limit: no need to reduce
        dist = self.pairs(problem, key)[2]
        if dist.size and self.epsilon * dist.max() > MAX_EPSILON:
            raise ProblemError(f"{key}: epsilon * distance reaches {float(self.epsilon * dist.max()):.6g} on a "
                               f"constrained pair; at most {MAX_EPSILON:g} (e^(eps d) must be a finite double)")

    def distances(self, problem, key: str = "metric-ldp") -> np.ndarray:
        """The d x d metric (0 on the diagonal, > 0 elsewhere; inf between graph components)."""
        d = problem.d
        if d > MAX_DISTANCE_D:
            raise ProblemError(f"{key}: metric-ldp supported up to {MAX_DISTANCE_D} inputs, got {d}")
        if self.grid is not None:
            return shortest_path(self._grid_graph(d, key), directed=False)
        if self.graph is not None:
            return shortest_path(self._graph(d, key), directed=False)
        if self.distance is not None:
            D = as_matrix(f"{key}.distance", self.distance)
            if D.shape != (d, d):
                raise ProblemError(f"{key}.distance must be {d} x {d} (one row and column per input), "
                                   f"got shape {D.shape}")
            off = ~np.eye(d, dtype=bool)
            if np.any(np.diag(D) != 0):
                raise ProblemError(f"{key}.distance must be 0 on the diagonal")
            if np.any(~(D[off] > 0)):
                x, y = np.argwhere(off & ~(D > 0))[0]
                raise ProblemError(f"{key}.distance[{x}][{y}] must be > 0 (distinct inputs), got {float(D[x, y])!r}")
            return D
        v = problem.values
        D = np.abs(v[:, None] - v[None, :])
        if np.any(D[~np.eye(d, dtype=bool)] == 0):
            raise ProblemError(f"{key}: the metric |values[x] - values[x']| needs distinct input values "
                               "(or give distance, graph or grid)")
        return D

    def _graph(self, d: int, key: str) -> sp.csr_matrix:
        try:
            E = np.array(self.graph, dtype=float)
            ok = E.ndim == 2 and E.shape[1] == 3 and E.shape[0] > 0
        except (TypeError, ValueError):
            ok = False
        if not ok:
            raise ProblemError(f"{key}.graph must be a non-empty list of [i, j, length] edges")
        i, j, w = E[:, 0], E[:, 1], E[:, 2]
        bad = (i != np.round(i)) | (j != np.round(j)) | (i < 0) | (j < 0) | (i >= d) | (j >= d) | (i == j)
        if bad.any():
            raise ProblemError(f"{key}.graph edge {E[bad][0].tolist()} must join two different inputs in 0..{d - 1}")
        if np.any(~np.isfinite(w) | (w <= 0)):
            raise ProblemError(f"{key}.graph edge {E[~np.isfinite(w) | (w <= 0)][0].tolist()} must have a "
                               "finite length > 0")
        return sp.csr_matrix((w, (i.astype(int), j.astype(int))), shape=(d, d))

    def _grid_graph(self, d: int, key: str) -> sp.csr_matrix:
        g = self.grid
        if (not isinstance(g, (list, tuple)) or len(g) != 2
                or not all(isinstance(k, int) and not isinstance(k, bool) and k > 0 for k in g)):
            raise ProblemError(f"{key}.grid must be [rows, cols] (positive integers), got {g!r}")
        rows, cols = g
        if rows * cols != d:
            raise ProblemError(f"{key}.grid {rows} x {cols} has {rows * cols} cells, but the input has {d} symbols")
        x = np.arange(d)
        right = x[(x % cols) < cols - 1]
        down = x[x < d - cols]
        i = np.concatenate([right, down])
        j = np.concatenate([right + 1, down + cols])
        return sp.csr_matrix((np.ones(i.size), (i, j)), shape=(d, d))

    def pairs(self, problem, key: str = "metric-ldp") -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(i, j, d(i, j)) of the ordered pairs whose constraints are written: those not implied by
        a chain through a third input (see the class docstring)."""
        D = self.distances(problem, key)
        d = D.shape[0]
        if self.grid is not None or self.graph is not None:
            A = self._grid_graph(d, key) if self.grid is not None else self._graph(d, key)
            A = (A + A.T).tocoo()
            cand = np.unique(np.stack([A.row, A.col], axis=1), axis=0)
            i, j = cand[:, 0], cand[:, 1]
        else:
            i, j = np.nonzero(~np.eye(d, dtype=bool) & np.isfinite(D))
        keep = np.ones(i.size, dtype=bool)
        for s in range(0, i.size, 4096):   # implied through some z: D[i,z] + D[z,j] <= D[i,j]
            a, b = i[s:s + 4096], j[s:s + 4096]
            via = D[a, :] + D[:, b].T
            via[np.arange(a.size), a] = np.inf
            via[np.arange(a.size), b] = np.inf
            keep[s:s + 4096] = ~(via.min(axis=1) <= D[a, b])
        return i[keep], j[keep], D[i[keep], j[keep]]

    def column_rows(self, problem):
        i, j, dist = self.pairs(problem)
        return ratio_rows(problem.d, i, j, 1.0, np.exp(self.epsilon * dist))

    def leakage(self, problem, q):
        D = self.distances(problem)
        d = D.shape[0]
        with np.errstate(divide="ignore", invalid="ignore"):
            logq = np.log(q)
        worst, step = 0.0, max(1, 2 ** 22 // (d * q.shape[1]))
        for s in range(0, d, step):
            rows = slice(s, s + step)
            with np.errstate(invalid="ignore"):
                diff = logq[rows, None, :] - logq[None, :, :]          # log q[x, y] - log q[x', y]
            diff = np.where((q[rows, None, :] == 0), -np.inf, diff)     # q[x, y] = 0: no leak
            top = diff.max(axis=2)
            Dr = D[rows]
            ok = np.isfinite(Dr) & (Dr > 0)
            ratio = np.where(ok & (top > 0), top / np.where(ok, Dr, 1.0), 0.0)
            worst = max(worst, float(ratio.max(initial=0.0)))
        return worst

    def to_table(self):
        out = {"notion": self.name, "epsilon": self.epsilon}
        for k in ("distance", "graph", "grid"):
            v = getattr(self, k)
            if v is not None:
                out[k] = np.asarray(v).tolist()
        return out
