"""Why bayes-mse under LIP stops certifying above d = 256: the posterior-space master against a
master over estimates, on the same problems.

    python benchmarks/bench_master.py [--sizes 128,256] [--eps 1] [--limit 120] [--ipm]
                                      [--out benchmarks/results]

Two masters for `max sum_y Pr(y) (h . post_y)^2` over LIP's posterior polytope K (SPEC §4), both
priced by the same exact pricing (`structured._price_mse`: `max_lam sigma_K(2 lam h - mu) - lam^2`
with a valid upper bound), so each round's bound is valid for both:

  vertices   `channelopt.solve`, the column generation of `methods/colgen.py`: a column per vertex
             of K (with its own estimate, the posterior mean), warm primal simplex, Wentges
             smoothing, the pair-merged coarse start above d = 48. Reported: rounds of the last
             stage, its master's simplex iterations per round (median) and time per iteration.
  estimates  a block per estimate lam holding all of K: the joint masses `pi[x, k]` with
             `P lo W_k <= pi[:, k] <= P hi W_k`, `W_k = sum_x pi[x, k]`, gain
             `sum_k (2 lam_k h . pi[:, k] - lam_k^2 W_k)` (the MSE of fixed estimates: a lower
             bound on the Bayes gain, equal to it once the estimates include the optimum's posterior
             means). Starts from 33 estimates evenly spaced; each round adds the estimates `h . v`
             of the priced vertices v. Warm primal simplex (HiGHS), or with --ipm the interior point
             method without crossover, from scratch each round (its duals are central ones).

Dirichlet(1) priors (seed 0), values 0..d-1. Prints a table and writes bench_master.csv. The
estimates master needs 8-15 rounds where the vertices master needs 150-200, but its LP has
(d + 1) columns and d rows per estimate, so each round costs more than the whole column generation.
"""

from __future__ import annotations

import argparse
import csv
import time
from pathlib import Path

import highspy
import numpy as np

import channelopt as co
from channelopt.methods import colgen
from channelopt.methods.structured import MAX_NODES, LIPBox, _price_mse, _Stop


class Estimates:
    """The master over estimates (module docstring), grown one block per estimate."""

    def __init__(self, P: np.ndarray, fam: LIPBox, h: np.ndarray, ipm: bool, window: float = np.inf):
        self.P, self.h, self.d = P, h, P.size
        # --window: a block keeps a column only for the symbols within `window` times the mass
        # a top set holds (`LIPBox.band`), along h, of its estimate
        order = np.argsort(h, kind="stable")
        self.order, self.F = order, np.empty(P.size)
        self.F[order] = np.cumsum(P[order]) - 0.5 * P[order]
        self.span = window * fam.band
        self.a, self.w = P * fam.lo, P * (fam.hi - fam.lo)
        self.R = 1.0 - self.a.sum()
        self.lams: list[float] = []
        hs = highspy.Highs()
        hs.setOptionValue("output_flag", False)
        hs.setOptionValue("primal_feasibility_tolerance", 1e-10)
        hs.setOptionValue("dual_feasibility_tolerance", 1e-10)
        if ipm:
            hs.setOptionValue("solver", "ipm")
            hs.setOptionValue("run_crossover", "off")
            hs.setOptionValue("ipm_optimality_tolerance", 1e-10)
        else:
            hs.setOptionValue("simplex_strategy", 4)
        hs.changeObjectiveSense(highspy.ObjSense.kMaximize)
        hs.addRows(self.d, P, P, 0, np.zeros(0, np.int32), np.zeros(0, np.int32), np.zeros(0))
        self.hs, self.ipm = hs, ipm

    def add(self, lams: np.ndarray) -> int:
        """Add a block per new estimate; returns how many were new."""
        d, hs = self.d, self.hs
        new = [float(x) for x in np.unique(np.round(lams, 12)) if float(x) not in self.lams]
        for lam in new:
            at = self.F[self.order][min(int(np.searchsorted(self.h[self.order], lam)), d - 1)]
            U = np.flatnonzero(np.abs(self.F - at) <= self.span)
            n, two = U.size, (2 * np.arange(U.size)).astype(np.int32)
            r2, c0 = hs.getNumRow(), hs.getNumCol()
            hs.addRows(1, np.zeros(1), np.zeros(1), 0, np.zeros(0, np.int32), np.zeros(0, np.int32), np.zeros(0))
            # W_k: a in the prior rows, -(1 - sum a) in the block's mass row
            hs.addCols(1, np.array([2 * lam * (self.h @ self.a) - lam * lam]), np.zeros(1), np.array([np.inf]),
                       d + 1, np.zeros(1, np.int32), np.r_[np.arange(d), r2].astype(np.int32), np.r_[self.a, -self.R])
            # pi - a W_k >= 0 per symbol of U: 1 in its prior row and in the block's mass row
            idx = np.column_stack([U, np.full(n, r2)]).ravel().astype(np.int32)
            hs.addCols(n, 2 * lam * self.h[U], np.zeros(n), np.full(n, np.inf), 2 * n, two, idx, np.ones(2 * n))
            # and at most w W_k
            idx = np.column_stack([c0 + 1 + np.arange(n), np.full(n, c0)]).ravel().astype(np.int32)
            hs.addRows(n, np.full(n, -np.inf), np.zeros(n), 2 * n, two, idx,
                       np.column_stack([np.ones(n), -self.w[U]]).ravel())
            self.lams.append(lam)
        return len(new)

    def solve(self) -> tuple[float, np.ndarray]:
        if self.ipm:
            self.hs.clearSolver()
        self.hs.run()
        return self.hs.getInfo().objective_function_value, np.asarray(self.hs.getSolution().row_dual)[:self.d]


