"""Time the LDP / LIP / MinID-LDP Hamming optimum through channelopt.solve and through the
straightforward cvxpy formulation a user would write (pairwise constraints, one cvxpy
constraint per pair of inputs), in the same process, with the same LP solver (HiGHS).

    python benchmarks/bench_core.py [--quick] [--max-d 128] [--baseline-cap 60] [--out benchmarks/out]

Prints a table (times in seconds, ratio = baseline total / channelopt total, objective
agreement) and writes bench_core.csv and bench_core.png to --out.
"""

from __future__ import annotations

import argparse
import csv
import time
from pathlib import Path

import cvxpy as cp
import numpy as np

import channelopt as co

EPS = 1.0


def instance(notion: str, d: int, seed: int = 0):
    rng = np.random.default_rng(seed + d)
    prior = rng.dirichlet(np.ones(d))
    budgets = rng.choice([EPS, 1.2 * EPS, 2 * EPS], size=d, p=[0.05, 0.05, 0.9])
    budgets[0] = EPS
    return prior, budgets


def channelopt_problem(notion, prior, budgets):
    privacy = {"ldp": co.LDP(EPS), "lip": co.LIP(EPS), "minid-ldp": co.IDLDP(epsilons=budgets)}[notion]
    return co.Problem(prior=prior, privacy=[privacy], utility=co.Distortion("hamming"))


def baseline(notion, prior, budgets):
    """What a user would write: one cvxpy constraint per ordered pair of inputs."""
    d = prior.size
    t0 = time.perf_counter()
    q = cp.Variable((d, d), nonneg=True)
    cons = [cp.sum(q, axis=1) == 1]
    if notion == "lip":
        lam = prior @ q
        for x in range(d):
            cons += [q[x, :] <= np.exp(EPS) * lam, lam <= np.exp(EPS) * q[x, :]]
    else:
        for x in range(d):
            for x2 in range(d):
                if x != x2:
                    r = EPS if notion == "ldp" else min(budgets[x], budgets[x2])
                    cons.append(q[x, :] <= np.exp(r) * q[x2, :])
    hamming = 1 - cp.sum(cp.multiply(prior, cp.diag(q)))
    prob = cp.Problem(cp.Minimize(hamming), cons)
    prob.solve(solver=cp.HIGHS)
    total = time.perf_counter() - t0
    solve_s = prob.solver_stats.solve_time
    return {"compile_s": total - solve_s, "solve_s": solve_s, "total_s": total, "objective": prob.value}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="d in 4..16 only")
    ap.add_argument("--max-d", type=int, default=128)
    ap.add_argument("--baseline-cap", type=float, default=60.0,
                    help="stop running the baseline for a notion once one d took longer than this (s)")
    ap.add_argument("--out", default=str(Path(__file__).parent / "out"))
    args = ap.parse_args(argv)
    sizes = [d for d in (4, 8, 16, 32, 64, 128, 256) if d <= (16 if args.quick else args.max_d)]
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    header = (f"{'notion':<10} {'d':>4} | {'co compile':>10} {'co solve':>9} {'co total':>9} | "
              f"{'base compile':>12} {'base solve':>10} {'base total':>10} | {'ratio':>7} {'|dobj|':>8}")
    print(header)
    print("-" * len(header))
    for notion in ("ldp", "lip", "minid-ldp"):
        run_baseline = True
        for d in sizes:
            prior, budgets = instance(notion, d)
            res = co.solve(channelopt_problem(notion, prior, budgets))
            t = res.timings
            row = {"notion": notion, "d": d, "co_compile_s": t["compile_s"], "co_solve_s": t["solve_s"],
                   "co_total_s": t["total_s"], "co_objective": res.objective, "status": res.status}
            if run_baseline:
                b = baseline(notion, prior, budgets)
                row.update({"base_compile_s": b["compile_s"], "base_solve_s": b["solve_s"],
                            "base_total_s": b["total_s"], "base_objective": b["objective"],
                            "ratio": b["total_s"] / t["total_s"],
                            "objective_diff": abs(b["objective"] - res.objective)})
                run_baseline = b["total_s"] <= args.baseline_cap
            rows.append(row)
            fmt = lambda k, w, p=3: f"{row[k]:>{w}.{p}f}" if k in row else f"{'skipped':>{w}}"
            print(f"{notion:<10} {d:>4} | {fmt('co_compile_s', 10)} {fmt('co_solve_s', 9)} {fmt('co_total_s', 9)} | "
                  f"{fmt('base_compile_s', 12)} {fmt('base_solve_s', 10)} {fmt('base_total_s', 10)} | "
                  f"{fmt('ratio', 7, 1)} {row['objective_diff'] if 'objective_diff' in row else float('nan'):>8.1e}",
                  flush=True)
    keys = sorted({k for r in rows for k in r}, key=lambda k: list(rows[0]).index(k) if k in rows[0] else 99)
    with open(out / "bench_core.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=keys)
        w.writeheader()
        w.writerows(rows)
    plot(rows, out / "bench_core.png")
    print(f"wrote {out / 'bench_core.csv'} and {out / 'bench_core.png'}")


def plot(rows, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(13, 4), sharey=True)
    for ax, notion in zip(axes, ("ldp", "lip", "minid-ldp")):
        rs = [r for r in rows if r["notion"] == notion]
        ax.loglog([r["d"] for r in rs], [r["co_total_s"] for r in rs], "o-", label="channelopt.solve")
        rb = [r for r in rs if "base_total_s" in r]
        ax.loglog([r["d"] for r in rb], [r["base_total_s"] for r in rb], "s--", label="pairwise cvxpy baseline")
        ax.set_title(f"{notion}, Hamming, eps = {EPS}")
        ax.set_xlabel("d")
        ax.grid(True, which="both", alpha=0.3)
    axes[0].set_ylabel("end-to-end time (s)")
    axes[0].legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


if __name__ == "__main__":
    main()
