"""Distortion solves under a time limit: the channel and the bound that come back, against the
optimum solved without a limit in the same process.

    python benchmarks/bench_limit_distortion.py [--d 512] [--limits 1,3,10] [--notions lip,ldp,minid]
        [--utilities mae,squared] [--out benchmarks/results]

One Dirichlet(1) prior (seed 0), eps = 1 (MinID-LDP: budgets 1 and 2 on the two halves of the
inputs). For each limit the table gives the wall time, the status, the objective over the
optimum (`obj/opt`, 1 is optimal), the bound over the optimum (`bound/opt`, at most 1 for a
valid bound; empty where none came back) and where the bound came from. Writes
bench_limit_distortion.csv.
"""

from __future__ import annotations

import argparse
import csv
import time
from pathlib import Path

import numpy as np

import channelopt as co


def problem(notion: str, utility: str, d: int) -> co.Problem:
    P = np.random.default_rng(0).dirichlet(np.ones(d))
    if notion == "minid":
        n = co.IDLDP(epsilons=np.where(np.arange(d) < d // 2, 1.0, 2.0))
    else:
        n = co.LIP(1.0) if notion == "lip" else co.LDP(1.0)
    return co.Problem(prior=P, privacy=[n], utility=co.Distortion(utility))


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--d", type=int, default=512)
    ap.add_argument("--limits", default="1,3,10")
    ap.add_argument("--notions", default="lip,ldp,minid")
    ap.add_argument("--utilities", default="mae,squared")
    ap.add_argument("--out", default=str(Path(__file__).parent / "results"))
    args = ap.parse_args(argv)
    rows = []
    head = (f"{'notion':<6} {'utility':<8} {'d':>5} {'limit':>6} | {'time_s':>7} {'status':<8} {'obj/opt':>10} "
            f"{'bound/opt':>10} | bound from")
    print(head)
    print("-" * len(head))
    for notion in args.notions.split(","):
        for utility in args.utilities.split(","):
            p = problem(notion, utility, args.d)
            t = time.perf_counter()
            best = co.solve(p)
            print(f"{notion:<6} {utility:<8} {args.d:>5} {'none':>6} | {time.perf_counter() - t:7.2f} {best.status:<8} "
                  f"{1.0:10.6f} {best.certificate.bound / best.objective:10.6f} | {best.certificate.method}", flush=True)
            for limit in (float(x) for x in args.limits.split(",")):
                t = time.perf_counter()
                r = co.solve(p, time_limit=limit)
                t = time.perf_counter() - t
                c = r.certificate
                bound = c.bound if c is not None and c.bound is not None else float("nan")
                row = {"notion": notion, "utility": utility, "d": args.d, "limit_s": limit, "time_s": t,
                       "status": r.status, "objective": r.objective, "optimum": best.objective, "bound": bound,
                       "bound_from": "" if c is None else c.method, "method": r.method}
                rows.append(row)
                print(f"{notion:<6} {utility:<8} {args.d:>5} {limit:6.1f} | {t:7.2f} {r.status:<8} "
                      f"{r.objective / best.objective:10.6f} {bound / best.objective:10.6f} | "
                      f"{row['bound_from'] or 'none'} ({r.method})", flush=True)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "bench_limit_distortion.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)


if __name__ == "__main__":
    main()
