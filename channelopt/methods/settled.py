"""Many LP points of a sweep settled at once: `frontend.settle`, with its array work done for all.

Each warm point of a sweep ends with `frontend.settle`: the solver's channel cleaned, re-audited,
its objective recomputed, the dual bound compared with it. At d = 32 that was a fifth of a point
(LDP MAE: about 0.45 of 2.2 ms, the rest HiGHS), some sixty small array operations run between
two HiGHS runs, each finding its code and data out of cache. `settle_points` does the same for a
block of points that share the utility and sizes: the cleaning on one (K, d, m) array, the
distortion summed for all, the trivial bound once; each channel's leakage is still its notions'
own `leakage` on that channel, as `audit` computes it. The instructions are about the same
(valgrind: 909M against 923M for a 100-point LDP MAE sweep at d = 32); the time is not (d = 32
LDP 1.11-1.19x faster a sweep, `sweep.SETTLE_POINTS`). A point that leaves the common case anywhere (non-finite or negative
entries, an output to merge, rows off by round-off, a failed audit to repair, a bound below the
trivial one or not within the gap) is settled alone by `frontend.settle`, so every Result equals
the one `settle` gives, which the tests check entry by entry.
"""

from __future__ import annotations

import numpy as np

from ..audit import judged, leakages
from ..blas import one_thread
from ..utility import Distortion
from .result import NEGATIVE_TOL, NEGLIGIBLE_COLUMN, ROW_TOL, Certificate, Result


def settle_points(problems: list, channels: list, bounds: list, raws: list, solver: str = "HIGHS") -> list:
    """`[frontend.settle(p, q, b, raw, solver, "lp", with_measures=False) for ...]`, computed
    together where the points share their utility and sizes (a sweep's points).

    Parameters
    ----------
    problems : list of Problem
        The points.
    channels : list of ndarray
        Each point's channel as the program gives it (`Program.channel`), before cleaning.
    bounds : list of float or None
        Each point's dual bound (`Program.dual_bound`).
    raws : list of RawSolution
        Each point's solver answer (its status and message, for the points settled alone).
    solver : str, optional
        The solver's name, as in `settle`.

    Returns
    -------
    list of Result
        One per point, in order, each the Result `settle` returns for it.
    """
    from .frontend import settle

    out: list = [None] * len(problems)
    alone = set(range(len(problems)))
    with one_thread():                          # (as `audit`: small products, one BLAS thread)
        _together(problems, channels, bounds, solver, out, alone)
    for i in sorted(alone):
        out[i] = settle(problems[i], channels[i], bounds[i], raws[i], solver, "lp", with_measures=False)
    return out


def _together(problems: list, channels: list, bounds: list, solver: str, out: list, alone: set) -> None:
    """`settle_points`' common case: each group's Results into `out`; the points it does not
    settle stay in (or are added to) `alone`."""
    from .frontend import certified

    for group in _groups(problems, channels, bounds):
        alone -= set(group)
        first = problems[group[0]]
        d, m = first.d, first.m
        Q = np.array([channels[i] for i in group], dtype=float).reshape(len(group), d, m)
        good = _clean(Q)
        u = first.utility
        per_input = u.per_input(first, Q) if type(u) is Distortion else None
        floor = u.floor(first)
        for k, i in enumerate(group):
            p, bound = problems[i], bounds[i]
            if not good[k] or not bound >= floor:
                alone.add(i)
                continue
            q = Q[k].copy()
            report = judged(p, leakages(p, q))
            objective = (float(np.max(u.cost_priors(p) @ per_input[k])) if per_input is not None
                         else u.evaluate(p, q))
            if not report.ok or not certified(objective, bound):
                alone.add(i)
                continue
            out[i] = Result(status="optimal", channel=q, objective=objective, leakage=report.leakage,
                            satisfied=report.satisfied, measures=report.measures,
                            certificate=Certificate("lp-duality", bound, "min", objective - bound, note=""),
                            solver=solver, method="lp", message="")


def _groups(problems: list, channels: list, bounds: list) -> list[list[int]]:
    """The points that can be settled together: a channel and a bound, and the same utility
    object, sizes, input and output values (so the same distortion matrix and trivial bound) and
    prior as the block's first point; the others are settled alone."""
    groups: dict = {}
    for i, (p, q, b) in enumerate(zip(problems, channels, bounds)):
        if q is None or b is None or np.shape(q) != (p.d, p.m):
            continue
        key = (id(p.utility), p.d, p.m, id(p.values), id(p.output_values), id(p.prior))
        groups.setdefault(key, []).append(i)
    return [g for g in groups.values() if len(g) > 1]


def _clean(Q: np.ndarray) -> np.ndarray:
    """`result.clean` on every channel of Q (K, d, m) in place, where it needs no more than the
    common case: entries finite and >= -NEGATIVE_TOL (set >= 0), the outputs under
    NEGLIGIBLE_COLUMN all zero (set to +0), rows within ROW_TOL of 1 (divided by their sums).
    Returns which channels were cleaned so; the others are left to `clean` itself."""
    low, high = Q.min(axis=(1, 2)), Q.max(axis=(1, 2))
    good = np.isfinite(low) & np.isfinite(high) & (low >= -NEGATIVE_TOL)
    np.maximum(Q, 0.0, out=Q)
    top = Q.max(axis=1)                                   # (K, m): each output's largest entry
    tiny = top < NEGLIGIBLE_COLUMN
    # an output to merge into another (entries in (0, NEGLIGIBLE_COLUMN)), or none used: alone
    good &= ~np.any(tiny & (top > 0), axis=1) & ~tiny.all(axis=1)
    Q[np.broadcast_to(tiny[:, None, :], Q.shape)] = 0.0
    sums = Q.sum(axis=2)
    good &= np.abs(sums - 1.0).max(axis=1) <= ROW_TOL
    Q /= sums[:, :, None]
    return good