def run_estimates(P, fam, h, limit: float, ipm: bool, window: float = np.inf) -> dict:
    t0 = time.perf_counter()
    m = Estimates(P, fam, h, ipm, window)
    ext = fam.initial(h) @ h
    m.add(np.linspace(ext.min(), ext.max(), 33))
    bound, rounds, value = np.inf, 0, -np.inf
    while True:
        rounds += 1
        value, mu = m.solve()
        priced = _price_mse(fam, h, mu, _Stop(None, 1.0, np.inf, MAX_NODES))
        bound = min(bound, float(mu @ P) + max(priced.upper, 0.0))
        gap = colgen._natural_gap("bayes-mse", value, bound, P)    # relative to the MSE (loop units: 1 - gain)
        added = m.add(priced.columns @ h) if len(priced.columns) else 0
        if gap <= colgen.GAP_TOL or not added or time.perf_counter() - t0 > limit:
            break
    return {"time_s": time.perf_counter() - t0, "rounds": rounds, "gap": gap, "estimates": len(m.lams),
            "lp_rows": m.hs.getNumRow(), "lp_cols": m.hs.getNumCol()}


def run_vertices(problem, limit: float) -> dict:
    """`channelopt.solve`, with each master solve's simplex iterations recorded."""
    stats: list[tuple[int, int, float]] = []
    solve = colgen.Master.solve

    def recorded(self, deadline=np.inf):
        t = time.perf_counter()
        out = solve(self, deadline)
        stats.append((self.P.size, self.h.getInfo().simplex_iteration_count, time.perf_counter() - t))
        return out

    colgen.Master.solve = recorded
    try:
        t0 = time.perf_counter()
        r = co.solve(problem, time_limit=limit, progress=False)
        elapsed = time.perf_counter() - t0
    finally:
        colgen.Master.solve = solve
    last = [s for s in stats if s[0] == problem.d]
    iters = np.array([s[1] for s in last], float)
    secs = np.array([s[2] for s in last])
    return {"time_s": elapsed, "rounds": len(last), "gap": r.certificate.gap / abs(r.objective),
            "iters_per_round": float(np.median(iters)) if len(iters) else np.nan,
            "ms_per_iter": 1e3 * secs.sum() / max(iters.sum(), 1.0), "status": r.status}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="128,256")
    ap.add_argument("--eps", default="1")
    ap.add_argument("--limit", type=float, default=120.0)
    ap.add_argument("--ipm", action="store_true", help="also the estimates master by interior point")
    ap.add_argument("--window", type=float, default=None,
                    help="also the estimates master with each block cut to this many times c along h")
    ap.add_argument("--out", default=str(Path(__file__).parent / "results"))
    args = ap.parse_args(argv)
    rows = []
    print(f"{'d':>5} {'eps':>4} {'master':<16} {'seconds':>8} {'rounds':>6} {'gap':>8}  detail")
    for d in (int(x) for x in args.sizes.split(",")):
        for eps in (float(x) for x in args.eps.split(",")):
            P = np.random.default_rng([d, 0, int(eps * 100), 0]).dirichlet(np.ones(d))
            problem = co.Problem(prior=P, privacy=[co.LIP(eps)], utility=co.Bayes("bayes-mse"))
            h = colgen.scaled_utility(problem).h
            fam = LIPBox(P, eps)
            cells = [("vertices", run_vertices, (problem, args.limit)),
                     ("estimates", run_estimates, (P, fam, h, args.limit, False))]
            if args.ipm:
                cells.append(("estimates (IPM)", run_estimates, (P, fam, h, args.limit, True)))
            if args.window is not None:
                cells.append((f"estimates (x{args.window:g})", run_estimates, (P, fam, h, args.limit, False, args.window)))
            for name, fn, fn_args in cells:
                row = {"d": d, "eps": eps, "master": name, **fn(*fn_args)}
                rows.append(row)
                detail = (f"{row['iters_per_round']:.0f} simplex iterations a round, {row['ms_per_iter']:.3f} ms each"
                          if name == "vertices" else
                          f"{row['estimates']} estimates, LP {row['lp_rows']} x {row['lp_cols']}")
                print(f"{d:>5} {eps:>4g} {name:<16} {row['time_s']:>8.2f} {row['rounds']:>6} {row['gap']:>8.1e}  {detail}",
                      flush=True)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    keys = sorted({k for r in rows for k in r}, key=lambda k: list(rows[0]).index(k) if k in rows[0] else 99)
    with open(out / "bench_master.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=keys)
        w.writeheader()
        w.writerows(rows)
    print(f"wrote {out / 'bench_master.csv'}")


if __name__ == "__main__":
    main()
