"""Distortions other than Hamming (MAE, squared error) on a few outputs: `channelopt.solve` (the
reduced LP of `methods.top_outputs`, certified on the whole problem) against the whole LP
(`closed_forms=False`), in the same process.

    python benchmarks/bench_outputs.py [--sizes 64,128,256,512] [--lp-max 256] [--eps 0.5,1,2,3]
                                       [--notions lip,ldp,minid] [--utilities mae,squared] [--out benchmarks/results]

Dirichlet(1) priors (seeded by d), values 0..d-1 (`bench_sweep.problem`); MinID-LDP with the benchmark's per-input
budgets (`bench.instance`) times eps. For each cell: the path taken (top-outputs or lp), its
rounds and the outputs its channel uses, the seconds of each, their ratio, the objective
difference and the certified gap. The whole LP runs up to `--lp-max`. Prints the table and writes
bench_outputs.csv.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import channelopt as co
from bench_sweep import problem        # (the sweep benchmark's instances, any utility)
from channelopt import bench


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="64,128,256,512")
    ap.add_argument("--lp-max", type=int, default=256)
    ap.add_argument("--eps", default="0.5,1,2,3")
    ap.add_argument("--notions", default="lip,ldp,minid")
    ap.add_argument("--utilities", default="mae,squared")
    ap.add_argument("--out", default=str(Path(__file__).parent / "results"))
    args = ap.parse_args(argv)
    head = (f"{'utility':<8} {'notion':<6} {'d':>4} {'eps':>4} | {'path':<11} {'rounds':>6} {'used':>4} | "
            f"{'solve s':>8} {'LP s':>8} {'LP/solve':>8} | {'|dobj|':>8} {'gap':>8}")
    print(head)
    print("-" * len(head))
    rows = []
    for utility in args.utilities.split(","):
        for notion in args.notions.split(","):
            for d in (int(t) for t in args.sizes.split(",")):
                for eps in (float(t) for t in args.eps.split(",")):
                    p = problem(notion, d, eps, utility)
                    t = time.perf_counter()
                    r = co.solve(p)
                    t_solve = time.perf_counter() - t
                    t_lp, dobj = float("nan"), float("nan")
                    if d <= args.lp_max:
                        t = time.perf_counter()
                        ref = co.solve(p, closed_forms=False)
                        t_lp = time.perf_counter() - t
                        dobj = abs(r.objective - ref.objective)
                    c = r.certificate
                    top = r.method == "top-outputs"
                    row = {"utility": utility, "notion": notion, "d": d, "eps": eps, "path": r.method, "status": r.status,
                           "rounds": c["rounds"] if top else "", "outputs": c["outputs"] if top else "",
                           "solve_s": t_solve, "lp_s": t_lp, "abs_dobj": dobj, "gap": c.gap if c else float("nan")}
                    rows.append(row)
                    print(f"{utility:<8} {notion:<6} {d:>4} {eps:>4} | {r.method:<11} {row['rounds']!s:>6} "
                          f"{row['outputs']!s:>4} | {t_solve:8.3f} {t_lp:8.3f} {t_lp / t_solve:8.1f} | "
                          f"{dobj:8.1e} {row['gap']:8.1e}", flush=True)
    path = bench.write_table(rows, Path(args.out) / "bench_outputs.csv")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
