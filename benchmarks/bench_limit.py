"""Bayes solves past the certified sizes: what a short time limit costs at d = 2000-5000.

    python benchmarks/bench_limit.py [--sizes 2000,4000] [--limit 10] [--utilities ...]
        [--notions lip,ldp] [--out benchmarks/out]

Each solve (Dirichlet(1) prior, eps = 1, seed 0) runs in a fresh process, so its peak resident
memory is its own. The table gives the wall time against the limit (`over`: time / limit), the
peak memory, the status, and the objective against two channels written down in the same run:
generalized randomized response (`vs_grr`: objective / GRR's, below 1 is better for the MSEs, above
1 for mutual information and MAP) and the constant channel (`vs_const`, the same way). A solve is
never worse than GRR (`Family.grr`, the fallback of a loop stopped before its first optimum).
Writes bench_limit.csv.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

KINDS = ("bayes-mse", "histogram-mse", "mutual-information", "map")


def one(kind: str, notion: str, d: int, limit: float) -> dict:
    """One solve in this process: time, status, objective, GRR's and the constant channel's."""
    import channelopt as co

    P = np.random.default_rng([d, 0]).dirichlet(np.ones(d))
    priv = co.LIP(1.0) if notion == "lip" else co.LDP(1.0)
    p = co.Problem(prior=P, privacy=[priv], utility=co.Bayes(kind))
    t = time.perf_counter()
    r = co.solve(p, time_limit=limit, progress=False)
    t = time.perf_counter() - t
    grr = (np.expm1(1.0) * np.eye(d) + 1.0) / (np.e + d - 1)
    return {"utility": kind, "notion": notion, "d": d, "limit_s": limit, "time_s": t, "status": r.status,
            "objective": r.objective, "grr": p.utility.evaluate(p, grr),
            "constant": p.utility.evaluate(p, np.ones((d, 1))),
            "peak_MB": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="2000,4000")
    ap.add_argument("--limit", type=float, default=10.0, help="time_limit of each solve (s)")
    ap.add_argument("--utilities", default=",".join(KINDS))
    ap.add_argument("--notions", default="lip,ldp")
    ap.add_argument("--out", default=str(Path(__file__).parent / "out"))
    ap.add_argument("--one", nargs=3, metavar=("UTILITY", "NOTION", "D"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.one:
        print(json.dumps(one(args.one[0], args.one[1], int(args.one[2]), args.limit)))
        return
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    print(f"{'utility':<19} {'notion':<6} {'d':>5} {'time_s':>7} {'over':>5} {'peak_MB':>8}  {'status':<7} "
          f"{'vs_grr':>9} {'vs_const':>9}", flush=True)
    for d in (int(s) for s in args.sizes.split(",")):
        for notion in args.notions.split(","):
            for kind in args.utilities.split(","):
                done = subprocess.run([sys.executable, __file__, "--limit", str(args.limit), "--one", kind, notion, str(d)],
                                      capture_output=True, text=True, check=True)
                row = json.loads(done.stdout.strip().splitlines()[-1])
                rows.append(row)
                const = row["objective"] / row["constant"] if abs(row["constant"]) > 1e-9 else np.nan   # (I = 0)
                print(f"{kind:<19} {notion:<6} {d:>5} {row['time_s']:>7.1f} {row['time_s'] / args.limit:>5.2f} "
                      f"{row['peak_MB']:>8.0f}  {row['status']:<7} {row['objective'] / row['grr']:>9.6g} "
                      f"{const:>9.6g}", flush=True)
    from channelopt import bench

    bench.write_table(rows, out / "bench_limit.csv")
    print(f"wrote {out / 'bench_limit.csv'}")


if __name__ == "__main__":
    main()
