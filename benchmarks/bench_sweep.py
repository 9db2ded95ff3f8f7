"""A 100-point eps sweep: channelopt.sweep (warm-started HiGHS, one process and two) against 100
fresh channelopt.solve calls, 100 fresh LPs (`closed_forms=False`: no closed form and no reduced
LP on the top outputs) and 100 fresh straightforward cvxpy problems, in the same process.
MinID-LDP (per-input budgets, `bench.instance`) is swept with `scale=` over the same factors.

    python benchmarks/bench_sweep.py [--points 100] [--sizes 16,32,64,128] [--notions ldp,lip,minid]
                                     [--utilities hamming] [--repeat 1] [--out benchmarks/results]

Prints a table (seconds; ratios = fresh / sweep, co = channelopt.solve) and writes bench_sweep.csv
and bench_sweep.png. Two jobs are timed twice: "cold" with the worker pool shut down just before
(the worker first imports the package), "warm" right after, on a worker that has served a sweep
(`warm_up`: the cold run of a short sweep starts none). With
--repeat R, the sweep, the sweeps on 2 jobs and the fresh solves are timed R times in turn (each
ratio is the median of the R ratios measured side by side: on a machine whose speed drifts, a ratio
of adjacent timings moves less than either timing).
Every sweep point is checked against its fresh solve (|objective difference| column).
"""

from __future__ import annotations

import argparse
import importlib
import time
from pathlib import Path

import numpy as np
from joblib.executor import get_memmapping_executor

import channelopt as co
from channelopt import bench


def problem(notion, d, eps, utility="hamming"):
    P = np.random.default_rng(d).dirichlet(np.ones(d))
    if notion == "minid":
        n = co.IDLDP(epsilons=eps * bench.instance("minid-ldp", d).budgets)
    else:
        n = co.LDP(eps) if notion == "ldp" else co.LIP(eps)
    return co.Problem(prior=P, privacy=[n], utility=co.Distortion(utility))


