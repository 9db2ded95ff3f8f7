"""Certified Bayes optimum (posterior-space LP) time vs d, and how far the local SLSQP baseline
falls short of it.

    python benchmarks/bench_posterior.py [--max-d 32] [--cap 10] [--out benchmarks/out]

For each utility and notion, d doubles-ish until one solve exceeds --cap seconds; the largest d
solved within the cap is reported. The local baseline (8 SLSQP starts) runs for d <= 6.
"""

from __future__ import annotations

import argparse
import csv
import time
from pathlib import Path

import numpy as np

import channelopt as co
from channelopt.methods.local import local_search

SIZES = (4, 6, 8, 10, 12, 16, 20, 24, 32, 48, 64)


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--max-d", type=int, default=32)
    ap.add_argument("--cap", type=float, default=10.0)
    ap.add_argument("--out", default=str(Path(__file__).parent / "out"))
    args = ap.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    print(f"{'utility':<19} {'notion':<5} {'d':>3} {'time_s':>8} {'algorithm':<19} {'status':<8} {'gap':>9} "
          f"{'local short':>11}")
    for kind in ("bayes-mse", "histogram-mse", "mutual-information", "map"):
        for notion in ("lip", "ldp"):
            for d in (s for s in SIZES if s <= args.max_d):
                rng = np.random.default_rng(d)
                P = rng.dirichlet(np.ones(d))
                priv = co.LIP(1.0) if notion == "lip" else co.LDP(1.0)
                p = co.Problem(prior=P, privacy=[priv], utility=co.Bayes(kind))
                t0 = time.perf_counter()
                r = co.solve(p)
                t = time.perf_counter() - t0
                short = float("nan")
                if d <= 6:
                    _, g, _ = local_search(p, starts=8, seed=0)
                    short = p.utility.gain(p, r.channel) - g
                row = {"utility": kind, "notion": notion, "d": d, "time_s": t, "algorithm": r.certificate.get("algorithm"),
                       "status": r.status, "gap": r.certificate["gap"], "local_shortfall": short}
                rows.append(row)
                print(f"{kind:<19} {notion:<5} {d:>3} {t:>8.3f} {row['algorithm']:<19} {r.status:<8} "
                      f"{row['gap']:>9.1e} {short:>11.2e}", flush=True)
                if t > args.cap:
                    break
    with open(out / "bench_posterior.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    best = {}
    for r in rows:
        if r["time_s"] <= args.cap and r["status"] == "optimal":
            key = (r["utility"], r["notion"])
            best[key] = max(best.get(key, 0), r["d"])
    print("largest d certified within the cap:", {f"{k[0]}/{k[1]}": v for k, v in best.items()})


if __name__ == "__main__":
    main()
