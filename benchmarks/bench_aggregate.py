"""bayes-mse under LIP: the optimal channel is cheap, its certificate is not. Symbols merged where
the optimum cannot tell them apart reach the optimum's value; its dual still has to be found at
full d.

    python benchmarks/bench_aggregate.py [--sizes 256,512] [--eps 1] [--limit 60]
                                         [--out benchmarks/results]

For `max sum_y Pr(y) (h . post_y)^2` over LIP's posterior polytope (SPEC §4), on Dirichlet(1)
priors (bench_posterior's first seed), values 0..d-1:

  colgen      `methods/colgen.column_generation`, what `channelopt.solve` runs: value and gap at
              the time limit.
  aggregated  1. the problem with symbols merged by 4 along h, solved to 1e-7 (pair-merged
              coarse start, as `solve`); 2. every group within one group of a place where a
              column it uses changes along h, or where one is fractional, split back into its
              symbols, the runs of groups between them merged into one symbol each; 3. that
              problem solved from the first one's columns. A channel of a merged problem, applied
              to every symbol of a group, is a channel of the full one with the same leakage and
              MSE, so its value is a valid value of the full problem (a lower bound on its optimum).
  dual        the aggregated problem's duals (posterior coordinates) made full-d and priced
              exactly at full d (`structured._price_mse`), which gives a valid bound whatever the
              point: `copy` gives each symbol its group's dual; `tilt` adds, on a merged run,
              `2 s (h_x - h_run)` (zero P-weighted mean, so the merged columns price the same),
              s the mean estimate of the used columns at their upper bound on the run, which makes
              `2 s h_x - mu_x` flat there as it is on a single symbol.
  seeded      the full column generation started from the aggregated problem's columns (expanded)
              and its `tilt` duals as the first dual point (`_generate(start=...)`).

Prints a table (times in seconds, gaps relative to the MSE) and writes bench_aggregate.csv.
"""

from __future__ import annotations

import argparse
import time
from functools import partial
from pathlib import Path

import numpy as np

import channelopt as co
from channelopt import bench
from channelopt.methods import colgen
from channelopt.methods.structured import LIPBox

MERGE = colgen.MERGE
"""Symbols merged by MERGE along h in the first problem (`colgen.refine` then splits groups back)."""


def problem(d: int, eps: float):
    rng = np.random.default_rng([d, 0, int(eps * 100), 0])      # bench_posterior's first Dirichlet seed
    P = rng.dirichlet(np.ones(d))
    return co.Problem(prior=P, privacy=[co.LIP(eps)], utility=co.Bayes("bayes-mse"))


def duals(P, h, eps, group, Pg, hg, master, w) -> dict:
    """The aggregated duals made full-d: {"copy": ..., "tilt": ...} (docstring)."""
    mu = master.mu_best[group]
    used = w > 1e-14
    U, est, wu = master.V[used] / Pg, master.V[used] @ hg, w[used]
    top = U > np.exp(eps) * (1 - 1e-9)
    s = np.where(top.any(axis=0), (top * (wu * est)[:, None]).sum(axis=0)
                 / np.maximum((top * wu[:, None]).sum(axis=0), 1e-300), 0.0)
    run = np.bincount(group)[group] > 1
    return {"copy": mu, "tilt": mu + np.where(run, 2 * s[group] * (h - hg[group]), 0.0)}


def run(d: int, eps: float, limit: float) -> dict:
    p = problem(d, eps)
    P, sc = p.prior, colgen.scaled_utility(p)
    h, fam = sc.h, LIPBox(p.prior, eps)
    relative = partial(colgen._natural_gap, "bayes-mse", P=P)      # (value, bound) -> gap relative to the MSE
    row: dict = {"d": d, "eps": eps}

    t = time.perf_counter()
    sol = colgen.column_generation(p, fam, time_limit=limit)
    value = float(((sol.V @ h) ** 2) @ sol.w)                 # in the loop's units, as the rest
    bound = (sol.bound - sc.shift) / sc.factor
    row.update(colgen_s=time.perf_counter() - t, colgen_value=value, colgen_gap=relative(value, bound))

    t = time.perf_counter()
    deadline = t + limit
    group = colgen.along(h, MERGE)
    Pg, _, m, wv, _, _, _ = colgen.solve_merged(P, fam, h, group, deadline, 1e-7)
    group, cols, split = colgen.refine(P, fam, h, group, Pg, m.V[wv > 1e-14])
    Pg, hg, m, wv, v2, b2, _ = colgen.solve_merged(P, fam, h, group, deadline, colgen.GAP_TOL, (cols, None, None))
    row.update(aggregated_s=time.perf_counter() - t, groups=Pg.size, split=split, aggregated_value=v2,
               aggregated_gap=relative(v2, b2), value_over_colgen=v2 - value)
    for name, mu in duals(P, h, eps, group, Pg, hg, m, wv).items():
        priced = fam.price("bayes-mse", mu, h)
        row[f"{name}_gap"] = relative(v2, float(mu @ P + priced.upper))
        if name == "tilt":
            used = wv > 1e-14
            start = (np.vstack([P[None, :] * (m.V[used] / Pg)[:, group], priced.columns]), mu, wv[used])
            t2 = time.perf_counter()
            _, _, v3, b3, info3 = colgen._generate(P, fam, sc, t2 + limit, None, colgen.MAX_ROUNDS, colgen.GAP_TOL, start)
            row.update(seeded_s=time.perf_counter() - t2, seeded_rounds=info3["rounds"],
                       seeded_gap=relative(v3, b3))
    return row


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="256,512")
    ap.add_argument("--eps", default="1")
    ap.add_argument("--limit", type=float, default=60.0)
    ap.add_argument("--out", default=str(Path(__file__).parent / "results"))
    args = ap.parse_args(argv)
    head = (f"{'d':>5} {'eps':>4} | {'colgen s':>8} {'gap':>8} | {'aggr s':>6} {'groups':>6} {'gap':>8} "
            f"{'value - colgen':>14} | {'copy gap':>8} {'tilt gap':>8} | {'seeded s':>8} {'rounds':>6} {'gap':>8}")
    print(head)
    print("-" * len(head))
    rows = []
    for d in (int(x) for x in args.sizes.split(",")):
        for eps in (float(x) for x in args.eps.split(",")):
            r = run(d, eps, args.limit)
            rows.append(r)
            print(f"{d:>5} {eps:>4g} | {r['colgen_s']:8.1f} {r['colgen_gap']:8.1e} | {r['aggregated_s']:6.1f} "
                  f"{r['groups']:>6} {r['aggregated_gap']:8.1e} {r['value_over_colgen']:14.2e} | "
                  f"{r['copy_gap']:8.1e} {r['tilt_gap']:8.1e} | {r['seeded_s']:8.1f} {r['seeded_rounds']:>6} "
                  f"{r['seeded_gap']:8.1e}", flush=True)
    print(f"wrote {bench.write_table(rows, Path(args.out) / 'bench_aggregate.csv')}")


if __name__ == "__main__":
    main()
