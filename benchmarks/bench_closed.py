"""Closed forms first: the certified closed-form path against writing the channel down and against the LP.

    python benchmarks/bench_closed.py [--sizes 32,64,128,256,512,1024] [--lp-max 256] [--reps 7]
        [--out benchmarks/results]

Hamming distortion. LDP at eps = 1 with a Dirichlet(1) prior (subset randomized response, KSR);
LIP with a near-uniform prior (Dirichlet(50)) at eps = ln(2d), where RR-LIP is feasible (it needs
every P_m >= 1/(e^eps + 1), so at least eps ~ ln(d - 1)). For each d, medians of
`--reps` runs in one process of: writing the channel down (`closed_forms.subset_rr` /
`closed_forms.rr_lip` alone), `channelopt.solve` (closed form + certificate + exact audit; the
budget-free measures are computed when first read), the same with its measures read, and
`channelopt.solve(..., solver="HIGHS")` (the LP, up to `--lp-max`). Then a 100-point eps sweep
at d = 64 both ways. Prints the table with the ratios and writes bench_closed.csv.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

import channelopt as co
from channelopt import bench
from channelopt.closed_forms import rr_lip, subset_rr


def median_time(fn, reps: int) -> float:
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return float(np.median(times))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="32,64,128,256,512,1024")
    ap.add_argument("--lp-max", type=int, default=128, help="largest d solved by the LP as the baseline")
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--out", default=str(Path(__file__).parent / "results"))
    args = ap.parse_args(argv)
    rows = []
    head = (f"{'notion':<5} {'d':>5} | {'write ms':>9} {'solve ms':>9} {'x write':>8} {'+measures':>9} | {'LP ms':>9} "
            f"{'LP / solve':>10} | {'|dobj|':>8}  path")
    print(head)
    print("-" * len(head))
    for d in [int(s) for s in args.sizes.split(",")]:
        rng = np.random.default_rng(d)
        e_lip = float(np.log(2 * d))
        for name, notion, P, write in (("ldp", co.LDP(1.0), rng.dirichlet(np.ones(d)), lambda P, e=1.0: subset_rr(P, e)),
                                       ("lip", co.LIP(e_lip), rng.dirichlet(np.full(d, 50.0)), lambda P, e=e_lip: rr_lip(P, e))):
            p = co.Problem(prior=P, privacy=[notion], utility=co.Distortion("hamming"))
            r = co.solve(p)
            t_write = median_time(lambda w=write, P=P: w(P), args.reps)
            t_solve = median_time(lambda p=p: co.solve(p), args.reps)
            t_meas = median_time(lambda p=p: dict(co.solve(p).measures), args.reps)
            t_lp, diff = np.nan, np.nan
            if d <= args.lp_max:
                lp = co.solve(p, solver="HIGHS")
                t_lp = median_time(lambda p=p: co.solve(p, solver="HIGHS"), max(1, args.reps // 3))
                diff = abs(lp.objective - r.objective)
            row = {"notion": name, "d": d, "write_ms": 1e3 * t_write, "solve_ms": 1e3 * t_solve,
                   "solve_over_write": t_solve / t_write, "solve_measures_ms": 1e3 * t_meas, "lp_ms": 1e3 * t_lp, "lp_over_solve": t_lp / t_solve,
                   "abs_dobj": diff, "path": f"{r.method}:{r.solver}", "status": r.status}
            rows.append(row)
            print(f"{name:<5} {d:>5} | {row['write_ms']:9.3f} {row['solve_ms']:9.3f} {row['solve_over_write']:8.1f} "
                  f"{row['solve_measures_ms']:9.3f} | "
                  f"{row['lp_ms']:9.1f} {row['lp_over_solve']:10.0f} | {diff:8.1e}  {row['path']} ({r.status})", flush=True)
    eps = np.linspace(0.1, 4.0, 100)
    P = np.random.default_rng(7).dirichlet(np.ones(64))
    p = co.Problem(prior=P, privacy=[co.LDP(1.0)], utility=co.Distortion("hamming"))
    t = time.perf_counter()
    closed = co.sweep(p, epsilon=eps)
    t_closed = time.perf_counter() - t
    t = time.perf_counter()
    fresh = [co.solve(co.Problem(prior=P, privacy=[co.LDP(float(e))], utility=co.Distortion("hamming")),
                      closed_forms=False) for e in eps]
    t_fresh = time.perf_counter() - t
    worst = max(abs(a.objective - b.objective) for a, b in zip(closed, fresh))
    print(f"\n100-point eps sweep, LDP Hamming, d = 64: {t_closed:.3f} s by closed forms, {t_fresh:.2f} s by fresh LPs "
          f"({t_fresh / t_closed:.0f}x); largest objective difference {worst:.1e}")
    rows.append({"notion": "ldp-sweep-100", "d": 64, "write_ms": np.nan, "solve_ms": 1e3 * t_closed,
                 "solve_over_write": np.nan, "solve_measures_ms": np.nan, "lp_ms": 1e3 * t_fresh, "lp_over_solve": t_fresh / t_closed,
                 "abs_dobj": worst, "path": "sweep", "status": ""})
    out = bench.write_table(rows, Path(args.out) / "bench_closed.csv")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