def warm_up(base, along) -> None:
    """Leave the pool's worker up and marked as having served a sweep (`sweep._warm_workers`): a
    cold run under `sweep.PARALLEL_MIN_S` (d = 32) never starts it, so a short sweep that asks for it
    whatever its work, then wait until one of its chunks has returned."""
    sweep_mod = importlib.import_module("channelopt.sweep")
    if sweep_mod._warm_workers() >= 1:
        return
    kept = sweep_mod.PARALLEL_MIN_S
    sweep_mod.PARALLEL_MIN_S = 0.0
    try:
        co.sweep(base, **{k: v[:12] for k, v in along.items()}, n_jobs=2)
    finally:
        sweep_mod.PARALLEL_MIN_S = kept
    t = time.perf_counter()
    while sweep_mod._warm_workers() < 1 and time.perf_counter() - t < 60:
        time.sleep(0.05)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--points", type=int, default=100)
    ap.add_argument("--sizes", default="16,32,64,128")
    ap.add_argument("--notions", default="ldp,lip,minid")
    ap.add_argument("--utilities", default="hamming")
    ap.add_argument("--cvxpy-max-d", type=int, default=16, help="largest d for the fresh-cvxpy baseline")
    ap.add_argument("--repeat", type=int, default=1,
                    help="time sweep, 2 jobs and fresh solves this many times in turn: medians, and ratios "
                         "as the median of each repeat's own")
    ap.add_argument("--out", default=str(Path(__file__).parent / "results"))
    args = ap.parse_args(argv)
    eps = np.linspace(0.5, 3.0, args.points)
    rows = []
    head = (f"{'notion':<6} {'utility':<8} {'d':>4} {'pts':>4} | {'sweep':>7} {'x2 cold':>8} {'x2 warm':>8} "
            f"{'fresh co':>8} {'fresh LP':>8} {'fresh cvxpy':>11} | "
            f"{'co/sweep':>8} {'co/cold':>7} {'co/x2':>6} {'LP/sweep':>8} {'cvxpy/sweep':>11} | {'|dobj|':>8}")
    print(head)
    print("-" * len(head))
    cells = [(n, u, int(d)) for u in args.utilities.split(",") for n in args.notions.split(",")
             for d in args.sizes.split(",")]
    for notion, utility, d in cells:
        base = problem(notion, d, 1.0, utility)
        along = {"scale": eps} if notion == "minid" else {"epsilon": eps}
        runs = []                # (sweep, 2 jobs cold, 2 jobs warm, fresh solves), one a repeat
        for _ in range(args.repeat):
            t = time.perf_counter()
            sw = co.sweep(base, **along)
            t_sweep = time.perf_counter() - t
            get_memmapping_executor(1).shutdown(wait=True)          # the worker starts cold
            t = time.perf_counter()
            co.sweep(base, **along, n_jobs=2)
            t_cold = time.perf_counter() - t
            warm_up(base, along)
            t = time.perf_counter()
            co.sweep(base, **along, n_jobs=2)                       # the worker up and served a sweep
            t_par = time.perf_counter() - t
            t = time.perf_counter()
            fresh = [co.solve(problem(notion, d, e, utility)) for e in eps]
            runs.append((t_sweep, t_cold, t_par, time.perf_counter() - t))
        t_sweep, t_cold, t_par, t_fresh = np.median(np.array(runs), axis=0)
        ratio, ratio_cold, ratio_par = (float(np.median([r[-1] / r[k] for r in runs])) for k in range(3))
        t = time.perf_counter()
        for e in eps:
            co.solve(problem(notion, d, e, utility), closed_forms=False)
        t_lp = time.perf_counter() - t
        t_cvx = float("nan")
        if d <= args.cvxpy_max_d and notion != "minid" and utility == "hamming":
            t = time.perf_counter()
            for e in eps:
                bench.run_cvxpy_pairwise(bench.Instance(notion, d, base.prior, np.full(d, e)), "hamming", eps=e)
            t_cvx = time.perf_counter() - t
        diff = max(abs(a.objective - b.objective) for a, b in zip(sw, fresh))
        assert all(r.ok for r in sw)
        row = {"notion": notion, "utility": utility, "d": d, "points": len(eps), "sweep_s": t_sweep,
               "sweep_2jobs_s": t_par, "sweep_2jobs_cold_s": t_cold, "fresh_solve_s": t_fresh, "fresh_lp_s": t_lp, "fresh_cvxpy_s": t_cvx,
               "fresh_over_sweep": ratio, "fresh_over_2jobs": ratio_par, "fresh_over_2jobs_cold": ratio_cold,
               "repeats": args.repeat,
               "max_abs_dobj": diff}
        rows.append(row)
        print(f"{notion:<6} {utility:<8} {d:>4} {len(eps):>4} | {t_sweep:7.2f} {t_cold:8.2f} {t_par:8.2f} "
              f"{t_fresh:8.2f} {t_lp:8.2f} {t_cvx:11.2f} | "
              f"{ratio:8.2f} {ratio_cold:7.2f} {ratio_par:6.2f} {t_lp / t_sweep:8.2f} {t_cvx / t_sweep:11.1f} | "
              f"{diff:8.1e}",
              flush=True)
    out = Path(args.out)
    bench.write_table(rows, out / "bench_sweep.csv")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = sorted({(r["notion"], r["utility"]) for r in rows}, key=lambda p: (p[1], p[0]))
    fig, axes = plt.subplots(1, len(panels), figsize=(3.6 * len(panels), 3.5), sharey=True, squeeze=False)
    axes = axes[0]
    for ax, (notion, utility) in zip(axes, panels):
        sel = [r for r in rows if (r["notion"], r["utility"]) == (notion, utility)]
        ds = [r["d"] for r in sel]
        for key, label in (("sweep_s", "sweep (warm)"), ("sweep_2jobs_cold_s", "sweep, 2 jobs (cold)"),
                           ("sweep_2jobs_s", "sweep, 2 jobs (warm)"),
                           ("fresh_solve_s", "fresh solve"), ("fresh_lp_s", "fresh LP"), ("fresh_cvxpy_s", "fresh cvxpy")):
            ax.loglog(ds, [r[key] for r in sel], marker="o", label=label)
        ax.set_xscale("log", base=2)
        ax.set_title(f"{notion}, {utility}, {len(eps)}-point {'scale' if notion == 'minid' else 'eps'} sweep",
                     fontsize=9)
        ax.set_xlabel("d")
        ax.grid(True, which="both", alpha=0.3)
    axes[0].set_ylabel("total time (s)")
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out / "bench_sweep.png", dpi=110)
    print(f"wrote {out / 'bench_sweep.csv'}, {out / 'bench_sweep.png'}")


if __name__ == "__main__":
    main()
