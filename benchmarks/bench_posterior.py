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


def plot(rows, path: Path) -> None:
    """Log-log time vs d, one line per (utility, notion); hollow markers where not certified."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.5, 4.5))
    for key in dict.fromkeys((r["utility"], r["notion"]) for r in rows):
        pts = [r for r in rows if (r["utility"], r["notion"]) == key]
        line, = ax.plot([int(r["d"]) for r in pts], [float(r["time_s"]) for r in pts], "o-", ms=4, label="/".join(key))
        bad = [r for r in pts if r["status"] != "optimal"]
        ax.plot([int(r["d"]) for r in bad], [float(r["time_s"]) for r in bad], "o", mfc="white", color=line.get_color())
    ax.axhline(10, color="grey", ls=":", lw=1)
    ax.set(xscale="log", yscale="log", xlabel="d", ylabel="seconds", title="certified Bayes optimum (posterior LP), eps = 1")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--max-d", type=int, default=32)
    ap.add_argument("--cap", type=float, default=10.0)
    ap.add_argument("--out", default=str(Path(__file__).parent / "out"))
    ap.add_argument("--plot-only", metavar="CSV", help="redraw the plot from a previous run's CSV and exit")
    args = ap.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    if args.plot_only:
        with open(args.plot_only, newline="") as f:
            plot(list(csv.DictReader(f)), out / "bench_posterior.png")
        return
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
    plot(rows, out / "bench_posterior.png")
    best = {}
    for r in rows:
        if r["time_s"] <= args.cap and r["status"] == "optimal":
            key = (r["utility"], r["notion"])
            best[key] = max(best.get(key, 0), r["d"])
    print("largest d certified within the cap:", {f"{k[0]}/{k[1]}": v for k, v in best.items()})


if __name__ == "__main__":
    main()
