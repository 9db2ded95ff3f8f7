"""Is every status under a time limit true? A fuzz of distortion solves at sizes where the limit
binds: d = 64..256, one notion or two (LDP, LIP, MinID-LDP on two budget levels; two: d <= 96),
MAE, squared error or Hamming, priors with tiny entries, limits from 1 ms to 2 s.

    python benchmarks/fuzz_limit.py [--n 100] [--seed 0] [--out benchmarks/results]
    python benchmarks/fuzz_limit.py --bayes [--reference-limit 10] ...

With --bayes, Bayes utilities instead (bayes-mse, histogram-MSE, mutual information, MAP) under
one LIP or LDP notion at d = 48..256 (the structured column generation and the orbit LP), limits
from 10 ms to 5 s against a reference solved with --reference-limit: each bound must hold for the
other run's channel (both are valid for every channel, certified or not), and the timed channel
must be no worse than GRR at the same budget (issue 16: never worse than the simple mechanisms).

Each problem is solved twice: without a limit (the reference, when certified) and with one. The
timed result passes `fuzz_status.check` (the channel audited, its objective recomputed, an
`optimal` gap within 1e-7), and against the reference: its objective is not below the optimum
and its bound is not above it (1e-9 relative). Prints the statuses, the methods of the `local`
results, the median objective and bound over the optimum, and every violation (there should be
none); writes fuzz_limit.{txt,csv}.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np

import channelopt as co
from fuzz_status import check, gain_units, prior, report


def problem(rng) -> co.Problem:
    two = rng.random() < 0.25                        # two notions: the whole LP (d <= 96)
    d = int(rng.choice([64, 96] if two else [64, 96, 128, 192, 256]))
    P = prior(rng, d) if rng.random() < 0.3 else rng.dirichlet(np.full(d, rng.choice([0.3, 1.0, 5.0])))
    eps = float(rng.uniform(0.3, 4.0))
    privacy = []
    for name in rng.choice(["ldp", "lip", "minid"], size=2 if two else 1, replace=False):
        if name == "ldp":
            privacy.append(co.LDP(eps))
        elif name == "lip":
            privacy.append(co.LIP(eps))
        else:
            privacy.append(co.IDLDP(epsilons=eps * np.where(np.arange(d) < d // 2, 1.0, 2.0)))
    return co.Problem(prior=P, privacy=privacy, utility=co.Distortion(str(rng.choice(["mae", "squared", "hamming"]))))


def bayes_problem(rng) -> co.Problem:
    d = int(rng.choice([48, 64, 96, 128, 192, 256]))
    P = prior(rng, d) if rng.random() < 0.3 else rng.dirichlet(np.full(d, rng.choice([0.3, 1.0, 5.0])))
    eps = float(rng.uniform(0.3, 4.0))
    notion = co.LIP(eps) if rng.random() < 0.5 else co.LDP(eps)
    kind = str(rng.choice(["bayes-mse", "histogram-mse", "mutual-information", "map"]))
    return co.Problem(prior=P, privacy=[notion], utility=co.Bayes(kind))


def cross_check(p: co.Problem, r: co.Result, ref: co.Result) -> list[str]:
    """Each run's bound against the other's channel (a valid bound holds for every channel), and
    the timed channel against GRR at the problem's budget."""
    bad = []
    sign = 1.0 if p.utility.sense == "min" else -1.0      # sign * objective >= sign * bound
    for a, b, what in ((r, ref, "timed"), (ref, r, "reference")):
        c = b.certificate
        if a.objective is None or c is None or c.bound is None:
            continue
        unit, gain = gain_units(p, a.objective)
        if sign * (a.objective - c.bound) < -1e-9 * unit * max(1.0, abs(gain)):
            bad.append(f"the {what} channel's objective {a.objective:.10g} beats the other run's bound {c.bound:.10g}")
    e = np.exp(p.privacy[0].epsilon)
    grr = (np.ones((p.d, p.d)) + (e - 1) * np.eye(p.d)) / (e + p.d - 1)
    g = p.utility.evaluate(p, grr)
    unit, gain = gain_units(p, g)
    if r.objective is None or sign * (r.objective - g) > 1e-9 * unit * max(1.0, abs(gain)):
        bad.append(f"objective {r.objective} worse than GRR's {g:.10g}")
    return bad


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=100)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=str(Path(__file__).parent / "results"))
    ap.add_argument("--bayes", action="store_true", help="Bayes utilities under LIP or LDP (see above)")
    ap.add_argument("--reference-limit", type=float, default=10.0, help="--bayes: the reference's time limit (s)")
    args = ap.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    counts, methods, rows, lines = Counter(), Counter(), [], []
    t0 = time.perf_counter()
    for i in range(args.n):
        p = bayes_problem(rng) if args.bayes else problem(rng)
        limit = float(10.0 ** (rng.uniform(-2, np.log10(5.0)) if args.bayes else rng.uniform(-3, np.log10(2.0))))
        print(f"{i}: d={p.d} {'+'.join(n.name for n in p.privacy)} {p.utility.kind}", end=" ", file=sys.stderr, flush=True)
        t = time.perf_counter()
        ref = co.solve(p, time_limit=args.reference_limit) if args.bayes else co.solve(p)
        t_ref = time.perf_counter() - t
        t = time.perf_counter()
        r = co.solve(p, time_limit=limit)
        t = time.perf_counter() - t
        print(f"reference {ref.status} {t_ref:.1f} s, "
              f"limit {limit:.3g} s: {r.status} ({r.method}) {t:.2f} s", file=sys.stderr, flush=True)
        counts[r.status] += 1
        if r.status == "local":
            methods[r.method] += 1
        bad = check(p, r)
        bound = r.certificate.bound if r.certificate is not None and r.certificate.bound is not None else np.nan
        if args.bayes:
            bad += check(p, ref) + cross_check(p, r, ref)
        elif ref.status == "optimal" and r.objective is not None:
            tol = 1e-9 * max(1.0, abs(ref.objective))
            if r.objective < ref.objective - tol:
                bad.append(f"objective {r.objective:.10g} below the optimum {ref.objective:.10g}")
            if bound > ref.objective + tol:
                bad.append(f"bound {bound:.10g} above the optimum {ref.objective:.10g}")
        row = {"i": i, "d": p.d, "notions": "+".join(n.name for n in p.privacy), "utility": p.utility.kind,
               "limit_s": limit, "time_s": t, "status": r.status, "method": r.method,
               "objective_over_optimum": r.objective / ref.objective if ref.status == "optimal" and ref.objective else np.nan,
               "bound_over_optimum": bound / ref.objective if ref.status == "optimal" and ref.objective else np.nan,
               "violations": "; ".join(bad), "message": (r.message or "")[:160]}
        rows.append(row)
        if bad:
            lines.append(f"{i}: {r.status} d={p.d} {row['notions']} {row['utility']} limit={limit:.3g}: {row['violations']}")
    local = [r for r in rows if r["status"] == "local" and np.isfinite(r["objective_over_optimum"])]
    summary = [f"{args.n} problems, {time.perf_counter() - t0:.0f} s (seed {args.seed})",
               "statuses: " + ", ".join(f"{k} {v}" for k, v in counts.most_common()),
               "local results by method: " + ", ".join(f"{k} {v}" for k, v in methods.most_common()),
               f"local, median objective / optimum {np.median([r['objective_over_optimum'] for r in local]):.6g}, "
               f"bound / optimum {np.nanmedian([r['bound_over_optimum'] for r in local]):.6g}" if local else "",
               f"violations: {sum(1 for r in rows if r['violations'])}", ""]
    report(Path(args.out), "fuzz_limit_bayes" if args.bayes else "fuzz_limit", "\n".join(summary + lines) + "\n", rows)


if __name__ == "__main__":
    main()
