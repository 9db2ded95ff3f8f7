"""The restricted program: fresh Hamming LPs solved with the default entering rule and limits
(`lp.solve_restricted`, entries; `lp.RESTRICT_ROUNDS`, `lp.RESTRICT_SHARE`) against a baseline
rule and pair of limits, in the same process.

    python benchmarks/bench_restricted.py [--sizes 64,128,256] [--eps 0.5,1,2,3,4,ln2d] [--seeds 2]
                                          [--base-enter outputs] [--base-rounds 40] [--base-share 0.5]
                                          [--out benchmarks/results]

For every notion (LIP, LDP, MinID-LDP), size, eps (`ln2d`: ln(2d), where every output is used)
and Dirichlet prior: `lp.solve_highs` on the built program, best of two runs per setting, whether
the restricted program closed (R) or the whole program was solved (W), and the objective
difference between the settings. Prints the table and the totals, writes bench_restricted.csv.
"""

from __future__ import annotations

import argparse
import functools
import time
from pathlib import Path

import numpy as np

import channelopt as co
from channelopt import bench
from channelopt.methods import lp


def timed(prog, enter, rounds, share, reps=2):
    saved = lp.RESTRICT_ROUNDS, lp.RESTRICT_SHARE, lp.solve_restricted
    lp.RESTRICT_ROUNDS, lp.RESTRICT_SHARE = rounds, share
    lp.solve_restricted = functools.partial(saved[2], enter=enter)
    try:
        best, raw = np.inf, None
        for _ in range(reps):
            t = time.perf_counter()
            raw = lp.solve_highs(prog)
            best = min(best, time.perf_counter() - t)
        return best, float(prog.c @ raw.z), "entries" in raw.message
    finally:
        lp.RESTRICT_ROUNDS, lp.RESTRICT_SHARE, lp.solve_restricted = saved


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="64,128,256")
    ap.add_argument("--eps", default="0.5,1,2,3,4,ln2d")
    ap.add_argument("--seeds", type=int, default=2)
    ap.add_argument("--base-enter", default="outputs", choices=["entries", "outputs"])
    ap.add_argument("--base-rounds", type=int, default=40)
    ap.add_argument("--base-share", type=float, default=0.5)
    ap.add_argument("--out", default=str(Path(__file__).parent / "results"))
    args = ap.parse_args(argv)
    now = ("entries", lp.RESTRICT_ROUNDS, lp.RESTRICT_SHARE)
    base = (args.base_enter, args.base_rounds, args.base_share)
    print(f"default: {now[0]}, {now[1]} rounds, share {now[2]}; baseline: {base[0]}, {base[1]} rounds, share {base[2]}")
    head = f"{'notion':<6} {'d':>4} {'seed':>4} {'eps':>4} | {'default':>9} {'baseline':>9} | {'base/def':>8} | {'|dobj|':>8}"
    print(head)
    print("-" * len(head))
    rows = []
    for d in (int(t) for t in args.sizes.split(",")):
        for seed in range(args.seeds):
            P = np.random.default_rng(100 * d + seed).dirichlet(np.ones(d))
            for name in ("lip", "ldp", "minid"):
                for eps in (float(np.log(2 * d)) if t == "ln2d" else float(t) for t in args.eps.split(",")):
                    notion = {"lip": co.LIP(eps), "ldp": co.LDP(eps),
                              "minid": co.IDLDP(epsilons=eps * bench.instance("minid-ldp", d, seed).budgets)}[name]
                    prog = lp.build(co.Problem(prior=P, privacy=[notion], utility=co.Distortion("hamming")))
                    t_now, v_now, r_now = timed(prog, *now)
                    t_base, v_base, r_base = timed(prog, *base)
                    row = {"notion": name, "d": d, "seed": seed, "eps": eps, "default_s": t_now, "baseline_s": t_base,
                           "default_restricted": r_now, "baseline_restricted": r_base,
                           "abs_dobj": abs(v_now - v_base)}
                    rows.append(row)
                    print(f"{name:<6} {d:>4} {seed:>4} {eps:>4.3g} | {1e3 * t_now:7.0f}{'R' if r_now else 'W'} ms "
                          f"{1e3 * t_base:6.0f}{'R' if r_base else 'W'} ms | {t_base / t_now:8.2f} | "
                          f"{row['abs_dobj']:8.1e}", flush=True)
    a = np.array([r["default_s"] for r in rows])
    b = np.array([r["baseline_s"] for r in rows])
    print(f"total: default {a.sum():.2f} s, baseline {b.sum():.2f} s; the default slower by > 20% in "
          f"{int((a > 1.2 * b + 0.002).sum())} of {len(rows)}")
    out = Path(args.out)
    bench.write_table(rows, out / "bench_restricted.csv")
    print(f"wrote {out / 'bench_restricted.csv'}")


if __name__ == "__main__":
    main()
