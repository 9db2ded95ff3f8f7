"""Hamming distortion at d = 512 and 1024: time and peak memory of each stage of the LP path, and of
the certified closed form where one applies.

    python benchmarks/bench_large.py [--sizes 512,1024] [--eps 1] [--limit 600] [--out benchmarks/results]

LDP and LIP at eps = 1 (`--eps`: a number, or ln2d for ln(2d), where the LIP optimum uses almost
every output) with a Dirichlet(1) prior (seed d). For LDP the default path takes the
certified subset randomized response; `solve(..., solver="HIGHS")` forces the LP. For LIP, RR-LIP
is infeasible for such priors, so the default path is the LP itself. Stages: `build` (the sparse
program), `HiGHS` (the solve, time-limited), and the whole `solve` (build, HiGHS, clean,
re-audit). Peak memory is the growth of the resident set over the stage, sampled every ms, with
the size of the constraint matrix for reference. Prints a table and writes bench_large.csv.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp

import channelopt as co
from channelopt import bench
from channelopt.bench import PeakMemory
from channelopt.methods.lp import build, solve_highs


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="512,1024")
    ap.add_argument("--eps", default="1", help="the budget: a number, or ln2d for ln(2d)")
    ap.add_argument("--limit", type=float, default=600.0, help="time limit of each LP solve (s)")
    ap.add_argument("--out", default=str(Path(__file__).parent / "results"))
    args = ap.parse_args(argv)
    rows = []
    head = f"{'notion':<6} {'d':>5} {'stage':<22} | {'time_s':>8} {'peak_MB':>8} | {'matrix_MB':>9}  status"
    print(head)
    print("-" * len(head))

    def record(notion, d, stage, t, mem, matrix_mb, status):
        rows.append({"notion": notion, "d": d, "stage": stage, "time_s": t, "peak_mb": mem, "matrix_mb": matrix_mb,
                     "status": status})
        print(f"{notion:<6} {d:>5} {stage:<22} | {t:8.2f} {mem:8.0f} | {matrix_mb:9.1f}  {status}", flush=True)

    for d in (int(s) for s in args.sizes.split(",")):
        P = np.random.default_rng(d).dirichlet(np.ones(d))
        eps = float(np.log(2 * d)) if args.eps == "ln2d" else float(args.eps)
        for name, notion in (("ldp", co.LDP(eps)), ("lip", co.LIP(eps))):
            p = co.Problem(prior=P, privacy=[notion], utility=co.Distortion("hamming"))
            with PeakMemory() as mem:
                t = time.perf_counter()
                r = co.solve(p, time_limit=args.limit)
                dt = time.perf_counter() - t
            record(name, d, f"solve (default: {r.method})", dt, mem.peak_mb, np.nan, r.status)
            with PeakMemory() as mem:
                t = time.perf_counter()
                prog = build(p)
                dt = time.perf_counter() - t
            A = sp.vstack([prog.A_ub, prog.A_eq]).tocsc()
            matrix_mb = (A.data.nbytes + A.indices.nbytes + A.indptr.nbytes) / 2 ** 20
            record(name, d, "build", dt, mem.peak_mb, matrix_mb, f"{A.shape[0]} rows x {A.shape[1]} cols")
            with PeakMemory() as mem:
                t = time.perf_counter()
                raw = solve_highs(prog, time_limit=args.limit)
                dt = time.perf_counter() - t
            record(name, d, "HiGHS", dt, mem.peak_mb, matrix_mb, raw.status + (f" ({raw.message})" if raw.message else ""))
            del prog, A
            if name == "ldp":
                with PeakMemory() as mem:
                    t = time.perf_counter()
                    r = co.solve(p, solver="HIGHS", time_limit=args.limit)
                    dt = time.perf_counter() - t
                record(name, d, "solve (LP forced)", dt, mem.peak_mb, matrix_mb, r.status)
    out = bench.write_table(rows, Path(args.out) / "bench_large.csv")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
