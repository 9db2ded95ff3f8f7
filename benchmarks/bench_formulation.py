"""The channel LP with and without its per-output floor substituted away (`lp.build`, substitute=True).

    python benchmarks/bench_formulation.py [--sizes 64,128] [--seeds 3] [--out benchmarks/results]

LIP and ALIP with G = X bound every entry below by a multiple of its output's probability,
e^-eps_l Pr(Y = y) <= q[x, y]; LDP and MinID-LDP by the column's smallest entry. Writing
q = s + floor turns those d*m rows into the bounds s >= 0. For each notion, distortion
(Hamming, MAE, squared error), d and seed (Dirichlet(1) prior; MinID budgets from
`channelopt.bench.instance`), the same process times HiGHS on

  rows        the program with the floor rows (HiGHS presolve on, as before the substitution);
  floor       the substituted program, whole (presolve off: measured faster for every such program);
  restricted  the substituted program as `solve_highs` runs it by default: first on a few outputs,
              priced out exactly (`lp.solve_restricted`), the whole program if that does not close;

and `solve` the whole default path (build, HiGHS, clean, re-audit; the closed forms where they
apply are bypassed with solver = "HIGHS"). Medians over seeds; `speed-up` = rows / restricted;
`|dobj|` the largest objective difference between the three. Writes bench_formulation.csv.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

import channelopt as co
from channelopt import bench
from channelopt.methods.lp import build, solve_highs

NOTIONS = ("lip", "alip", "ldp", "minid-ldp")
KINDS = ("hamming", "mae", "squared")


def problem(notion: str, kind: str, d: int, seed: int) -> co.Problem:
    inst = bench.instance("minid-ldp", d, seed)
    privacy = {"lip": co.LIP(1.0), "alip": co.ALIP(epsilon_lower=0.5, epsilon_upper=1.0), "ldp": co.LDP(1.0),
               "minid-ldp": co.IDLDP(epsilons=inst.budgets)}[notion]
    return co.Problem(prior=inst.prior, privacy=[privacy], utility=co.Distortion(kind))


def timed_highs(prog, restrict: bool = False) -> tuple[float, float, int]:
    t = time.perf_counter()
    raw = solve_highs(prog, restrict=restrict)
    dt = time.perf_counter() - t
    if raw.status != "optimal":
        return dt, np.nan, prog.A_ub.shape[0]
    return dt, float(prog.c @ raw.z), prog.A_ub.shape[0]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="64,128")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--notions", default=",".join(NOTIONS))
    ap.add_argument("--kinds", default=",".join(KINDS))
    ap.add_argument("--out", default=str(Path(__file__).parent / "results"))
    args = ap.parse_args(argv)
    rows = []
    head = (f"{'notion':<10} {'utility':<8} {'d':>4} | {'rows':>7} {'rows_s':>7} | {'rows':>7} {'floor_s':>7} | "
            f"{'restr_s':>7} | {'speed-up':>8} {'solve_s':>7} {'|dobj|':>8}")
    print(head)
    print("-" * len(head))
    for d in (int(s) for s in args.sizes.split(",")):
        for notion in args.notions.split(","):
            for kind in args.kinds.split(","):
                cells = []
                for seed in range(args.seeds):
                    p = problem(notion, kind, d, seed)
                    t_rows, obj_rows, n_rows = timed_highs(build(p, substitute=False))
                    prog = build(p, substitute=True)
                    t_floor, obj_floor, n_floor = timed_highs(prog)
                    t_restr, obj_restr, _ = timed_highs(prog, restrict=True)
                    t = time.perf_counter()
                    r = co.solve(p, solver="HIGHS", progress=False)
                    t_solve = time.perf_counter() - t
                    assert r.status == "optimal", (notion, kind, d, seed, r.status)
                    dobj = max(abs(obj_rows - obj_floor), abs(obj_rows - obj_restr))
                    cells.append((t_rows, t_floor, t_solve, dobj, n_rows, n_floor, t_restr))
                a = np.array(cells)
                row = {"notion": notion, "utility": kind, "d": d, "rows_with_floor": int(a[0, 4]),
                       "rows_substituted": int(a[0, 5]), "highs_rows_s": float(np.median(a[:, 0])),
                       "highs_floor_s": float(np.median(a[:, 1])), "highs_restricted_s": float(np.median(a[:, 6])),
                       "solve_s": float(np.median(a[:, 2])),
                       "max_abs_dobj": float(a[:, 3].max())}
                row["speedup"] = row["highs_rows_s"] / row["highs_restricted_s"]
                rows.append(row)
                print(f"{notion:<10} {kind:<8} {d:>4} | {row['rows_with_floor']:>7} {row['highs_rows_s']:>7.3f} | "
                      f"{row['rows_substituted']:>7} {row['highs_floor_s']:>7.3f} {row['highs_restricted_s']:>7.3f} | "
                      f"{row['speedup']:>7.1f}x "
                      f"{row['solve_s']:>7.3f} {row['max_abs_dobj']:>8.1e}", flush=True)
    print(f"wrote {bench.write_table(rows, Path(args.out) / 'bench_formulation.csv')}")


if __name__ == "__main__":
    main()
