"""Does every sweep point equal its fresh solve? A fuzz over the warm paths of `channelopt.sweep`:
the eps-free LP (`methods.parametric.Parametric`), the reduced LP on the top outputs held along
the path, the level program of MinID-LDP (`LevelProgram`) and the closed forms kept along it.

    python benchmarks/fuzz_sweep.py [--n 400] [--seed 0] [--points 6] [--out benchmarks/results]

Each problem draws d in 3..40, a Dirichlet prior (concentration 0.3, 1 or 5), a distortion (MAE,
squared error or Hamming) and a notion (LDP, LIP, or ID-LDP on per-input budgets of 2-3 levels,
swept by `scale`); its budgets run up, or in a random order (a path that turns back). Every point
of the sweep is checked against `channelopt.solve` on the same problem, independently of the warm
state: both certified optimal, objectives within 1e-8 (relative), and the sweep's point passes
`fuzz_status.check` (its channel audited, its objective recomputed, its gap within 1e-7). Prints
the mismatches (there should be none) and a summary, and writes fuzz_sweep.txt.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

import channelopt as co
import fuzz_status

UTILITIES = ("mae", "squared", "hamming")
NOTIONS = ("ldp", "lip", "minid")


def path(rng, n: int) -> tuple[np.ndarray, np.ndarray]:
    """(the sweep's `n` values, increasing or in a random order; the budget levels MinID-LDP's
    inputs draw from)."""
    values = rng.uniform(0.05, 5.0, n)
    return (values if rng.random() < 0.5 else np.sort(values)), rng.choice([0.5, 1.0, 2.0], size=3)


def check(p: co.Problem, warm: co.Result, fresh: co.Result) -> list[str]:
    """What is wrong with a sweep point `warm` against the fresh solve of its problem: both must
    be certified and agree, and `warm` must pass `fuzz_status.check` (its channel audited, its
    objective recomputed, its gap to its bound)."""
    if warm.status != "optimal" or fresh.status != "optimal":
        return [f"statuses {warm.status} / {fresh.status}"]
    bad = fuzz_status.check(p, warm)
    if abs(warm.objective - fresh.objective) > 1e-8 * max(1.0, abs(fresh.objective)):
        bad.append(f"objectives {warm.objective!r} / {fresh.objective!r}")
    return bad


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=400, help="problems (each one sweep)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--points", type=int, default=6, help="points a sweep")
    ap.add_argument("--out", default=str(Path(__file__).parent / "results"))
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    lines, points, t0 = [], 0, time.perf_counter()
    for i in range(args.n):
        d = int(rng.integers(3, 41))
        P = rng.dirichlet(np.full(d, rng.choice([0.3, 1.0, 5.0])))
        utility = co.Distortion(str(rng.choice(UTILITIES)))
        kind = str(rng.choice(NOTIONS))
        values, levels = path(rng, args.points)
        if kind == "minid":
            budgets = rng.choice(levels, size=d)
            base = co.Problem(prior=P, privacy=[co.IDLDP(epsilons=budgets)], utility=utility)
            sweep = co.sweep(base, scale=values)
            fresh = [co.Problem(prior=P, privacy=[co.IDLDP(epsilons=budgets * s)], utility=utility) for s in values]
        else:
            notion = co.LDP if kind == "ldp" else co.LIP
            base = co.Problem(prior=P, privacy=[notion(1.0)], utility=utility)
            sweep = co.sweep(base, epsilon=values)
            fresh = [co.Problem(prior=P, privacy=[notion(float(e))], utility=utility) for e in values]
        for value, warm, p in zip(values, sweep, fresh):
            points += 1
            bad = check(p, warm, co.solve(p))
            if bad:
                lines.append(f"{i}: {kind} {utility.kind} d={d} value={value:.6g}: {'; '.join(bad)}")
    summary = [f"{args.n} sweeps, {points} points in {time.perf_counter() - t0:.0f} s (seed {args.seed})",
               f"mismatches: {len(lines)}"]
    text = "\n".join(summary + lines) + "\n"
    print(text, end="")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "fuzz_sweep.txt").write_text(text)


if __name__ == "__main__":
    main()
