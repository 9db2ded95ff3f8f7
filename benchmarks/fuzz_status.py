"""How often is a status less than `optimal`, and is every status true? A fuzz over problems
unlike the test suite's: budgets up to 700, prior entries down to 1e-9, values and offsets far
from 0..d-1, one or two notions, every utility.

    python benchmarks/fuzz_status.py [--n 1000] [--seed 0] [--out benchmarks/results]

For every result it checks, independently of channelopt's own code where possible:
  optimal    -> the audited channel's objective is within 1e-7 (relative) of the certificate's
                bound (a Bayes utility's gap in gain units, as the status rule says), the
                channel passes the audit;
  infeasible -> a certificate channelopt checked (farkas or structural);
  any channel-> objective = the utility recomputed from the channel.
It prints the status counts, every violation (there should be none), and the `inaccurate` /
`solver-failed` cases with their conditioning (largest budget, smallest prior entry), and writes
fuzz_status.{txt,csv}.
"""

from __future__ import annotations

import argparse
import csv
import time
from collections import Counter
from pathlib import Path

import numpy as np

import channelopt as co
from channelopt.notions import NOTIONS, parse_notion

LINEAR = ["hamming", "mae", "squared"]
BAYES = ["bayes-mse", "histogram-mse", "mutual-information", "map"]
SIMPLE = ["ldp", "lip", "di", "id-ldp", "pufferfish", "bp-lip", "metric-ldp", "alip", "mil", "approx-lip"]


def budget(rng) -> float:
    return float(rng.choice([rng.uniform(0.01, 5), rng.uniform(5, 40), rng.choice([100.0, 300.0, 700.0])],
                            p=[0.6, 0.3, 0.1]))


def prior(rng, d) -> np.ndarray:
    p = rng.dirichlet(np.ones(d))
    if rng.random() < 0.4:   # tiny entries
        k = rng.integers(1, max(2, d // 2))
        p[rng.choice(d, size=k, replace=False)] = 10.0 ** rng.uniform(-9, -4, size=k)
    return p / p.sum()


def problem(rng) -> co.Problem:
    bayes = rng.random() < 0.4
    d = int(rng.integers(2, 6 if bayes else 12))
    P = prior(rng, d)
    values = None
    if rng.random() < 0.5:
        values = (rng.choice([0.0, 1e5, -1e6]) + rng.choice([1e-3, 1.0, 1e4]) * np.cumsum(rng.uniform(0.1, 3, d)))
    kinds = [k for k in SIMPLE if not bayes or NOTIONS[k].homogeneous]
    privacy = []
    for _ in range(int(rng.integers(1, 3))):
        name = str(rng.choice(kinds))
        table = NOTIONS[name].example(d, budget(rng), rng)
        for key in NOTIONS[name].budget_keys:
            table[key] = budget(rng)
        privacy.append(parse_notion(table, "privacy[0]"))
    if bayes:
        kind = str(rng.choice(BAYES))
        util = co.Bayes(kind, offset=float(rng.choice([0.0, 1e6, 1e12]))) if kind == "bayes-mse" else co.Bayes(kind)
    else:
        util = co.Distortion(str(rng.choice(LINEAR)))
    return co.Problem(prior=P, values=values, privacy=privacy, utility=util)


def check(p: co.Problem, r: co.Result) -> list[str]:
    bad = []
    if r.status == "infeasible" and (r.certificate is None or r.certificate.method not in ("farkas", "structural")):
        bad.append("infeasible without a checked certificate")
    if r.channel is not None and r.status in ("optimal", "local"):
        q = r.full_channel                 # over all m outputs (unused ones are dropped from r.channel)
        if q.shape != (p.d, p.m):
            bad.append(f"channel over {q.shape[1]} outputs, not the problem's {p.m}")
        else:
            if not co.audit(p, q).ok:
                bad.append("returned channel fails the audit")
            if abs(r.objective - p.utility.evaluate(p, q)) > 1e-9 * max(1.0, abs(r.objective)):
                bad.append("objective is not the channel's")
    if r.status == "optimal" and r.certificate is not None and r.certificate.bound is not None:
        unit, gain = gain_units(p, r.objective)
        if abs(r.objective - r.certificate.bound) / unit > 1e-7 * max(1.0, abs(gain)) * (1 + 1e-9):
            bad.append(f"optimal with gap {abs(r.objective - r.certificate.bound):.3g}")
    return bad


def gain_units(p: co.Problem, objective: float) -> tuple[float, float]:
    """(one gain unit in the objective's units, the objective in gain units): the status rule
    (docs/reliability.md) compares a Bayes utility's gap in gain units, free of the values'
    scale (bayes-mse: one unit is the prior variance of the target). Read off the utility's
    affine map from gains to objectives; a distortion is its own gain."""
    if not hasattr(p.utility, "from_gain"):
        return 1.0, objective
    f0, f1 = p.utility.from_gain(p, 0.0), p.utility.from_gain(p, 1.0)
    return abs(f1 - f0), (objective - f0) / (f1 - f0)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=str(Path(__file__).parent / "results"))
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    counts, rows, lines = Counter(), [], []
    t0 = time.perf_counter()
    for i in range(args.n):
        try:
            p = problem(rng)
        except co.ProblemError:
            counts["rejected input"] += 1
            continue
        t1 = time.perf_counter()
        try:
            r = co.solve(p, bayes_options={"starts": 3}, time_limit=30)
        except co.ChannelOptError as e:
            counts[f"error {type(e).__name__}"] += 1
            lines.append(f"{i}: error {e}")
            continue
        dt = time.perf_counter() - t1
        counts[r.status] += 1
        bad = check(p, r)
        eps_max = max(float(np.max(np.ravel(b))) for n in p.privacy for b in n.budgets().values()) if any(
            n.budgets() for n in p.privacy) else float("nan")
        row = {"i": i, "d": p.d, "notions": "+".join(n.name for n in p.privacy), "utility": p.utility.kind,
               "eps_max": eps_max, "prior_min": float(p.prior.min()), "status": r.status, "time_s": dt,
               "violations": "; ".join(bad), "message": r.message[:160]}
        rows.append(row)
        if bad or r.status in ("inaccurate", "solver-failed"):
            lines.append(f"{i}: {row['status']:<13} d={p.d} {row['notions']:<22} {row['utility']:<18} "
                         f"eps_max={eps_max:<8.3g} prior_min={row['prior_min']:.1e} {row['violations']} | {row['message']}")
    n = sum(v for k, v in counts.items() if k != "rejected input")
    summary = [f"{args.n} problems drawn, {n} solved in {time.perf_counter() - t0:.0f} s (seed {args.seed})",
               "statuses: " + ", ".join(f"{k} {v} ({100 * v / max(n, 1):.1f}%)" for k, v in counts.most_common()),
               f"violations: {sum(1 for r in rows if r['violations'])}",
               f"slowest: {max((r['time_s'] for r in rows), default=0):.1f} s", ""]
    report(Path(args.out), "fuzz_status", "\n".join(summary + lines) + "\n", rows)


def report(out: Path, name: str, text: str, rows: list[dict]) -> None:
    """Print a fuzz's summary and write it to out/name.txt, its rows to out/name.csv."""
    print(text)
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{name}.txt").write_text(text)
    with open(out / f"{name}.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)


if __name__ == "__main__":
    main()
