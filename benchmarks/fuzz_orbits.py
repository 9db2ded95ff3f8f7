"""Does the orbit LP equal the LP over every vertex? A fuzz of `channelopt.methods.symmetry`
(priors on a few levels, docs/reliability.md "Certified Bayes optima at large d").

    python benchmarks/fuzz_orbits.py [--n 2000] [--seed 0] [--out benchmarks/results]

Each problem draws d in 5..12, 2-4 prior levels (masses from 1e-3 to 1, or from {1, 2, 5, 9, 14}),
which symbol sits on which level, eps log-uniform in 0.01..15, a notion (LIP or LDP) and a Bayes
utility (bayes-mse with values equal on each level, histogram-MSE, mutual information, MAP). Its
optimum is computed twice: by `symmetry.solve_orbits` (column generation over vertex types,
priced from sums over classes), and by the LP over every vertex of the notion's posterior
polytope, written from its definition in tests/truths.py (LIP: every coordinate at a bound but
one; LDP: the rays P (1 + (e^eps - 1) 1_S), normalized). A problem is a mismatch when the two optima differ by
more than 1e-9 (relative to max(1, |gain|)), when the orbit LP's bound is below the optimum or
more than 1e-9 above its gain, or when its channel's posteriors do not average to the prior
within 1e-9. Prints the mismatches (there should be none) and a summary, and writes
fuzz_orbits.txt.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np

import channelopt as co
from channelopt.errors import SolverError
from channelopt.methods.posterior import enumerate_and_solve, posterior_rows
from channelopt.methods.structured import family_for
from channelopt.methods.symmetry import solve_orbits

sys.path.insert(0, str(Path(__file__).parent.parent / "tests"))
from truths import ldp_vertices, lip_vertices  # noqa: E402  (the notions' vertices from their definitions)

KINDS = ("bayes-mse", "histogram-mse", "mutual-information", "map")


def draw(rng: np.random.Generator, i: int) -> co.Problem:
    d = int(rng.integers(5, 13))
    k = int(rng.integers(2, 5))
    if rng.random() < 0.5:
        masses = rng.uniform(1e-3, 1.0, size=k)
    else:
        masses = rng.choice([1.0, 2.0, 5.0, 9.0, 14.0], size=k, replace=False)
    level = rng.integers(0, k, size=d)
    P = masses[level] / masses[level].sum()
    eps = float(np.exp(rng.uniform(math.log(0.01), math.log(15.0))))
    notion = co.LIP(eps) if i % 2 else co.LDP(eps)
    kind = KINDS[(i // 2) % len(KINDS)]
    return co.Problem(prior=P, values=3.0 * masses[level] - 1.0, privacy=[notion], utility=co.Bayes(kind))


def check(p: co.Problem) -> tuple[list[str], bool]:
    """(what is wrong with the orbit LP on p, whether it applied)."""
    kind, eps, P = p.utility.kind, p.privacy[0].epsilon, p.prior
    out = solve_orbits(p, family_for(p), kind, p.utility.target(p) if kind == "bayes-mse" else None)
    if out is None:                                  # (no class of two symbols or more)
        return [], False
    V = lip_vertices(P, eps) if isinstance(p.privacy[0], co.LIP) else ldp_vertices(P, eps)[1:-1]
    try:
        _, _, best, _, _ = enumerate_and_solve(p, posterior_rows(p), V)
    except SolverError as e:                         # the reference failed: say so, and skip it
        return [f"the LP over every vertex failed ({e})"], True
    scale = max(1.0, abs(best))
    wrong = []
    if abs(out.gain - best) > 1e-9 * scale:
        wrong.append(f"gain {out.gain!r} against the vertex LP's {best!r}")
    if out.bound < best - 1e-9 * scale or out.bound - out.gain > 1e-9 * scale:
        wrong.append(f"bound {out.bound!r} (gain {out.gain!r}, optimum {best!r})")
    if np.abs(out.w @ out.V - P).max() > 1e-9:
        wrong.append(f"posteriors average to the prior within {np.abs(out.w @ out.V - P).max():.1e}")
    return wrong, True


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=str(Path(__file__).parent / "results"))
    args = ap.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    t0 = time.perf_counter()
    applied = mismatches = 0
    for i in range(args.n):
        p = draw(rng, i)
        wrong, ran = check(p)
        applied += ran
        if wrong:
            mismatches += 1
            print(f"problem {i}: d = {p.d}, {type(p.privacy[0]).__name__} eps = {p.privacy[0].epsilon:.4g}, "
                  f"{p.utility.kind}, prior {np.round(p.prior, 6).tolist()}: " + "; ".join(wrong))
    lines = [f"{args.n} problems, {applied} solved over orbits, in {time.perf_counter() - t0:.0f} s (seed {args.seed})",
             f"mismatches: {mismatches}"]
    print("\n".join(lines))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "fuzz_orbits.txt").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
