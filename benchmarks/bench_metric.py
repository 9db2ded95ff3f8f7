"""Geo-indistinguishability on an n x n grid: metric-ldp with the grid's walking distance.

    python benchmarks/bench_metric.py [--sizes 4,6,8,10,14,20] [--eps 0.5] [--cap 60]
        [--edge-cap 900] [--out benchmarks/results]

A user in cell x reports cell y; the loss is Hamming (a wrong cell). For each grid, in the same
process:

  edges/<solver>   channelopt's metric-ldp: constraints between neighbouring cells only
                   (2 n (n - 1) edges, both directions), the other pairs implied by chaining;
  all-pairs/HIGHS  the same notion written for every ordered pair (ID-LDP with pair budgets
                   eps d(x, x'), channelopt's LP): d (d - 1) rows per output;
  qif              libqif's own d-privacy LP (`qif.mechanism.d_privacy.min_loss_given_d`), all pairs.

`ratio` is the time over edges/HIGHS at the same size; `rel_diff` the objective's distance to
edges/HIGHS (or to the first row of the size that solved). A series stops growing once one size
takes longer than its cap (--cap for baselines, --edge-cap for the edge formulations); the
all-pairs baselines run up to --baseline-max-d.
Writes bench_metric.{txt,csv,png}.
"""

from __future__ import annotations

import argparse
import csv
import time
from pathlib import Path

import numpy as np

import channelopt as co
from channelopt.notions import MetricLDP

SERIES = ("edges/HIGHS", "edges/HIGHS-IPM", "edges/CLARABEL", "all-pairs/HIGHS", "qif")


def manhattan(n: int) -> np.ndarray:
    x = np.arange(n * n)
    r, c = x // n, x % n
    return np.abs(r[:, None] - r[None, :]) + np.abs(c[:, None] - c[None, :])


def run(series: str, n: int, eps: float, P: np.ndarray) -> dict:
    d = n * n
    t0 = time.perf_counter()
    if series == "qif":
        import qif

        D = manhattan(n)
        C = np.array(qif.mechanism.d_privacy.min_loss_given_d(
            P, d, lambda a, b: eps * D[a, b], lambda a, b: float(a != b)))
        return {"status": "optimal", "objective": float((P[:, None] * C * (1 - np.eye(d))).sum()),
                "time_s": time.perf_counter() - t0, "rows": d * (d - 1) * d}
    form, solver = series.split("/")
    notion = (MetricLDP(eps, grid=[n, n]) if form == "edges"
              else co.IDLDP(pair_epsilons=(eps * manhattan(n)).tolist()))
    p = co.Problem(prior=P, privacy=[notion], utility=co.Distortion("hamming"))
    rows = notion.column_rows(p).shape[0] * d
    r = co.solve(p, solver=solver, fallback=False)
    return {"status": r.status, "objective": r.objective, "time_s": time.perf_counter() - t0, "rows": rows}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="4,6,8,10,14,20")
    ap.add_argument("--eps", type=float, default=0.5)
    ap.add_argument("--series", default=",".join(SERIES))
    ap.add_argument("--cap", type=float, default=60.0)
    ap.add_argument("--edge-cap", type=float, default=900.0)
    ap.add_argument("--baseline-max-d", type=int, default=64,
                    help="largest d for the all-pairs baselines (qif at d = 100 runs for tens of minutes)")
    ap.add_argument("--out", default=str(Path(__file__).parent / "results"))
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    sizes = [int(s) for s in args.sizes.split(",")]
    series = args.series.split(",")
    rows, stopped = [], set()
    head = f"{'grid':>6} {'d':>4} {'series':<16} {'rows':>10} {'status':<9} {'objective':>12} {'time_s':>9} {'ratio':>7} {'rel_diff':>9}"
    lines = [head]
    print(head, flush=True)
    for n in sizes:
        P = np.random.default_rng(n).dirichlet(np.ones(n * n))
        base_t = base_obj = None
        for s in series:
            if s in stopped or (not s.startswith("edges") and n * n > args.baseline_max_d):
                continue
            r = run(s, n, args.eps, P)
            if base_t is None and r["status"] == "optimal":
                base_t, base_obj = r["time_s"], r["objective"]
            row = {"grid": f"{n}x{n}", "d": n * n, "series": s, **r,
                   "ratio": r["time_s"] / base_t if base_t else np.nan,
                   "rel_diff": abs(r["objective"] - base_obj) / max(1.0, abs(base_obj))
                   if base_obj is not None and r["objective"] is not None else np.nan}
            rows.append(row)
            line = (f"{row['grid']:>6} {row['d']:>4} {s:<16} {row['rows']:>10} {row['status']:<9} "
                    f"{row['objective']:>12.9f} {row['time_s']:>9.2f} {row['ratio']:>7.2f} {row['rel_diff']:>9.1e}")
            lines.append(line)
            print(line, flush=True)
            if r["time_s"] > (args.edge_cap if s.startswith("edges") else args.cap):
                stopped.add(s)
    (out / "bench_metric.txt").write_text("\n".join(lines) + "\n")
    with open(out / "bench_metric.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    for s in series:
        pts = [(r["d"], r["time_s"]) for r in rows if r["series"] == s and r["status"] == "optimal"]
        if pts:
            ax.loglog(*zip(*pts), marker="o", label=s)
    ax.set_xlabel("cells d (n x n grid)")
    ax.set_ylabel("time (s)")
    ax.set_title(f"geo-indistinguishability, eps = {args.eps:g} per step, Hamming", fontsize=9)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out / "bench_metric.png", dpi=120)


if __name__ == "__main__":
    main()
