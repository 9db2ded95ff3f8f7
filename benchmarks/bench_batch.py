"""Per-user channels for N users with local priors (LIP, Bayes MSE, d = 5 by default).

    python benchmarks/bench_batch.py [--users 1000000] [--d 5] [--out benchmarks/results]

For N in {users/10, users} and 1 and 2 worker processes: wall time, users per second, how many
users the critical-region method certified, and the parent process's peak resident-set growth
(the result arrays are streamed to an .npz, so it should not grow with N). Baseline in the same
process: channelopt.solve on 300 of the users, extrapolated to N. Every batch objective of those
300 users is compared with its solve (|objective difference| column).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np

import channelopt as co
from channelopt.batch import solve_batch
from channelopt import bench
from channelopt.bench import PeakMemory


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--users", type=int, default=1_000_000)
    ap.add_argument("--d", type=int, default=5)
    ap.add_argument("--epsilon", type=float, default=1.0)
    ap.add_argument("--out", default=str(Path(__file__).parent / "results"))
    args = ap.parse_args(argv)
    d = args.d
    tpl = co.Problem(prior=np.full(d, 1 / d), privacy=[co.LIP(args.epsilon)], utility=co.Bayes("bayes-mse"))
    rng = np.random.default_rng(2024)
    P_all = rng.dirichlet(np.ones(d), size=args.users)
    sample = P_all[:min(300, max(1, args.users // 10))]
    t = time.perf_counter()
    ref = [co.solve(co.Problem(prior=p, privacy=tpl.privacy, utility=tpl.utility)).objective for p in sample]
    per_user = (time.perf_counter() - t) / len(sample)
    rows = []
    head = (f"{'users':>9} {'jobs':>4} | {'time_s':>7} {'users/s':>9} {'certified':>9} {'by solve':>8} "
            f"{'optimal':>9} | {'peak MB':>7} | {'solve-each est. s':>17} {'speed-up':>8} | {'|dobj|':>8}")
    print(head)
    print("-" * len(head))
    with tempfile.TemporaryDirectory() as tmp:
        for N in (args.users // 10, args.users):
            for jobs in (1, 2):
                out = Path(tmp) / "r.npz"
                with PeakMemory() as mem:
                    t = time.perf_counter()
                    res = solve_batch(P_all[:N], tpl, out=out, n_jobs=jobs)
                    dt = time.perf_counter() - t
                obj = np.load(out)["objective"][:len(sample)]
                diff = float(np.max(np.abs(obj - ref)))
                row = {"users": N, "jobs": jobs, "time_s": dt, "users_per_s": N / dt,
                       "critical_region": res.methods["critical-region"], "solve": res.methods["solve"],
                       "optimal": res.counts["optimal"], "peak_mb": mem.peak_mb,
                       "solve_each_est_s": per_user * N, "speedup": per_user * N / dt, "max_abs_dobj": diff}
                rows.append(row)
                print(f"{N:>9} {jobs:>4} | {dt:7.1f} {N / dt:9.0f} {row['critical_region']:>9} {row['solve']:>8} "
                      f"{row['optimal']:>9} | {mem.peak_mb:7.0f} | {per_user * N:17.0f} {row['speedup']:8.0f} | "
                      f"{diff:8.1e}", flush=True)
    out = Path(args.out)
    bench.write_table(rows, out / "bench_batch.csv")
    print(f"wrote {out / 'bench_batch.csv'}")


if __name__ == "__main__":
    main()
